"""What every process grader and detector shares: results, the grading context (with the run's one ChangeSet,
``workspace.changes``), running commands in copies of a workspace, and glob matching."""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from skillassay import reaper
from skillassay.definitions.models import EvalDefinition, stack_registries
from skillassay.graders.appenv import AppEnv, Side
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation import IsolationError, Mount, Policy, Sandbox, Seal
from skillassay.isolation.record import Sealing
from skillassay.isolation.runtimes import runtimes
from skillassay.languages import bounds
from skillassay.secrets import without_secrets
from skillassay.transcripts import Transcript
from skillassay.workspace.changes import ChangeSet, compare_trees, copy_ignore

R = TypeVar("R")


class HarnessFault(Exception):
    """A grader or detector could not do its job for a reason that is not the agent's: a command the harness
    needs is missing, the LLM judge's API failed or answered unverifiably. Raised, never turned into points:
    the engine records it as a ``HarnessFailure`` and the run becomes a harness error (docs/results.md)."""


class Unmeasurable(Exception):
    """The agent's change made this step unable to measure (``reason``: a file no reader takes, a name the
    harness needed taken...). Raised by any grader or detector, plug-ins too; ``measured`` checks the change
    caused it before the engine scores it as the agent's failure."""


@dataclass
class Unmeasured:
    """What ``measured`` returns for a step the agent's change made unmeasurable (checked on the pristine
    app)."""

    reason: str

    @property
    def evidence(self) -> str:
        return f"unmeasurable because of the change: {self.reason}"


# errors no content can cause: the machine's or the harness's, whatever the step was reading
_MACHINE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.ENOMEM,
        errno.EMFILE,
        errno.ENFILE,
        errno.EIO,
        errno.EROFS,
        errno.EAGAIN,
    }
)


def content_reason(exc: BaseException, roots: list[Path]) -> str | None:
    """Why ``exc`` is one that what the agent left in ``roots`` (its workspace, the copies of it) can provoke,
    or None: a type no content provokes (KeyError, TypeError, a HarnessFault...) is the harness's."""
    if isinstance(exc, (Unmeasurable, bounds.Unparsable)):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deep to read (RecursionError)"
    if isinstance(exc, MemoryError):
        return "reading it ran out of memory (MemoryError)"
    if isinstance(exc, UnicodeError):
        return f"text no reader takes ({type(exc).__name__}: {exc})"
    if isinstance(exc, OSError) and exc.errno not in _MACHINE_ERRNOS:
        for name in (exc.filename, exc.filename2):
            where = _inside(name, roots)
            if where is not None:
                return f"{where}: {exc.strerror or type(exc).__name__} ({type(exc).__name__})"
    return None


def _inside(name: object, roots: list[Path]) -> str | None:
    if not isinstance(name, (str, bytes, os.PathLike)):
        return None
    path = os.path.abspath(os.fsdecode(name))
    for root in roots:
        top = os.path.abspath(root)
        if path == top or path.startswith(top + os.sep):
            return os.path.relpath(path, top).replace(os.sep, "/")
    return None


def measured(step: Callable[[], R], on_pristine: Callable[[], object], roots: list[Path]) -> R | Unmeasured:
    """``step()`` within the parsers' bounds (``languages.bounds``: size, depth, memory, CPU time). When it
    raises what the content of ``roots`` can provoke (``content_reason``), ``on_pristine()`` runs the same
    step on the pristine app, evidence the agent cannot manufacture: it succeeds there -> the change caused
    it, and the step is ``Unmeasured`` (the agent's failure, with the reason); it fails there too ->
    HarnessFault (the harness's). Any other exception is raised as it is (the harness's)."""
    try:
        with bounds.budget():
            return step()
    except Exception as exc:
        reason = content_reason(exc, roots)
        if reason is None:
            raise
        caused = exc
    try:
        with bounds.budget():
            on_pristine()
    except Exception as again:  # noqa: BLE001 - whatever fails on the pristine app too is the harness's
        raise HarnessFault(
            f"{type(caused).__name__}: {caused}; it fails on the pristine app too "
            f"({type(again).__name__}: {again})"
        ) from caused
    return Unmeasured(reason)


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
    _cache: dict[Hashable, Any] = field(default_factory=dict)
    # how commands are sealed (skillassay.isolation); by default bubblewrap, the installs of the app's
    # environment reaching the stack's registries
    policy: Policy | None = None
    sealing: Sealing | None = None  # each sandbox's record, when the run keeps them

    def __post_init__(self) -> None:
        if self.policy is None:
            self.policy = Policy(
                registries=stack_registries(self.definition) if self.definition is not None else []
            )

    @property
    def sandboxes(self) -> Policy:
        """``policy``, always set once the context is made."""
        if self.policy is None:
            raise RuntimeError("ProcessContext.policy is unset")
        return self.policy

    @property
    def change(self) -> ChangeSet:
        if self._change is None:
            self._change = compare_trees(self.pristine_dir, self.modified_dir)
        return self._change

    @contextmanager
    def sealed(self, phase: str, workdir: Path, app: AppEnv | None = None) -> Iterator[Sandbox]:
        """A sandbox for the commands run in ``workdir`` (a copy they may change): the app's environment
        ``app`` (its cached venv / node_modules, read-only), the language runtimes and the system read-only,
        nothing else (never skillassay's own environment), no network at all. Hidden tests and gates run the
        agent's code: they are as hostile as the app."""
        mounts, _ = runtimes(venv=False)
        app_mounts = (
            app.attach(workdir, sealed=self.sandboxes.isolation != "none")[0] if app is not None else []
        )
        seal = Seal(
            phase=phase,
            writable=[Path(workdir)],
            readable=[*app_mounts, *mounts, *self.sandboxes.mounts],
            audit=False,
        )
        box = self.sandboxes.open(seal)
        with box:
            yield box
        if self.sealing is not None:
            self.sealing.add(box)

    @property
    def content_roots(self) -> list[Path]:
        """Where what the agent left lies: its workspace and the copies of it the graders work in."""
        return [self.modified_dir, self.work_dir]

    def on_pristine(self) -> ProcessContext:
        """This context with the pristine app in the agent's place (an empty change, no transcript): where a
        step the change made fail is run again, to tell the change's fault from the harness's (``measured``).
        """
        twin = ProcessContext(
            definition=self.definition,
            pristine_dir=self.pristine_dir,
            modified_dir=self.pristine_dir,
            transcript=None,
            work_dir=self.work_dir / "pristine-check",
            judge_config=self.judge_config,
            gates=dict(self.gates),
            policy=self.policy,
            _change=compare_trees(self.pristine_dir, self.pristine_dir),
        )
        twin.work_dir.mkdir(parents=True, exist_ok=True)
        twin._cache["app_env_by_manifest"] = self._cache.setdefault("app_env_by_manifest", {})
        return twin

    def app_env(self, side: Side) -> AppEnv:
        """The app's environment for ``side`` (docs/agent-evals.md, "Where gates and tests run"), built once
        per manifest content (a side whose manifest is the other's gets the same one).

        The pristine app's cannot be installed: raises HarnessFault (nothing can be measured). The modified
        app's cannot while the pristine app's can: returned with ``error`` set, the agent's doing (its change
        broke the install); the graders then score what needed it as failed."""
        key = ("app_env", side)
        if key not in self._cache:
            self._cache[key] = self._build_env(side)
        env = self._cache[key]
        if env.error is None:
            return env
        if side == "pristine":
            raise HarnessFault(f"the pristine app: {env.error}")
        self.app_env("pristine")  # raises when the pristine app's fails too: then it is the harness's
        return replace(
            env,
            error=f"the modified app: {env.error}\n(the pristine app's environment installs: the "
            "change broke it)",
        )

    def _build_env(self, side: Side) -> AppEnv:
        from skillassay.apps.backends.backend import base_env
        from skillassay.graders import appenv

        root = self.pristine_dir if side == "pristine" else self.modified_dir
        try:
            manifest = appenv.read_manifest(root)
        except appenv.ManifestError as exc:
            return AppEnv(side=side, error=f"the app's manifest cannot be used: {exc}")
        built = self._cache.setdefault("app_env_by_manifest", {})
        if manifest.signature in built:  # the same manifest as the other side: the same environment
            other = built[manifest.signature]
            return AppEnv(**{**other.__dict__, "side": side})
        boxes: list[Sandbox] = []

        def install_box(entry: Path, staging: Path) -> Sandbox:
            # the installer is the harness's own pip (or npm): its runtimes, with its venv; only the entry
            # writable
            mounts, path = runtimes(venv=True)
            box = self.sandboxes.open(
                Seal(
                    phase="install",
                    writable=[entry],
                    readable=[Mount(src=staging), *mounts],
                    path=path,
                    registries=list(self.sandboxes.registries),
                    audit=False,
                )
            )
            boxes.append(box)
            box.start()
            return box

        try:
            env = appenv.build(
                root,
                side,
                self.work_dir / f"app-env-{side}",
                self.work_dir / f"install-{side}.log",
                seal=install_box,
                env=base_env(),
                manifest=manifest,
            )
        finally:
            for box in boxes:
                box.close()
                if self.sealing is not None:
                    self.sealing.add(box)
        built[manifest.signature] = env
        return env

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


def _harness_bins() -> set[str]:
    """skillassay's own virtual environment's bin folder (when it runs from one): never on a command's
    PATH.
    """
    if sys.prefix == sys.base_prefix:
        return set()
    return {str(Path(sys.prefix) / "bin"), os.path.realpath(Path(sys.prefix) / "bin")}


def command_env(
    extra: dict[str, str] | None = None, app: AppEnv | None = None, workdir: Path | None = None
) -> dict[str, str]:
    """The environment gates and tests run in: the app's environment first on PATH (its venv's ``bin``, its
    ``node_modules/.bin`` in ``workdir``), then the language runtimes, then the user's PATH without
    skillassay's own virtual environment; no bytecode files. Commands run with the user's environment, as the
    user's own test run would, less its secrets (they run code the agent wrote:
    ``skillassay.secrets.without_secrets``) and less what would point them at another Python (``PYTHONHOME``,
    the user's ``VIRTUAL_ENV``)."""
    env = without_secrets(os.environ)
    front: list[str] = []
    if app is not None:
        front += app.bin_dirs(workdir)
    skip = _harness_bins()
    user = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p and p not in skip]
    env["PATH"] = os.pathsep.join(dict.fromkeys([*front, *runtimes(venv=False)[1], *user]))
    for name in ("PYTHONHOME", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if app is not None:
        env.update(app.variables())
    env.update(extra or {})
    return env


# What a command prints when it could not even start its tool, or its tool could not start on the tests: the
# harness cannot measure anything there unless the pristine app shows it can (then the agent's change is why).
_RUNNER_MISSING = (
    (
        re.compile(r"^\S*python[\d.]*: No module named (\S+)", re.MULTILINE),
        "{0} is not installed in the app's environment",
    ),
    (
        re.compile(
            r"^\S*sh(?:: line \d+|: \d+)?: (?:\d+: )?([^\s:]+): (?:command )?not found\s*$", re.MULTILINE
        ),
        "command not found: {0}",
    ),
    (re.compile(r"error while loading shared libraries: ([^:\s]+)"), "a shared library is missing: {0}"),
    (
        re.compile(r"Error: Cannot find module '((?:@[\w.-]+/)?(?![./])[\w.-]+)(?:/[^']*)?'"),
        "{0} is not installed in the app's environment",
    ),
    (
        re.compile(r"Cannot find package '((?:@[\w.-]+/)?(?![./])[\w.-]+)[^']*' imported from"),
        "{0} is not installed in the app's environment",
    ),
)
_NOT_COLLECTED = (
    (re.compile(r"^ImportError while loading conftest '([^']+)'", re.MULTILINE), "pytest could not load {0}"),
    (
        re.compile(r"Interrupted: (\d+) errors? during collection"),
        "pytest could not collect the tests ({0} error(s) during collection)",
    ),
    (re.compile(r"^no tests ran in [\d.]+s", re.MULTILINE), "pytest collected no tests"),
    (
        re.compile(r"^(?:E\s+)?ModuleNotFoundError: No module named '([\w.]+)'", re.MULTILINE),
        "no module named {0}",
    ),
)


def startup_failure(out: CommandOutcome, collection: bool = False) -> str | None:
    """Why ``out`` shows its tool could not start (a program or module missing from the app's environment), or
    with ``collection``, could not collect the tests; None when it ran. Only the first match is given."""
    if out.not_found:
        return f"command not found ({out.output.strip()[-200:]})"
    for pattern, text in _RUNNER_MISSING + (_NOT_COLLECTED if collection else ()):
        if m := pattern.search(out.output):
            return text.format(*m.groups())
    if out.exit_code in (126, 127):
        return f"exit code {out.exit_code}: command not found or not executable"
    return None


@dataclass
class CommandOutcome:
    exit_code: int | None  # None: timed out or could not start
    output: str
    duration_s: float
    timed_out: bool = False
    not_found: bool = False


def run_command(
    command: str | list[str],
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
    app: AppEnv | None = None,
) -> CommandOutcome:
    """Run a command (a string goes through ``sh -c``) with a timeout; sealed in ``sandbox`` when given.

    Either way in its own session (its own process group), registered with the reaper so a Ctrl-C ends it; at
    ``timeout`` the whole group is killed (SIGTERM, then SIGKILL), and whatever the group left running after
    its leader exited is killed too: nothing it started outlives it. Output goes to a file, not a pipe, so a
    grandchild holding the pipe open cannot keep the harness waiting. ``app``: the app's environment the
    command runs in (``command_env``)."""
    if sandbox is not None:
        return _run_sealed(command, cwd, timeout, command_env(env, app, cwd), sandbox)
    started = time.monotonic()
    shell = isinstance(command, str)
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                shell=shell,
                env=command_env(env, app, cwd),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
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


def _run_sealed(
    command: str | list[str], cwd: Path, timeout: float, env: dict[str, str], sandbox: Sandbox
) -> CommandOutcome:
    started = time.monotonic()
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    with tempfile.TemporaryFile() as out:
        try:
            proc = sandbox.popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
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
        # the harness's failure, never the agent's
        raise IsolationError(f"{problem}: {output[-600:].strip()}")
    duration = time.monotonic() - started
    if timed_out:
        return CommandOutcome(None, output[-4000:], duration, timed_out=True)
    return CommandOutcome(proc.returncode, output[-4000:], duration, not_found=proc.returncode == 127)


def command_text(command: str | list[str]) -> str:
    import shlex

    return command if isinstance(command, str) else shlex.join(command)
