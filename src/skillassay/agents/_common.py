"""What the agent modules share: running a program in its own process group under a time limit, reading a
skill folder, keeping secrets out of stored files. (Finding a CLI and its environment:
``agents/installed.py``.)"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Self

from skillassay import reaper
from skillassay.agents.stream import StreamWatch, read_jsonl_numbered
from skillassay.isolation import Mount
from skillassay.reaper import group_alive, group_members, kill_group  # noqa: F401 - group_members re-exported
from skillassay.secrets import redact, secret_values
from skillassay.skills import Skill, SkillError, load_skill  # noqa: F401 - re-exported for the agents

# Environment switches that keep Claude Code from talking to anything but its model endpoint.
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
}


def package_mount(binary: str | None) -> list[Mount]:
    """The ``node_modules`` folder an npm-installed CLI lives in (its ``.bin`` link and the package it points
    to), read-only in the sandbox; nothing for a binary under /usr, which the sandbox shows anyway."""
    if not binary:
        return []
    path = Path(shutil.which(binary) or binary)
    if not path.exists():
        return []
    real = path.resolve()
    for candidate in (path, real):
        for parent in candidate.parents:
            if parent.name == "node_modules":
                return [] if str(parent).startswith("/usr/") else [Mount(src=parent)]
    return [] if str(real).startswith("/usr/") else [Mount(src=real.parent)]


# -- skills --------------------------------------------------------------------------------------------------


def install_skill(skill: Skill, skills_root: Path) -> Path:
    """Copy the skill folder to ``<skills_root>/<name>/`` (where a CLI discovers personal skills)."""
    target = skills_root / skill.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(skill.path, target, ignore=shutil.ignore_patterns(".git", "__pycache__", "node_modules"))
    return target


def skill_prompt_block(skill: Skill) -> str:
    return f"[SKILL INSTRUCTIONS]\n{skill.text.strip()}\n[/SKILL INSTRUCTIONS]\n\n"


# -- secrets -------------------------------------------------------------------------------------------------


class Scrubber:
    """Removes secret values (from env vars named like keys, or shaped like keys) from text before it is
    stored.
    """

    def __init__(self, env: dict[str, str]):
        self._values = secret_values(env)

    def __call__(self, text: str) -> str:
        return redact(text, self._values)

    def file(self, path: Path) -> None:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            scrubbed = self(text)
            if scrubbed != text:
                path.write_text(scrubbed, encoding="utf-8")


# -- processes -----------------------------------------------------------------------------------------------


MAX_OUTPUT_HEAD = 256 << 20  # bytes of a stream kept from its start
MAX_OUTPUT_TAIL = 16 << 20  # and from its end, when it is longer


class OutputSink:
    """A CLI's stdout or stderr, as the harness keeps it: the process writes into a socket and a thread copies
    what comes into ``path``. Never the file itself: a process the agent starts can reopen its CLI's output
    file through ``/proc/<pid>/fd/1`` (a socket cannot be reopened that way) and write forged lines into
    its own transcript, or blank out the record of what it ran. Past ``MAX_OUTPUT_HEAD`` bytes only the
    last ``MAX_OUTPUT_TAIL`` are kept (a process printing without end fills neither the disk nor the
    harness's memory)."""

    def __init__(self, path: Path, head: int = MAX_OUTPUT_HEAD, tail: int = MAX_OUTPUT_TAIL):
        import socket

        self.path, self.head, self.tail = path, head, tail
        self.child, self._ours = socket.socketpair()
        self._ours.shutdown(socket.SHUT_WR)
        self.dropped = 0
        self._file: BinaryIO | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        self._file = self.path.open("wb", buffering=0)
        self._thread = threading.Thread(target=self._pump, name="skillassay-output", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.started()
        self.finish()

    def started(self) -> None:
        """The process has its copy of the socket (or could not start): the harness's copy goes."""
        if self.child.fileno() != -1:
            self.child.close()

    def _pump(self) -> None:
        from collections import deque

        file = self._file
        assert file is not None, "the pump starts once the file is open"
        written = total = held = 0
        kept: deque[bytes] = deque()
        try:
            while data := self._ours.recv(1 << 16):
                total += len(data)
                if written < self.head:
                    part = data[: self.head - written]
                    file.write(part)
                    written += len(part)
                    data = data[len(part) :]
                if data:
                    kept.append(data)
                    held += len(data)
                    while held - len(kept[0]) >= self.tail:
                        held -= len(kept.popleft())
        except OSError:
            pass
        if kept:
            tail = b"".join(kept)[-self.tail :]
            self.dropped = total - written - len(tail)
            if self.dropped:
                file.write(f"\n[skillassay: {self.dropped} bytes of output left out here]\n".encode())
            file.write(tail)

    def finish(self, wait: float = 5.0) -> None:
        """Wait for the stream's end (every process holding it has exited); stop waiting after ``wait``
        seconds (a leftover unsealed process that still holds it), keep what came, close the file."""
        import socket

        if self._thread is None:
            return
        self._thread.join(wait)
        if self._thread.is_alive():
            with contextlib.suppress(OSError):
                self._ours.shutdown(socket.SHUT_RDWR)
            self._thread.join(2)
        self._thread = None
        self._ours.close()
        if self._file is not None:
            self._file.close()


@dataclass
class ProcessOutcome:
    exit_code: int | None
    timed_out: bool
    duration_s: float
    error: str | None = None  # the binary could not be started (or its sandbox could not: ``sandbox_failed``)
    sandbox_failed: bool = False
    leftover_killed: bool = False  # processes of the group were still alive after the leader exited
    pgid: int | None = None
    stopped: str | None = None  # the watch ended the run early, and why (e.g. "triggered")
    extra: dict = field(default_factory=dict)


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path,
    watch: StreamWatch | None = None,
    sandbox=None,
) -> ProcessOutcome:
    """Run ``argv`` in a new session (its own process group), output to files, stdin from /dev/null; sealed in
    ``sandbox`` (a ``skillassay.isolation.Sandbox``) when one is given.

    At ``timeout`` the whole group is killed. Whatever the group left running after the leader exited is
    killed too, so no agent process outlives its run (sealed, the sandbox's PID namespace ends everything it
    started). With ``watch``, its output is watched while it runs (lines stamped with their time; the group is
    killed early when the watch gives a reason: ``ProcessOutcome.stopped``).
    """
    started = time.monotonic()
    with OutputSink(stdout) as out, OutputSink(stderr) as err:
        try:
            if sandbox is not None:
                proc = sandbox.popen(argv, cwd=cwd, env=env, stdout=out.child, stderr=err.child)
            else:
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out.child.fileno(),
                    stderr=err.child.fileno(),
                    start_new_session=True,
                )
        except OSError as exc:
            return ProcessOutcome(exit_code=None, timed_out=False, duration_s=0.0, error=f"{argv[0]}: {exc}")
        finally:
            out.started()
            err.started()
        # registered while it lives, so a Ctrl-C (which never reaches the agent's own group) can end it;
        # killed on any way out of the block, KeyboardInterrupt included
        with reaper.tracked(proc) as pgid:
            timed_out = False
            stopped = None
            if watch is not None:
                watch.start()
                timed_out, stopped = _watch_until_done(proc, pgid, watch, started + timeout)
            else:
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    kill_group(pgid)
                    proc.wait()
            duration = time.monotonic() - started
            leftover = group_alive(pgid)
            if leftover:
                kill_group(pgid, grace=0.5)
        out.finish()
        err.finish()
    if watch is not None:
        watch.finish()
    setup = sandbox.setup_error(proc) if sandbox is not None and not timed_out else None
    code = proc.returncode
    if sandbox is not None and code is not None and 128 < code <= 128 + 64:
        # bwrap reports a command killed by signal N as exit 128 + N, as a shell does: read it back as the
        # signal
        code = -(code - 128)
    return ProcessOutcome(
        exit_code=None if timed_out or stopped else code,
        timed_out=timed_out,
        duration_s=duration,
        leftover_killed=leftover,
        pgid=pgid,
        stopped=stopped,
        error=setup,  # the sandbox never ran the agent: the harness's failure, not the agent's
        sandbox_failed=setup is not None,
    )


def _watch_until_done(
    proc: subprocess.Popen, pgid: int, watch: StreamWatch, deadline: float
) -> tuple[bool, str | None]:
    """Wait for ``proc``, polling ``watch``; (timed out, why it was stopped early)."""
    while True:
        remaining = deadline - time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(watch.interval, remaining)))
            # ended by itself: a budget it went past between two polls is still why its decision was made (a
            # fast CLI can run all its turns within one poll interval)
            return False, watch.poll()
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            kill_group(pgid)
            proc.wait()
            return True, None
        reason = watch.poll()
        if reason:
            kill_group(pgid)
            proc.wait()
            return False, reason


def read_jsonl(path: Path) -> Iterable[dict]:
    """The JSON objects of a JSONL file; lines that are not JSON objects (a crash message) are skipped."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


def run_jsonl_cli(
    argv: list[str], ctx, env: dict[str, str], raw: Path, stderr: Path, watch: StreamWatch | None = None
):
    """Run an agent CLI that streams JSON lines to stdout into ``raw``. Secrets are scrubbed from what it
    wrote before anything reads it. Returns (outcome, records, scrubber); records are empty when it could
    not start. With ``watch``, ``watch.times`` then holds when each returned record appeared (seconds after
    the start)."""
    scrub = Scrubber(env)
    outcome = run_process(
        argv,
        cwd=ctx.workspace,
        env=env,
        timeout=ctx.timeout,
        stdout=raw,
        stderr=stderr,
        watch=watch,
        sandbox=getattr(ctx, "sandbox", None),
    )
    if outcome.error:
        return outcome, [], scrub
    scrub.file(raw)
    scrub.file(stderr)
    if watch is None:
        return outcome, list(read_jsonl(raw)), scrub
    records, watch.times = watch.times_for(read_jsonl_numbered(raw))
    return outcome, records, scrub


def relative_path(path: str, root: Path | str | None) -> str:
    """``path`` relative to the workspace when it lies inside it, else as given."""
    if not path or root is None:
        return path
    try:
        p = Path(path)
        roots = {Path(root), Path(root).resolve()}
        for r in roots:
            if p.is_absolute() and p.is_relative_to(r):
                return p.relative_to(r).as_posix()
    except (OSError, ValueError):
        pass
    return path
