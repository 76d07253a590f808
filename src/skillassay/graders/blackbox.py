"""Black-box hidden tests, the harness's side (docs/agent-evals.md, "Black-box hidden tests"): pass or fail is
decided by a process in which no code of the workspace ever runs.

- The judging process is the harness's own interpreter and pytest (``python -I -B``: no ``PYTHONPATH``,
  ``PYTHONSTARTUP``, user site or current folder; no plugin autoloading; an ini file of the harness's), run on
  the eval's hidden tests folder where it lies, its JUnit report written in a folder of the harness's that no
  sandbox mounts. It loads ``blackbox_plugin`` (the ``app`` fixture) and the hidden folder's own conftest
  only.
- Each call of ``app`` comes here over a Unix socket in a private folder and runs in a new child: sealed as
  the tests phase is (``ProcessContext.sealed``), in the app's own environment, on the copy of the modified
  workspace (``blackbox_child``). The child's answer is one line on its stdout, behind a secret of the call's,
  bounded in size and time; anything else (a crash, a hang, garbage, an answer too large, a forged line) fails
  the call.
- A failed call is the agent's doing when the same call runs on the pristine app; when it cannot run there
  either, the harness cannot measure the app (``HarnessFault``).
"""

from __future__ import annotations

import contextlib
import io
import json
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, cast

from skillassay import reaper
from skillassay.graders.appenv import AppEnv
from skillassay.graders.base import ProcessContext, command_env, copy_workspace
from skillassay.isolation import IsolationError, Sandbox

MAX_RESULT = 1 << 20  # bytes a child may answer
MAX_REQUEST = 4 << 20  # bytes of one request of the judging process (a scenario module's text)
ERR_TAIL = 600
HERE = Path(__file__).parent
CHILD_SOURCE = (HERE / "blackbox_child.py").read_text()
PLUGIN = HERE / "blackbox_plugin.py"  # never imported by the harness (it imports pytest)
SOCKET_VARIABLE = "SKILLASSAY_BLACKBOX_SOCKET"  # the same names as blackbox_plugin's
TOKEN_VARIABLE = "SKILLASSAY_BLACKBOX_TOKEN"
# the judging process: the plugin loaded by file, then pytest (the package's __init__ would import half the
# harness)
BOOTSTRAP = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('skillassay_blackbox_plugin', sys.argv[1])\n"
    "plugin = importlib.util.module_from_spec(spec)\n"
    "sys.modules[spec.name] = plugin\n"
    "spec.loader.exec_module(plugin)\n"
    "import pytest\n"
    "raise SystemExit(pytest.main(sys.argv[2:], plugins=[plugin]))\n"
)


@dataclass
class Answer:
    """What one call of the app gave: ``returned`` or ``raised`` (the app answered), or ``failed`` (why
    not).
    """

    returned: Any = None
    raised: dict[str, Any] | None = None
    failed: str | None = None

    @property
    def message(self) -> dict[str, Any]:
        if self.failed is not None:
            return {"failed": self.failed}
        return {"raised": self.raised} if self.raised is not None else {"returned": self.returned}


def judge_command(hidden: Path, rootdir: Path, report_dir: Path, env: dict[str, str]) -> str:
    """The judging process's command line (run in ``report_dir``, a folder of the harness's; ``run_pytest``
    adds the JUnit report there) with the variables ``env``: the harness's interpreter, isolated, on
    ``hidden`` where it lies."""
    ini = report_dir / "judge.ini"
    ini.write_text("[pytest]\n")
    argv = [
        sys.executable,
        "-I",
        "-B",
        "-c",
        BOOTSTRAP,
        str(PLUGIN),
        "-q",
        "-p",
        "no:cacheprovider",
        "-c",
        str(ini),
        "--rootdir",
        str(rootdir),
        "--confcutdir",
        str(hidden),
        str(hidden),
    ]
    assignments = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env}
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in assignments.items()) + " " + shlex.join(argv)


def call_child(
    box: Sandbox, workdir: Path, app: AppEnv, request: dict[str, Any], pythonpath: list[str], timeout: float
) -> Answer:
    """Perform one call (``kind`` "run" or "call", as ``blackbox_plugin`` sends it) in a new child sealed in
    ``box`` on ``workdir``. Never raises for what the child does; raises IsolationError when the sandbox
    failed."""
    secret = secrets.token_hex(16)
    fields = {
        k: request[k]
        for k in ("kind", "target", "source", "filename", "function", "args", "kwargs")
        if k in request
    }
    payload = json.dumps({**fields, "secret": secret, "pythonpath": [str(workdir / p) for p in pythonpath]})
    with tempfile.TemporaryFile() as err:
        try:
            proc = box.popen(
                ["python", "-I", "-B", "-c", CHILD_SOURCE],
                cwd=workdir,
                env=command_env(None, app, workdir),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        except FileNotFoundError as exc:
            return Answer(failed=f"the child could not start: {exc}")
        with reaper.tracked(proc, grace=0.5):
            out, state = _talk(proc, payload.encode(), timeout)
        if state != "timed out" and (problem := box.setup_error(proc)):
            raise IsolationError(problem)
        err.seek(0)
        tail = err.read()[-4000:].decode(errors="replace").strip()[-ERR_TAIL:]
    if state != "ended":
        return Answer(failed=f"the child {state}")
    return _decode(out, secret, proc.returncode, tail)


def _talk(proc: subprocess.Popen[bytes], payload: bytes, timeout: float) -> tuple[bytes, str]:
    """Send the request, read the answer: (what it wrote, "ended" | "timed out" | "answered too much")."""
    stdin, stdout = proc.stdin, cast("io.BufferedReader | None", proc.stdout)
    if stdin is None or stdout is None:
        raise ValueError("the child was started without pipes for its stdin and stdout")
    chunks: list[bytes] = []
    too_much = threading.Event()

    def write() -> None:
        try:
            stdin.write(payload)
            stdin.close()
        except OSError:  # it did not read its request: its answer says so
            pass

    def read() -> None:
        size = 0
        while chunk := stdout.read1(1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESULT:
                too_much.set()
                return

    threads = [threading.Thread(target=write, daemon=True), threading.Thread(target=read, daemon=True)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and not too_much.is_set() and time.monotonic() < deadline:
        too_much.wait(0.02)
    state = "answered too much" if too_much.is_set() else "ended" if proc.poll() is not None else "timed out"
    if state == "ended":
        threads[1].join(timeout=max(0.5, deadline - time.monotonic()))
        state = "ended" if not threads[1].is_alive() else "left a process holding its output"
    return b"".join(chunks), state


def _decode(out: bytes, secret: str, exit_code: int | None, err_tail: str) -> Answer:
    said = f" (exit code {exit_code}; its stderr: {err_tail or 'empty'})"
    prefix = secret.encode()
    if exit_code != 0 or not out.startswith(prefix) or not out.endswith(b"\n") or out.count(b"\n") != 1:
        return Answer(failed="gave no answer" + said)
    try:
        message = json.loads(out[len(prefix) :])
    except (ValueError, RecursionError):
        return Answer(failed="gave an answer that is not JSON" + said)
    if not isinstance(message, dict) or len(message) != 1:
        return Answer(failed="gave an answer of the wrong shape" + said)
    if "unjsonable" in message:
        return Answer(failed=f"returned what JSON cannot carry: {str(message['unjsonable'])[:300]}")
    if isinstance(message.get("raised"), dict):
        info = message["raised"]
        return Answer(
            raised={
                "type": str(info.get("type", "")),
                "module": str(info.get("module", "")),
                "bases": [str(b) for b in info.get("bases", [])][:64],
                "message": str(info.get("message", "")),
            }
        )
    if "returned" in message:
        return Answer(returned=message["returned"])
    return Answer(failed="gave an answer of the wrong shape" + said)


@dataclass
class Broker:
    """Serves the judging process's calls of the app over a Unix socket (a private folder of the harness's,
    which no sandbox mounts); each call in a new child sealed in ``box`` on ``workdir``."""

    box: Sandbox
    workdir: Path
    app: AppEnv
    pythonpath: list[str]
    call_timeout: float
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    calls: int = 0
    failures: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (request, why) of failed calls
    harness_error: str | None = None

    def __enter__(self) -> Self:
        self._dir = Path(tempfile.mkdtemp(prefix="sa-bb-"))  # short: a socket's path has at most 107 bytes
        self.path = self._dir / "s"
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(str(self.path))
        self._server.listen(4)
        self._server.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._server.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def environment(self) -> dict[str, str]:
        return {SOCKET_VARIABLE: str(self.path), TOKEN_VARIABLE: self.token}

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        data = b""
        try:
            while len(data) <= MAX_REQUEST and (chunk := conn.recv(1 << 16)):
                data += chunk
            request = json.loads(data)
        except (OSError, ValueError):
            return
        if not isinstance(request, dict) or request.get("token") != self.token:
            return
        answer = self._call(request)
        with contextlib.suppress(OSError, ValueError, RecursionError):
            conn.sendall(json.dumps(answer.message).encode())

    def _call(self, request: dict[str, Any]) -> Answer:
        self.calls += 1
        try:
            answer = call_child(self.box, self.workdir, self.app, request, self.pythonpath, self.call_timeout)
        except IsolationError as exc:
            self.harness_error = self.harness_error or str(exc)
            return Answer(failed=f"the sandbox failed: {exc}")
        if answer.failed is not None:
            self.failures.append((request, answer.failed))
        return answer


def runs_on_pristine(
    ctx: ProcessContext, request: dict[str, Any], pythonpath: list[str], timeout: float, name: str
) -> Answer:
    """The same call on a copy of the pristine app, in the pristine app's environment: whether the harness can
    measure the app at all (a returned value or a raised exception both say it can)."""
    app = ctx.app_env("pristine")
    workdir = copy_workspace(ctx.pristine_dir, ctx.work_dir / f"{name}-pristine")
    with ctx.sealed("tests", workdir, app) as box:
        return call_child(box, workdir, app, request, pythonpath, timeout)
