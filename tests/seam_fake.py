"""Seam's own fake of the API (npm ``@seamapi/fake-seam-connect``, a test dependency in node/package.json),
started on a free loopback port, seeded, offline; and ``MethodShim``, which lets the current SDKs' HTTP
methods reach it.

The fake (1.86.0) serves each route on POST with a JSON body (and GET with a query string on list/get); the
SDKs send PATCH for updates and DELETE with a query string for deletes, which it answers 405 and 404 (both in
tests/services/seam/seam_differences.json). The shim turns those two into the POST the fake reads and records
each one it turned, so a test can check that every difference it bridged is in the table.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = Path(os.environ.get("SKILLASSAY_NODE_DIR") or REPO / "node" / "node_modules")
if (NODE_MODULES / "node_modules").is_dir():
    NODE_MODULES = NODE_MODULES / "node_modules"
FAKE_PACKAGE = NODE_MODULES / "@seamapi" / "fake-seam-connect"
FAKE_SERVER = FAKE_PACKAGE / "dist" / "server.js"
FAKE_KEY = "seam_apikey1_token"  # the key `--seed` creates


@dataclass
class Server:
    name: str  # "fake" | "emulator" | "fake (shimmed)"
    endpoint: str
    api_key: str
    rewritten: list[tuple[str, str]] = field(default_factory=list)  # (method, path) the shim turned into POST


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_available() -> str | None:
    """Why the fake cannot run here (None when it can)."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not FAKE_SERVER.is_file():
        return f"{FAKE_SERVER} is missing: run `npm ci --prefix node`"
    return None


def fake_routes() -> set[str]:
    """The public routes the installed fake serves, read from its bundle's route table (not its ``/_fake``,
    ``/internal`` or ``/seam`` console routes)."""
    bundle = next((FAKE_PACKAGE / "dist").glob("chunk-*.js")).read_text()
    routes = re.findall(r'^  "/api(/[a-z_/]+)": \{', bundle, flags=re.MULTILINE)
    return {r for r in routes if not r.startswith(("/_", "/internal/", "/seam/", "/health"))}


@contextmanager
def seam_fake(timeout: float = 30.0) -> Iterator[Server]:
    """Seam's fake, seeded, on a free loopback port, for the duration of the block."""
    problem = fake_available()
    if problem:
        raise RuntimeError(problem)
    port = free_port()
    env = {**os.environ, "PORT": str(port), "NODE_ENV": "production"}
    proc = subprocess.Popen(
        ["node", str(FAKE_SERVER), "--seed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(proc, url, timeout)
        yield Server("fake", url, FAKE_KEY)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"Seam's fake exited with {proc.returncode}: {err[-500:]}")
        try:
            if httpx.get(url + "/health", timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"Seam's fake did not answer on {url} within {timeout} s")
        time.sleep(0.1)


def query_to_body(query: str) -> dict[str, Any]:
    """A Seam SDK query string as the JSON body it stands for (repeated keys: a list; ``_strict`` dropped)."""
    body: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "_strict":
            continue
        if key in body:
            body[key] = [*body[key], value] if isinstance(body[key], list) else [body[key], value]
        else:
            body[key] = value
    return body


@contextmanager
def method_shim(fake: Server) -> Iterator[Server]:
    """A loopback proxy in front of ``fake``: PATCH/PUT become POST, DELETE's query string becomes a POST
    body; everything else passes as it came."""
    shimmed = Server("fake (shimmed)", "", fake.api_key)
    client = httpx.Client(base_url=fake.endpoint, trust_env=False, timeout=30.0)

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            parts = urlsplit(self.path)
            raw = self._body()
            method, content, url = self.command, raw, self.path
            if method in ("PATCH", "PUT", "DELETE"):
                shimmed.rewritten.append((method, parts.path))
                body = json.loads(raw) if raw else {}
                if method == "DELETE":
                    body = {**query_to_body(parts.query), **body}
                method, content, url = "POST", json.dumps(body).encode(), parts.path
            headers = {
                k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")
            }
            if method == "POST":
                headers["content-type"] = "application/json"
            r = client.request(method, url, content=content, headers=headers)
            self.send_response(r.status_code)
            for k in ("content-type", "seam-request-id"):
                if k in r.headers:
                    self.send_header(k, r.headers[k])
            self.send_header("content-length", str(len(r.content)))
            self.end_headers()
            self.wfile.write(r.content)

        def _body(self) -> bytes:
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                # Next.js's fetch streams a request body: no content-length, chunked
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length else b""

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    shimmed.endpoint = f"http://127.0.0.1:{srv.server_address[1]}"
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield shimmed
    finally:
        srv.shutdown()
        srv.server_close()
        client.close()
