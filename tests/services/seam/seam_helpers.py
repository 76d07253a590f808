"""Helpers for the Seam emulator tests: run the npm/PyPI SDKs in their own processes, receive webhooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillassay.seam.emulator.emulator import SeamEmulator

REPO = Path(__file__).resolve().parents[3]
NODE_MODULES = Path(os.environ.get("SKILLASSAY_NODE_DIR") or REPO / "node" / "node_modules")
if (NODE_MODULES / "node_modules").is_dir():
    NODE_MODULES = NODE_MODULES / "node_modules"
NODE_SCRIPTS = Path(__file__).resolve().parent / "node"
FAST = 0.2  # async_delay for most tests: codes still go setting -> set, quickly


def admin_headers(emulator: SeamEmulator) -> dict[str, str]:
    """What the harness presents on ``/_emulator``: the admin credential of this emulator start."""
    return {"authorization": f"Bearer {emulator.admin_token}"}


def require_node_package(name: str) -> Path:
    """node on PATH and ``node/node_modules/<name>``: a missing one fails the test (never a skip, in CI or
    not).
    """
    if shutil.which("node") is None or not (NODE_MODULES / name).is_dir():
        pytest.fail(f"node and node/node_modules/{name} are required: run `npm ci --prefix node`")
    return NODE_MODULES / name


def run_node(
    script: str,
    emulator: SeamEmulator,
    api_key: str,
    extra_env: dict[str, str] | None = None,
    timeout: float = 60,
) -> Any:
    """Run tests/services/seam/node/<script> with the npm SDK; it prints one JSON document on stdout."""
    require_node_package("seam")
    env = {
        **os.environ,
        "SEAM_ENDPOINT": emulator.base_url,
        "SEAM_API_KEY": api_key,
        "SEAM_MODULE": (NODE_MODULES / "seam" / "index.js").as_uri(),
        "SEAM_WEBHOOK_MODULE": (NODE_MODULES / "@seamapi" / "webhook" / "index.js").as_uri(),
        **(extra_env or {}),
    }
    env.pop("SEAM_API_URL", None)
    proc = subprocess.run(
        ["node", str(NODE_SCRIPTS / script)], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"node {script} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_python(code: str, emulator: SeamEmulator, api_key: str, timeout: float = 60) -> Any:
    """Run a script with the venv's PyPI ``seam`` in its own process; it prints one JSON document."""
    env = {**os.environ, "SEAM_ENDPOINT": emulator.base_url, "SEAM_API_KEY": api_key}
    env.pop("SEAM_API_URL", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"python script failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


class WebhookReceiver:
    """A local endpoint that records every POST (raw body and headers), answering 204."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                with receiver._lock:
                    receiver.received.append(
                        {"body": body, "headers": {k.lower(): v for k, v in self.headers.items()}}
                    )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/seam"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(r["body"]) for r in self.received]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
