"""What every process grader and detector shares: results, the grading context (with the run's one ChangeSet,
``workspace.changes``), running commands in copies of a workspace, and glob matching."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay.definitions.models import EvalDefinition
from skillassay.graders.process.judge_config import JudgeConfig
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

    @property
    def change(self) -> ChangeSet:
        if self._change is None:
            self._change = compare_trees(self.pristine_dir, self.modified_dir)
        return self._change

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
    Commands run on the user's machine with the user's environment, as the user's own test run would."""
    env = dict(os.environ)
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
    command: str | list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> CommandOutcome:
    started = time.monotonic()
    shell = isinstance(command, str)
    try:
        proc = subprocess.run(
            command,
            cwd=cwd,
            shell=shell,
            env=command_env(env),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = (
            (exc.stdout or "")
            if isinstance(exc.stdout, str)
            else (exc.stdout or b"").decode(errors="replace")
        )
        return CommandOutcome(None, out[-4000:], time.monotonic() - started, timed_out=True)
    except FileNotFoundError as exc:
        return CommandOutcome(None, str(exc), time.monotonic() - started, not_found=True)
    output = (proc.stdout or "") + (proc.stderr or "")
    return CommandOutcome(
        proc.returncode, output[-4000:], time.monotonic() - started, not_found=proc.returncode == 127
    )


def command_text(command: str | list[str]) -> str:
    import shlex

    return command if isinstance(command, str) else shlex.join(command)
