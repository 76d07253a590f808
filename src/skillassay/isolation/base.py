"""What a sealed process may see and reach (``Seal``), what happened when it ran (``SealReport``), and the
interface every isolation backend implements (``Isolation`` opening a ``Sandbox``).

A phase of a run (the agent; the app's install, build and run; hidden tests; gates) opens one sandbox and
starts its processes through it. The sandbox starts what the phase needs on the harness's side (the forwarders
to its granted endpoints, the egress proxy to its registries) and ends them on ``close()``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, ClassVar, Literal, Self
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field

from skillassay.errors import SkillassayError
from skillassay.isolation.audit import AuditReport, Bounds
from skillassay.isolation.egress import EgressProxy, Refusal
from skillassay.isolation.pids import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_TASKS

Phase = Literal["agent", "install", "build", "app", "tests", "gates", "command"]

# Proxy variables every client we run honours (npm, pip, node's fetch with a proxy agent, Claude Code, Codex,
# curl)
PROXY_VARS = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "https_proxy",
    "http_proxy",
    "npm_config_https_proxy",
    "npm_config_proxy",
    "ALL_PROXY",
    "all_proxy",
)
NO_PROXY = "127.0.0.1,localhost,::1"
# lookups that find nothing, made by runtimes on their own (interpreters' search paths, git's and node's walks
# up from the working folder): not evidence of anything when they fail
QUIET = (
    "*/python3*.zip",
    "*/node_modules/.modules.yaml",
    "/etc/gitattributes",
    "*/.git",
    "*/.git/*",
    "*/pyvenv.cfg",
    "*/package.json",
    "*/node_modules",
)
# folders every process may use: the system's, and the kernel's views
SYSTEM_ROOTS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/dev",
    "/sys",
    "/tmp",
    "/var/tmp",
)
# the system's program folders: the sealed runtimes go before the first of these on a PATH (never /tmp: a
# cache or a home may lie there, and what is in it is nobody's system program)
SYSTEM_BIN_ROOTS = ("/usr", "/bin", "/sbin")


def under(path: str, roots: Sequence[str]) -> bool:
    """``path`` is one of ``roots`` or inside one (by whole components: ``/tmpfoo`` is not under ``/tmp``)."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class IsolationError(SkillassayError):
    """The chosen isolation cannot run on this machine (with why, and what to do)."""


class Mount(BaseModel):
    """A host folder or file made visible read-only, at ``dest`` inside (the same path when not given)."""

    src: Path
    dest: Path | None = None

    @property
    def target(self) -> Path:
        return self.dest or self.src


class Endpoint(BaseModel):
    """A host-side TCP endpoint a sealed process may reach; inside the sandbox it is ``127.0.0.1:<port>``."""

    name: str  # "model", "seam", "registries"
    host: str = "127.0.0.1"
    port: int

    @classmethod
    def from_url(cls, name: str, url: str) -> Endpoint:
        parts = urlsplit(url)
        if not parts.hostname:
            raise ValueError(f"{url!r} has no host")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(name=name, host=parts.hostname, port=port)

    @property
    def netloc(self) -> str:
        return f"{self.host}:{self.port}"


class Seal(BaseModel):
    """What one phase's sealed processes may see and reach. Recorded (as ``SealRecord``) in run.json."""

    phase: Phase
    writable: list[Path] = Field(default_factory=list)  # the workspace (or the app's copy), the run's home
    readable: list[Mount] = Field(default_factory=list)  # the agent CLI, language runtimes, dependencies
    endpoints: list[Endpoint] = Field(default_factory=list)
    registries: list[str] = Field(default_factory=list)  # hosts reachable through the egress proxy
    home: Path | None = None  # the sealed user's home (also in ``writable``)
    # the phase's own environment (an app's venv ``bin``, its ``node_modules/.bin``): first on PATH inside,
    # before the runtimes, wherever it lies
    first: list[str] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)  # the runtimes' bin folders: next, before the system's
    own: list[Path] = Field(default_factory=list)  # the run's own scratch: never flagged as another run's
    quiet: list[str] = Field(default_factory=list)  # globs of failed lookups the audit does not list (probes)
    # root -> label ("suite", "results"): flagged if reached
    protected: dict[str, str] = Field(default_factory=dict)
    audit: bool = True  # trace file syscalls and connects (needs strace)
    # resource limits (isolation/pids.py): tasks (processes + threads) at once, and the size of any one file
    # written
    max_tasks: int | None = DEFAULT_MAX_TASKS
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE

    def url_inside(self, url: str) -> str:
        """The URL a sealed process uses for a granted endpoint: ``127.0.0.1:<port>`` in place of its host."""
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        for ep in self.endpoints:
            if ep.host == parts.hostname and ep.port == port:
                return urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))
        return url


class Policy(BaseModel):
    """How one run seals its phases: the backend, the registries its agent and its app's install may reach,
    what the user granted beyond that, and the roots that must never be reached (flagged by the audit)."""

    isolation: str = "bubblewrap"
    registries: list[str] = Field(default_factory=list)  # the stack's registries and the user's --allow-host
    mounts: list[Mount] = Field(default_factory=list)  # the user's --mount: read-only, for the agent
    protected: dict[str, str] = Field(default_factory=dict)

    def open(self, seal: Seal, scratch: Path | None = None) -> Sandbox:
        from skillassay import plugins

        if not plugins.registered("skillassay.isolation", self.isolation):
            raise IsolationError(f"unknown isolation {self.isolation!r}")
        seal = seal.model_copy(update={"protected": {**self.protected, **seal.protected}})
        return plugins.load("skillassay.isolation", self.isolation)().open(seal, scratch)


class SealRecord(BaseModel):
    """How a phase was sealed, as run.json records it."""

    phase: str
    isolation: str
    writable: list[str] = Field(default_factory=list)
    readable: list[str] = Field(default_factory=list)
    endpoints: list[str] = Field(default_factory=list)  # "model 127.0.0.1:8123"
    registries: list[str] = Field(default_factory=list)
    audit: bool = False
    max_tasks: int | None = None  # None: no limit could be set on this machine
    max_file_size: int | None = None


class SealReport(BaseModel):
    """What a phase's sealed processes did at its boundary, as process.json records it."""

    phase: str
    isolation: str
    processes: int = 0  # sealed processes started
    registries_reached: dict[str, int] = Field(default_factory=dict)  # "host:port" -> tunnels
    refused: list[Refusal] = Field(default_factory=list)  # requests the egress proxy refused
    audit: AuditReport = Field(default_factory=AuditReport)
    tasks_peak: int | None = None  # the most tasks held at once (where the kernel tells)
    forks_refused: int = 0  # process or thread starts refused at ``max_tasks``


class Sandbox(ABC):
    """One phase's sealed context. Use as a context manager; start processes with ``popen``."""

    isolation: ClassVar[str] = "base"

    def __init__(self, seal: Seal, scratch: Path | None = None):
        self.seal = seal
        self._own_scratch = scratch is None
        self.scratch = (
            Path(scratch) if scratch is not None else Path(tempfile.mkdtemp(prefix="skillassay-seal-"))
        )
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.endpoints: list[Endpoint] = list(seal.endpoints)
        self.egress: EgressProxy | None = None
        self.started = 0
        self._lock = threading.Lock()
        self._open = False
        # called once, just before the first sealed process starts (what it could see at start-up is recorded
        # then)
        self.on_first_start: Callable[[], None] | None = None
        self.final: SealReport | None = None  # the report, kept when the sandbox closes

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self._open:
            return
        if self.seal.registries:
            self.egress = EgressProxy(self.seal.registries)
            port = self.egress.start()
            self.endpoints.append(Endpoint(name="registries", port=port))
        self._open = True

    def close(self) -> None:
        """Stop what the sandbox started and keep its report (the traces it reads live in the scratch
        folder).
        """
        try:
            if self.final is None:
                self.final = self.report()
        finally:  # whatever the report did, nothing the sandbox started is left behind
            self._stop()
            if self.egress is not None:
                self.egress.close()
            self._open = False
            if self._own_scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)

    def _stop(self) -> None:  # noqa: B027 - a hook: nothing unless a subclass needs it
        """Stop the backend's own helpers (forwarders)."""

    # ------------------------------------------------------------------ processes
    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` as a sealed process gets it: the egress proxy for registries, nothing proxied on
        loopback.
        """
        out = dict(env)
        for name in PROXY_VARS:
            out.pop(name, None)
        if self.egress is not None:
            url = f"http://127.0.0.1:{self.egress.port}"
            for name in PROXY_VARS[:6]:
                out[name] = url
        out["NO_PROXY"] = out["no_proxy"] = NO_PROXY
        if self.seal.first or self.seal.path:
            out["PATH"] = sealed_path(out.get("PATH", os.defpath), self.seal.first, self.seal.path)
        return out

    @abstractmethod
    def wrap(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], list[int]]:
        """The host command line that runs ``argv`` sealed, and the descriptors it must inherit."""

    def popen(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdout: IO | int | None = None,
        stderr: IO | int | None = None,
        stdin: IO | int | None = subprocess.DEVNULL,
    ) -> subprocess.Popen:
        """Start ``argv`` sealed, in a new session (its own process group, as every child of the harness).

        Raises FileNotFoundError like ``Popen`` when ``argv[0]`` cannot be found, so a missing binary is
        still an error of the set-up, not an exit code of the sealed command."""
        if not self._open:
            self.start()
        full_env = self.environment(env)
        # not the harness's: a shell checks it, and it names where the harness runs
        full_env["PWD"] = str(cwd)
        full_env.pop("OLDPWD", None)
        _check_runnable(argv[0], full_env.get("PATH", os.defpath), cwd)
        hook, self.on_first_start = self.on_first_start, None
        if hook is not None:
            hook()
        with self._lock:  # one start at a time: a start's descriptors are its own
            wrapped, fds = self.wrap(argv, Path(cwd), full_env)
            proc = None
            try:
                proc = subprocess.Popen(
                    wrapped,
                    cwd=cwd,
                    env=full_env,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    start_new_session=True,
                    pass_fds=fds,
                )
            finally:
                self.started_process(proc)
            self.started += 1
        return proc

    def started_process(self, proc: subprocess.Popen | None = None) -> None:  # noqa: B027 - a hook: nothing unless a subclass needs it
        """Called after each start (``proc`` None: it failed): release what was made for that start only."""

    def setup_error(self, proc: subprocess.Popen) -> str | None:
        """After ``proc`` ended: why the sandbox never ran its command (a harness error, never the command's
        outcome), or None when the command ran."""
        return None

    def expose(self) -> int:
        """A port the app under test listens on; the harness reaches it at ``127.0.0.1:<port>`` on the
        host.
        """
        raise NotImplementedError

    def url_inside(self, url: str) -> str:
        for ep in self.endpoints:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if ep.host == parts.hostname and ep.port == port:
                return urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))
        return url

    # ------------------------------------------------------------------ records
    def record(self) -> SealRecord:
        return SealRecord(
            phase=self.seal.phase,
            isolation=self.isolation,
            writable=[str(p) for p in self.seal.writable],
            readable=[str(m.target) for m in self.seal.readable],
            endpoints=[f"{e.name} {e.netloc}" for e in self.endpoints],
            registries=list(self.seal.registries),
            audit=self.auditing,
            max_tasks=self.limits()[0],
            max_file_size=self.limits()[1],
        )

    def limits(self) -> tuple[int | None, int | None]:
        """(max tasks, max file size) as applied; (None, None) where the backend applies none."""
        return None, None

    @property
    def auditing(self) -> bool:
        return False

    def bounds(self) -> Bounds:
        """What is in bounds for this phase's processes (for the transcript audit when nothing is traced)."""
        own = [str(p) for p in [*self.seal.writable, *self.seal.own]] + [
            str(m.target) for m in self.seal.readable
        ]
        return Bounds(
            inside=[*own, *SYSTEM_ROOTS],
            protected=dict(self.seal.protected),
            own=own,
            quiet=[*QUIET, *self.seal.quiet],
        )

    def audit(self) -> AuditReport:
        return AuditReport()

    def report(self) -> SealReport:
        return SealReport(
            phase=self.seal.phase,
            isolation=self.isolation,
            processes=self.started,
            registries_reached=dict(self.egress.allowed) if self.egress else {},
            refused=self.egress.refused if self.egress else [],
            audit=self.audit(),
            tasks_peak=self.task_usage()[0],
            forks_refused=self.task_usage()[1],
        )

    def task_usage(self) -> tuple[int | None, int]:
        """(the most tasks held at once, forks refused at the limit)."""
        return None, 0


def sealed_path(given: str, first: Sequence[str], runtimes: Sequence[str]) -> str:
    """A sealed process's PATH: the phase's own environment ``first``, then the caller's folders up to the
    first system program folder, then the ``runtimes``, then the rest. Where the cache or a home lies plays no
    part: an app's venv under /tmp still comes before the harness's Python."""
    rest = [p for p in given.split(os.pathsep) if p and p not in first and p not in runtimes]
    at = next((i for i, p in enumerate(rest) if under(p, SYSTEM_BIN_ROOTS)), len(rest))
    return os.pathsep.join(dict.fromkeys([*first, *rest[:at], *runtimes, *rest[at:]]))


def _check_runnable(program: str, path: str, cwd: Path) -> None:
    if "/" in program:
        target = Path(program) if os.path.isabs(program) else Path(cwd) / program
        if not os.access(target, os.X_OK) or target.is_dir():
            raise FileNotFoundError(2, "No such file or directory", program)
        return
    if shutil.which(program, path=path) is None:
        raise FileNotFoundError(2, "No such file or directory", program)


class Isolation(ABC):
    """An isolation backend: ``open(seal)`` gives a ``Sandbox`` for one phase."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    sealed: ClassVar[bool] = True

    def problem(self) -> str | None:
        """Why this backend cannot seal processes on this machine, or None."""
        return None

    @abstractmethod
    def open(self, seal: Seal, scratch: Path | None = None) -> Sandbox: ...
