"""What every process grader and detector shares: results, the grading context (with the run's one ChangeSet,
``workspace.changes``), running commands in copies of a workspace, and glob matching."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay import reaper
from skillassay.definitions.models import EvalDefinition
from skillassay.graders.process.judge_config import JudgeConfig
from skillassay.isolation import IsolationError, Policy, Sandbox, Seal
from skillassay.isolation.runtimes import runtimes
from skillassay.secrets import without_secrets
from skillassay.transcripts import Transcript
from skillassay.workspace.changes import ChangeSet, compare_trees, copy_ignore


class HarnessFault(Exception):
    """A grader or detector could not do its job for a reason that is not the agent's: a command the harness needs
    is missing, the LLM judge's API failed or answered unverifiably. Raised, never turned into points: the engine
    records it as a ``HarnessFailure`` and the run becomes a harness error (docs/results.md)."""


class GradeResult(BaseModel):
    """What a grader decided for one criterion: the share of its weight earned (None = unjudged) and why."""

    fraction: float | None
    evidence: list[str] = Field(default_factory=list)


class Detection(BaseModel):
    """What a detector found for one forbidden behaviour. ``checked`` False: it could not look (no
    transcript...)."""

    observed: bool
    checked: bool = True
    evidence: list[str] = Field(default_factory=list)


GateStatus = Literal["passed", "failed", "unavailable", "not_run"]


class GateResult(BaseModel):
    id: str
    kind: str = "other"
    command: str
    status: GateStatus
    exit_code: int | None = None
    duration_s: float = 0.0
    output: str = ""  # the tail of stdout+stderr
    reason: str = ""
    blocked_by_failure: bool = False  # not_run because a gate it requires failed (the agent's doing)


# ----------------------------------------------------------------------------- globs
@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns: list[str]) -> bool:
    """``path`` (relative, posix) matches one of the globs; ``**`` spans folders, ``*`` does not."""
    return any(_glob_regex(p).match(path) for p in patterns)


# ----------------------------------------------------------------------------- context
@dataclass
class ProcessContext:
    definition: EvalDefinition
    pristine_dir: Path
    modified_dir: Path
    transcript: Transcript | None
    work_dir: Path
    judge_config: JudgeConfig | None = None
    gates: dict[str, GateResult] = field(default_factory=dict)
    _change: ChangeSet | None = None  # the run's ChangeSet, passed in; computed on first use otherwise
    _cache: dict[str, Any] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)  # how commands are sealed (skillassay.isolation)
    sealing: Any = None  # orchestrator.sealing.Sealing: each sandbox's record, when the run keeps them

    @property
    def change(self) -> ChangeSet:
        if self._change is None:
            self._change = compare_trees(self.pristine_dir, self.modified_dir)
        return self._change

    @contextmanager
    def sealed(self, phase: str, workdir: Path) -> Iterator[Sandbox]:
        """A sandbox for the commands run in ``workdir`` (a copy they may change): the harness's Python (with
        pytest) and the system read-only, nothing else, no network at all. Hidden tests and gates run the agent's
        code: they are as hostile as the app."""
        mounts, path = runtimes(venv=True)
        seal = Seal(phase=phase, writable=[Path(workdir)], readable=[*mounts, *self.policy.mounts], path=path,
                    audit=False)
        box = self.policy.open(seal)
        with box:
            yield box
        if self.sealing is not None:
            self.sealing.add(box)

    def scratch(self, name: str) -> Path:
        """A fresh folder under the work dir."""
        path = self.work_dir / name
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path


# ----------------------------------------------------------------------------- commands
def copy_workspace(src: Path, dst: Path) -> Path:
    """Copy a workspace (without dependency folders, caches or .git) to ``dst``."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=copy_ignore(src), symlinks=True)
    return dst


def command_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment gates and tests run in: the harness's Python first on PATH (its venv has pytest), no
    bytecode files, and none of the pytest plugins installed beside the harness (they are not the app's, and
    some take seconds to load; a gate's ``env`` can set ``PYTEST_DISABLE_PLUGIN_AUTOLOAD = ""`` to have them).
    Commands run with the user's environment, as the user's own test run would, less its secrets (they run code the
    agent wrote: ``skillassay.secrets.without_secrets``)."""
    env = without_secrets(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_CURRENT_TEST", None)
    env.update(extra or {})
    return env


@dataclass
class CommandOutcome:
    exit_code: int | None  # None: timed out or could not start
    output: str
    duration_s: float
    timed_out: bool = False
    not_found: bool = False


def run_command(
    command: str | list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None, sandbox: Any = None
) -> CommandOutcome:
    """Run a command (a string goes through ``sh -c``) with a timeout; sealed in ``sandbox`` when given.

    Either way in its own session (its own process group), registered with the reaper so a Ctrl-C ends it; at
    ``timeout`` the whole group is killed (SIGTERM, then SIGKILL), and whatever the group left running after its
    leader exited is killed too: nothing it started outlives it. Output goes to a file, not a pipe, so a grandchild
    holding the pipe open cannot keep the harness waiting."""
    if sandbox is not None:
        return _run_sealed(command, cwd, timeout, env, sandbox)
    started = time.monotonic()
    shell = isinstance(command, str)
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(
                command, cwd=cwd, shell=shell, env=command_env(env), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        except FileNotFoundError as exc:
            return CommandOutcome(None, str(exc), time.monotonic() - started, not_found=True)
        timed_out = False
        with reaper.tracked(proc, grace=1.0) as pgid:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                reaper.kill_group(pgid, grace=1.0)
                proc.wait()
            if reaper.group_alive(pgid):  # the leader is gone; its children are not the gate's to keep
                reaper.kill_group(pgid, grace=0.5)
        out.seek(0)
        output = out.read()[-16000:].decode(errors="replace")[-4000:]
    duration = time.monotonic() - started
    if timed_out:
        return CommandOutcome(None, output, duration, timed_out=True)
    return CommandOutcome(proc.returncode, output, duration, not_found=proc.returncode == 127)


def _run_sealed(command: str | list[str], cwd: Path, timeout: float, env: dict[str, str] | None,
                sandbox: Any) -> CommandOutcome:
    started = time.monotonic()
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    with tempfile.TemporaryFile() as out:
        try:
            proc = sandbox.popen(argv, cwd=cwd, env=command_env(env), stdout=out, stderr=subprocess.STDOUT)
        except FileNotFoundError as exc:
            return CommandOutcome(None, str(exc), time.monotonic() - started, not_found=True)
        timed_out = False
        with reaper.tracked(proc, grace=1.0):  # the whole sandbox ends on every way out
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
        out.seek(0)
        output = out.read().decode(errors="replace")
    if not timed_out and (problem := sandbox.setup_error(proc)):
        raise IsolationError(f"{problem}: {output[-600:].strip()}")  # the harness's failure, never the agent's
    duration = time.monotonic() - started
    if timed_out:
        return CommandOutcome(None, output[-4000:], duration, timed_out=True)
    return CommandOutcome(proc.returncode, output[-4000:], duration, not_found=proc.returncode == 127)


def command_text(command: str | list[str]) -> str:
    import shlex

    return command if isinstance(command, str) else shlex.join(command)
