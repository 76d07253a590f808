"""Serve a built report on 127.0.0.1 (the standard library's http.server in a thread). Adds the same
Content-Security-Policy the pages carry, as a header, and serves nothing outside the site folder.

With ``live`` (a results root), also the live job view (``report/live.py``): its page at ``/live/`` and its
state at ``/live/state.json``, with an ETag (an unchanged state is a 304 of headers only). Without a site,
``/`` leads to the live view and nothing else is served."""

from __future__ import annotations

import functools
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from skillassay.report.site import CSP

LIVE_PREFIX = "/live/"


class _Handler(SimpleHTTPRequestHandler):
    live = None  # a report.live.LiveStates, when the live view is served
    has_site = True
    csp = CSP

    def translate_path(self, path: str) -> str:
        # the standard handler drops ".." but follows links: a link in a copied run tree could lead anywhere
        local = super().translate_path(path)
        root = Path(self.directory).resolve()
        real = Path(local).resolve()
        if not self.has_site or (real != root and not real.is_relative_to(root)):
            return str(root / ".refused-outside-the-site")  # does not exist: 404
        return str(real)

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", self.csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if not self._live(head=False):
            super().do_GET()

    def do_HEAD(self) -> None:
        if not self._live(head=True):
            super().do_HEAD()

    def _live(self, head: bool) -> bool:
        """Answer a request of the live view; False when it is not one."""
        path = self.path.split("?", 1)[0]
        self.csp = CSP
        if self.live is None:
            return False
        if (path == "/" and not self.has_site) or path == LIVE_PREFIX.rstrip("/"):
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", LIVE_PREFIX)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        from skillassay.report.live import LIVE_CSP, LIVE_PAGE, etag

        if path in (LIVE_PREFIX, LIVE_PREFIX + "index.html"):
            self.csp = LIVE_CSP
            self._send(LIVE_PAGE, "text/html; charset=utf-8", head)
            return True
        if path == LIVE_PREFIX + "state.json":
            body = self.live.body()
            tag = etag(body)
            if tag in [t.strip() for t in self.headers.get("If-None-Match", "").split(",")]:
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self.send_header("ETag", tag)
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                return True
            self._send(body, "application/json", head, extra={"ETag": tag, "Cache-Control": "no-cache"})
            return True
        return False

    def _send(self, body: bytes, kind: str, head: bool, extra: dict[str, str] | None = None) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Skillassay-Now", str(int(time.time() * 1000)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)


def start(
    site_dir: Path | str | None, port: int = 0, host: str = "127.0.0.1", live: Path | str | None = None
) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Start serving in a daemon thread; ``server.server_address`` has the port (0 = a free one). ``live``: a
    results root whose jobs' live view is served at ``/live/`` too (``site_dir`` None: that view only)."""
    states = None
    if live is not None:
        from skillassay.report.live import LiveStates

        states = LiveStates(Path(live))
    # without a site, an empty folder stands in (nothing in it is ever served: has_site is False)
    root = Path(site_dir).resolve() if site_dir is not None else Path(tempfile.gettempdir())
    handler_class = type("Handler", (_Handler,), {"live": states, "has_site": site_dir is not None})
    handler = functools.partial(handler_class, directory=str(root))
    server = ThreadingHTTPServer((host, port), handler)
    thread = threading.Thread(target=server.serve_forever, name="skillassay-serve", daemon=True)
    thread.start()
    return server, thread
