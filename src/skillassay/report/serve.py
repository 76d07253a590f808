"""Serve a built report on 127.0.0.1 (the standard library's http.server in a thread). Adds the same
Content-Security-Policy the pages carry, as a header, and serves nothing outside the site folder."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from skillassay.report.site import CSP


class _Handler(SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        # the standard handler drops ".." but follows links: a link in a copied run tree could lead anywhere
        local = super().translate_path(path)
        root = Path(self.directory).resolve()
        real = Path(local).resolve()
        if real != root and not real.is_relative_to(root):
            return str(root / ".refused-outside-the-site")  # does not exist: 404
        return str(real)

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def start(
    site_dir: Path | str, port: int = 0, host: str = "127.0.0.1"
) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Start serving in a daemon thread; ``server.server_address`` has the port (0 = a free one)."""
    handler = functools.partial(_Handler, directory=str(Path(site_dir).resolve()))
    server = ThreadingHTTPServer((host, port), handler)
    thread = threading.Thread(target=server.serve_forever, name="skillassay-serve", daemon=True)
    thread.start()
    return server, thread
