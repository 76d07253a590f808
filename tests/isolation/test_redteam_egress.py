"""Red team: the egress proxy and the bridges, as a sealed process reaches them (any bytes on the wire)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from parts import needs

from skillassay.isolation.egress import EgressProxy


def _local_address() -> str | None:
    """This machine's own non-loopback address (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.123", 9))
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


LOCAL = _local_address()


class _Hosts(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.hosts.append(self.headers.get_all("Host"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    """An allowed host: a server on this machine's own address (a registry stands there in a real run)."""
    srv = ThreadingHTTPServer(("0.0.0.0", 0), _Hosts)
    srv.hosts = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _ask(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


@needs(LOCAL is not None, "a network interface with a non-loopback address")
def test_plain_http_goes_to_the_allowed_host_whatever_host_header_came(site):
    """An absolute-form request to an allowed host, with ``Host: other-site``: a CDN in front of the registry
    routes by the Host header, so the request reached any site the CDN serves (domain fronting over plain
    HTTP)."""
    allowed = f"{LOCAL}:{site.server_address[1]}"
    proxy = EgressProxy([allowed])
    port = proxy.start()
    try:
        answer = _ask(
            port,
            f"GET http://{allowed}/simple/ HTTP/1.1\r\nHost: other-site.example\r\n"
            f"host: third.example\r\n\r\n".encode(),
        )
    finally:
        proxy.close()
    assert answer.startswith((b"HTTP/1.0 200", b"HTTP/1.1 200")), answer[:200]
    assert site.hosts == [[allowed]]


def test_a_flood_of_connections_costs_the_harness_bounded_threads():
    """Thousands of idle connections to a bridge or the egress proxy cost the harness a thread or two each (no
    limit): a sealed process could exhaust the harness's threads, and every run of the job with it."""
    proxy = EgressProxy([])
    port = proxy.start()
    before = threading.active_count()
    held = []
    try:
        for _ in range(400):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(0.5)
        peak = threading.active_count() - before
        closed = 0
        for s in held:
            s.settimeout(0.05)
            with contextlib.suppress(TimeoutError):
                closed += s.recv(1) == b""
    finally:
        for s in held:
            s.close()
        proxy.close()
    assert peak <= 260, f"{peak} harness threads for 400 connections"
    assert closed >= 400 - 256


def test_refusals_kept_are_bounded():
    """A scan of many distinct hosts is recorded, but as a bounded list (process.json, the harness's
    memory).
    """
    proxy = EgressProxy([])
    port = proxy.start()
    try:
        for i in range(400):
            _ask(port, f"CONNECT host-{i}.example:443 HTTP/1.1\r\n\r\n".encode())
        refused = proxy.refused
    finally:
        proxy.close()
    assert len(refused) <= 250
    assert sum(r.count for r in refused) == 400
