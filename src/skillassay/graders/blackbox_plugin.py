"""The judging side of black-box hidden tests (docs/agent-evals.md, "Black-box hidden tests"): a pytest plugin
the harness loads into the judging process (its own interpreter, its own pytest), never into the app's.

The fixture ``app`` reaches the app under test through the harness: each call runs in a new child process,
sealed in the app's environment on the modified workspace, and comes back as plain data (JSON), so every
assertion runs
here, where no code of the workspace ever ran::

    from scenarios import cancel_from          # a module of the hidden tests folder (stdlib + the app only)

    def test_cancel(app):
        assert app.run(cancel_from, "paid")["status"] == "cancelled"
        assert app.call("orders.models:can_transition_name", "shipped", "cancelled") is False

A call the app answers by raising raises ``app.Raised`` here (its class name, its bases' names, its message).
A child that crashes, hangs, prints garbage or answers too much fails the test, whatever the test catches.

Loaded by file (standard library and pytest only): importing skillassay's packages here would cost every
judging run their import time.
"""

from __future__ import annotations

import inspect
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

SOCKET_VARIABLE = "SKILLASSAY_BLACKBOX_SOCKET"
TOKEN_VARIABLE = "SKILLASSAY_BLACKBOX_TOKEN"
MAX_ANSWER = 4 << 20  # bytes of one answer of the harness (it bounds the child's to less)
_FAILED = pytest.StashKey[list[str]]()


class Raised(Exception):
    """The app's code raised ``type`` (its class's name; ``bases``: the names of its classes, itself
    first).
    """

    def __init__(self, info: dict[str, Any]):
        self.type = str(info.get("type", ""))
        self.module = str(info.get("module", ""))
        self.bases = [str(b) for b in info.get("bases", [])]
        self.message = str(info.get("message", ""))
        super().__init__(f"{self.type}: {self.message}")

    def is_a(self, name: str) -> bool:
        """The exception is an instance of a class named ``name`` (itself or a base)."""
        return name in self.bases


class App:
    """A handle on the app under test; every call a new sealed child process."""

    Raised = Raised  # what a call raises when the app raised: ``pytest.raises(app.Raised)``

    def __init__(self, item: pytest.Item):
        self._item = item

    def call(self, target: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``"package.module:attr.path"`` of the app with JSON-able arguments; its JSON-able return
        value.
        """
        return self._ask({"kind": "call", "target": target, "args": list(args), "kwargs": kwargs})

    def run(self, scenario: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``scenario``, a module-level function of a module of the hidden tests folder, in the child (its
        whole module is sent as text; it imports the app inside its body): its JSON-able return value."""
        qualname = getattr(scenario, "__qualname__", "")
        if not inspect.isfunction(scenario) or "<locals>" in qualname:
            raise TypeError("app.run takes a module-level function of a module of the hidden tests folder")
        source = Path(inspect.getsourcefile(scenario) or "")
        return self._ask(
            {
                "kind": "run",
                "source": source.read_text(),
                "filename": source.name,
                "function": qualname,
                "args": list(args),
                "kwargs": kwargs,
            }
        )

    def _ask(self, request: dict[str, Any]) -> Any:
        answer = _exchange(
            {**request, "token": os.environ.get(TOKEN_VARIABLE, ""), "test": self._item.nodeid}
        )
        if "returned" in answer:
            return answer["returned"]
        if "raised" in answer:
            raise Raised(answer["raised"])
        why = str(answer.get("failed", "no answer"))
        self._item.stash.setdefault(_FAILED, []).append(why)
        pytest.fail(f"the app's child process failed: {why}", pytrace=False)


def _exchange(request: dict[str, Any]) -> dict[str, Any]:
    path = os.environ.get(SOCKET_VARIABLE)
    if not path:
        raise RuntimeError(f"{SOCKET_VARIABLE} is not set: black-box hidden tests run under skillassay only")
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(1 << 16):
            data += chunk
            if len(data) > MAX_ANSWER:
                return {"failed": "the harness's answer is too large"}
    try:
        answer = json.loads(data)
    except ValueError:
        return {"failed": "the harness gave no answer"}
    return answer if isinstance(answer, dict) else {"failed": "the harness gave no answer"}


@pytest.fixture
def app(request: pytest.FixtureRequest) -> App:
    """The app under test, called in sealed child processes (module docs)."""
    return App(request.node)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A test during which a child failed is failed, even when it caught ``pytest.fail``'s exception."""
    report = yield
    failures = item.stash.get(_FAILED, [])
    if failures and report.when == "call" and not report.failed:
        report.outcome = "failed"
        report.longrepr = f"the app's child process failed: {failures[0]}"
    return report
