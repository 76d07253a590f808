import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skillassay.isolation import get_isolation


def _require(problem: str | None) -> None:
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run sealed: {problem}")  # a missing tool fails CI, never skips
    pytest.skip(problem)


@pytest.fixture
def bubblewrap():
    iso = get_isolation("bubblewrap")
    _require(iso.problem())
    return iso


@pytest.fixture
def strace():
    _require(None if shutil.which("strace") else "strace is not installed")


class _Named(BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.server.name.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    """Start loopback HTTP servers on the host that answer their name: ``listener("model") -> port``."""
    servers = []

    def start(name: str) -> int:
        srv = ThreadingHTTPServer(("127.0.0.1", 0), _Named)
        srv.name = name
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return srv.server_address[1]

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def run_dirs(tmp_path) -> dict[str, Path]:
    """A run's workspace and home, a suite with a golden answer, a results folder, another run's workspace."""
    dirs = {name: tmp_path / name for name in ("ws", "home", "suite", "results", "other-run", "scratch")}
    for d in dirs.values():
        d.mkdir()
    (dirs["suite"] / "test_golden").mkdir()
    (dirs["suite"] / "test_golden" / "answer.py").write_text("ANSWER = 42\n")
    (dirs["results"] / "skillassay.db").write_text("db")
    (dirs["other-run"] / "secret.txt").write_text("other run's work")
    (dirs["ws"] / "app.py").write_text("print('app')\n")
    return dirs
