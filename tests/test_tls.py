"""The harness's HTTP clients share one TLS context (``skillassay.tls``) instead of loading the CA bundle
into a new one per client; the shared context still verifies, and follows the environment it was asked for."""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from skillassay import tls
from skillassay.apps.backends.backend import wait_healthy


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_context_is_built_once_and_verifies():
    a, b = tls.context(False), tls.context(False)
    assert a is b
    assert a.verify_mode == ssl.CERT_REQUIRED and a.check_hostname


def test_a_changed_certificate_setting_gets_its_own_context(monkeypatch, tmp_path):
    import certifi

    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    plain = tls.context(True)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert tls.context(True) is not plain  # the user's bundle, as httpx would have read it
    assert tls.context(False) is tls.context(False)  # a client that ignores the environment is unaffected


def test_polling_an_app_builds_no_context_per_client(monkeypatch):
    built: list[bool] = []
    real = httpx.create_ssl_context

    def counting(*args, **kwargs):
        built.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    tls._built.cache_clear()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/"
        for _ in range(3):
            wait_healthy(url, 5.0, lambda: True, lambda: "")
    finally:
        srv.shutdown()
        srv.server_close()
        tls._built.cache_clear()
    assert len(built) == 1, f"{len(built)} TLS contexts for three health polls"


@pytest.fixture(autouse=True)
def _fresh_cache():
    tls._built.cache_clear()
    yield
    tls._built.cache_clear()
