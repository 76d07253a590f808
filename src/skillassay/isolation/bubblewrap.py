"""Sealing with bubblewrap (``bwrap``, Debian package ``bubblewrap``): each sealed process gets its own mount,
PID, network, IPC and UTS namespaces and a user namespace in which it runs as an unprivileged user.

What it sees (everything else does not exist for it):
- read-write: the phase's writable folders (the workspace or the app's copy, the run's private home) and a
  private ``/tmp`` (a fresh folder of the harness's scratch, on disk, not in memory);
- read-only: the system folders (``/usr`` and the ``/bin``, ``/lib`` links), a short list of ``/etc`` entries
  (users, name service, certificates, time zone: never ``shadow``, ``sudoers`` or SSH keys), the phase's tools
  and runtimes (the agent CLI, the language runtimes, the app's dependencies), a new ``/proc`` of its own PID
  namespace and a minimal ``/dev``;
- network: only its own loopback; granted endpoints appear there at ``127.0.0.1:<port>`` through the
  forwarders of ``launcher.py`` (inside) and ``bridge.py`` (in the harness).

Ending: the sandbox's init is PID 1 of its namespace, so when the command ends, or bwrap is killed, the kernel
kills every process left inside, ``setsid`` or not. ``--die-with-parent`` ends the sandbox when the harness's
thread that started it dies (a SIGKILLed harness included); with the audit on, ``setpriv --pdeathsig KILL``
gives strace (the sandbox's parent then) the same fate.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from skillassay.isolation.audit import TRACE, AuditReport, Bounds, parse_trace
from skillassay.isolation.base import QUIET, Isolation, IsolationError, Mount, Sandbox, Seal
from skillassay.isolation.bridge import Listener, forward_unix_to_tcp, reserve_port
from skillassay.isolation.pids import TaskLimit

NAME = "bubblewrap"
SANDBOX_UID = 1000
SANDBOX_USER = "sandbox"
LAUNCHER = Path(__file__).with_name("launcher.py")
RUN_DIR = "/run/skillassay"  # inside: the launcher and the endpoint sockets

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc entries a process needs to run: users, name service, libraries, certificates, time, locale, shells,
# interpreters' and package managers' system settings. Not shadow/gshadow, sudoers, ssh, ssl/private,
# machine-id.
ETC_ENTRIES = (
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "environment",
    "gai.conf",
    "gitconfig",
    "host.conf",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "locale.conf",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "netconfig",
    "npmrc",
    "nsswitch.conf",
    "os-release",
    "php",
    "pip.conf",
    "profile",
    "profile.d",
    "protocols",
    "python3",
    "resolv.conf",
    "rpc",
    "services",
    "shells",
    "ssl/certs",
    "ssl/openssl.cnf",
    "timezone",
    "terminfo",
    "xattr.conf",
)
# paths the C library and runtimes probe on their own at every start: never evidence of anything
PROBES = {
    "/",
    "/etc/ld.so.preload",
    "/etc/ld.so.nohwcap",
    "/etc/selinux/config",
    "/selinux",
    "/etc/gnutls/config",
    "/var/run/nscd/socket",
    "/run/nscd/socket",
    "/etc",
    "/run",
    "/var",
    "/var/run",
}
# kernel information, not the operator's: not mounted, and not listed either
QUIET_ROOTS = ("/sys",)


@functools.lru_cache(maxsize=1)
def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def _supports(flag: str) -> bool:
    binary = _bwrap()
    if not binary:
        return False
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=False)
    return flag in out.stdout + out.stderr


@functools.lru_cache(maxsize=1)
def _trial() -> str | None:
    """Run ``true`` in a minimal sandbox once: None when it works, else bwrap's complaint."""
    binary = _bwrap()
    if not binary:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; scripts/setup.sh does it)"
    argv = [
        binary,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    argv += _system_args()
    try:
        out = subprocess.run([*argv, "--", "true"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run: {exc}"
    if out.returncode != 0:
        return (
            f"bwrap cannot create a sandbox on this machine: {out.stderr.strip() or out.returncode} "
            "(user namespaces may be disabled: sysctl kernel.unprivileged_userns_clone / "
            "user.max_user_namespaces, or an AppArmor rule)"
        )
    return None


@functools.lru_cache(maxsize=1)
def _strace() -> str | None:
    return shutil.which("strace")


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    return shutil.which("setpriv")


@functools.lru_cache(maxsize=1)
def _launcher_python() -> str:
    """The interpreter that runs the launcher inside: the system's, which the sandbox always sees."""
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


def _system_args() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return args


def _etc_args() -> list[str]:
    args = ["--dir", "/etc"]
    for name in ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def _visible_roots(seal: Seal, extra: Sequence[str] = ()) -> list[str]:
    roots = [d for d in SYSTEM_DIRS if os.path.exists(d)]
    roots += [str(m.target) for m in seal.readable] + [str(p) for p in seal.writable]
    roots += ["/tmp", "/proc", "/dev", RUN_DIR, *QUIET_ROOTS, *extra]
    roots += [f"/etc/{n}" for n in (*ETC_ENTRIES, "passwd", "group")]
    return roots


def _short_tmp() -> str:
    return "/tmp" if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK) else tempfile.gettempdir()


def _depth(path: str) -> int:
    return len(Path(path).parts)


def _needed(mounts: list[Mount]) -> list[Mount]:
    """The mounts left when those another mount already shows, the same file at the same place, are dropped
    (bwrap cannot make a mount point inside a read-only mount)."""
    out: list[Mount] = []
    for m in mounts:
        redundant = False
        for other in mounts:
            if other is m or not Path(m.target).is_relative_to(other.target) or m.target == other.target:
                continue
            shown = Path(other.src) / Path(m.target).relative_to(other.target)
            try:
                redundant = shown.resolve() == Path(m.src).resolve()
            except OSError:
                redundant = False
            if redundant:
                break
        if not redundant and not any(m.target == o.target and m.src == o.src for o in out):
            out.append(m)
    return out


class BubblewrapSandbox(Sandbox):
    isolation = NAME

    def __init__(self, seal: Seal, scratch: Path | None = None):
        super().__init__(seal, scratch)
        self._bridges: list[Listener] = []
        self._exposed: dict[int, socket.socket] = {}
        self._traces: list[Path] = []
        self._transient: list[int] = []  # descriptors handed to the next process only
        self._pending_ready: int | None = None
        self._ready: dict[int, int] = {}  # pid -> the read end of its "the command started" pipe
        self._tasks: TaskLimit | None = None
        self._tmp = self.scratch / "tmp"
        self._socks: Path | None = None  # made by start()
        self._etc = self.scratch / "etc"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        if self._open:
            return
        super().start()
        self._tmp.mkdir(parents=True, exist_ok=True)
        self._tmp.chmod(0o1777)
        # the endpoints' Unix sockets: under a short private folder, not the scratch folder, whose path may be
        # long (a Unix socket's path holds at most 107 bytes)
        self._socks = Path(tempfile.mkdtemp(prefix="sa-", dir=_short_tmp()))
        self._etc.mkdir(parents=True, exist_ok=True)
        home = str(self.seal.home or "/tmp")
        (self._etc / "passwd").write_text(
            "root:x:0:0:root:/root:/bin/sh\n"
            f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:{SANDBOX_USER}:{home}:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (self._etc / "group").write_text(f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")
        for ep in self.endpoints:
            self._bridges.append(forward_unix_to_tcp(self._socks / f"{ep.port}.sock", ep.host, ep.port))
        self._tasks = TaskLimit(self.seal.max_tasks)

    def limits(self) -> tuple[int | None, int | None]:
        return (self._tasks.max_tasks if self._tasks else None), self.seal.max_file_size

    def task_usage(self) -> tuple[int | None, int]:
        return (self._tasks.peak(), self._tasks.refused()) if self._tasks else (None, 0)

    def _stop(self) -> None:
        if self._tasks is not None:
            self._tasks.close()
        for fd in self._ready.values():
            os.close(fd)
        self._ready = {}
        for bridge in self._bridges:
            bridge.close()
        self._bridges = []
        for sock in self._exposed.values():
            sock.close()
        self._exposed = {}
        if self._socks is not None:
            shutil.rmtree(self._socks, ignore_errors=True)

    def started_process(self, proc: subprocess.Popen | None = None) -> None:
        for fd in self._transient:
            os.close(fd)
        self._transient = []
        ready, self._pending_ready = self._pending_ready, None
        if ready is not None:
            if proc is None:
                os.close(ready)
            else:
                self._ready[proc.pid] = ready

    def setup_error(self, proc: subprocess.Popen) -> str | None:
        """After ``proc`` ended: why its sandbox never ran the command (bwrap's own failure), or None."""
        fd = self._ready.pop(proc.pid, None)
        if fd is None:
            return None
        try:
            os.set_blocking(fd, False)
            try:
                got = os.read(fd, 1)
            except BlockingIOError:
                got = b""
        finally:
            os.close(fd)
        if got:
            return None
        return f"the sandbox could not start (bwrap exited {proc.returncode} before running the command)"

    def expose(self) -> int:
        sock = reserve_port()
        port = sock.getsockname()[1]
        self._exposed[port] = sock
        return port

    # ------------------------------------------------------------------ command lines
    @property
    def auditing(self) -> bool:
        return self.seal.audit and _strace() is not None

    def _mount_args(self) -> list[str]:
        args = ["--proc", "/proc", "--dev", "/dev"]
        args += _system_args()
        args += _etc_args()
        args += [
            "--ro-bind",
            str(self._etc / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(self._etc / "group"),
            "/etc/group",
        ]
        args += ["--bind", str(self._tmp), "/tmp", "--dir", "/var", "--symlink", "../tmp", "/var/tmp"]
        args += [
            "--ro-bind",
            str(LAUNCHER),
            f"{RUN_DIR}/launcher.py",
            "--ro-bind",
            str(self._socks),
            f"{RUN_DIR}/sock",
        ]
        # parents before children, so a read-only tool folder inside a writable one stays read-only
        mounts = [
            (str(m.target), ["--ro-bind", str(m.src), str(m.target)]) for m in _needed(self.seal.readable)
        ]
        mounts += [(str(p), ["--bind", str(p), str(p)]) for p in self.seal.writable]
        for _, flags in sorted(mounts, key=lambda m: _depth(m[0])):
            args += flags
        return args

    def wrap(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], list[int]]:
        binary = _bwrap()
        if binary is None:
            raise FileNotFoundError(2, "bwrap is not installed", "bwrap")
        env["PATH"] = self._visible_path(env.get("PATH", os.defpath))
        env["TMPDIR"] = "/tmp"
        # the phase's home, else the private /tmp: the harness's own home is not there
        env["HOME"] = str(self.seal.home) if self.seal.home is not None else "/tmp"
        env["USER"] = env["LOGNAME"] = SANDBOX_USER
        for name in ("BASH_ENV", "ENV"):  # files a shell would source first: the harness's, not the command's
            env.pop(name, None)
        cmd = [
            binary,
            "--die-with-parent",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--hostname",
            "sandbox",
        ]
        if _supports("--disable-userns"):
            cmd.append("--disable-userns")  # no nested namespaces: less kernel surface for a hostile process
        cmd += self._mount_args()
        cmd += ["--chdir", str(cwd)]
        options = len(cmd)
        cmd.append("--")
        fds: list[int] = []
        launch: list[str] = []
        for ep in self.endpoints:
            launch += ["--forward", f"{ep.port}={RUN_DIR}/sock/{ep.port}.sock"]
        for port, sock in self._exposed.items():
            fds.append(sock.fileno())
            launch += ["--expose", f"{sock.fileno()}:{port}"]
        # the first thing that runs inside says so on a pipe, then closes it: no byte means bwrap failed to
        # set the sandbox up (a harness error), whatever the command would have printed or returned
        ready_r, ready_w = os.pipe()
        self._transient.append(ready_w)
        self._pending_ready = ready_r
        fds.append(ready_w)
        # no file written inside may grow past max_file_size (1 KiB blocks; hard limit: no process can raise
        # it)
        fsize = f"ulimit -f {max(1, self.seal.max_file_size // 1024)}; " if self.seal.max_file_size else ""
        cmd += ["/bin/bash", "-c", f'printf 1 >&{ready_w}; exec {ready_w}>&-; {fsize}exec "$@"', "bash"]
        if launch:
            cmd += [_launcher_python(), "-I", "-S", f"{RUN_DIR}/launcher.py", *launch, "--"]
        cmd += list(argv)
        # the options go through a descriptor: PID 1's command line inside (readable by the sealed process) is
        # then "bwrap --args N -- COMMAND", not the list of host paths mounted
        read_end, write_end = os.pipe()
        payload = b"".join(a.encode() + b"\0" for a in cmd[1:options])
        if len(payload) > 60_000:  # more than a pipe holds before a reader comes
            os.close(read_end)
            os.close(write_end)
            raise OSError(f"bwrap command line too long ({len(payload)} bytes)")
        os.write(write_end, payload)
        os.close(write_end)
        self._transient.append(read_end)
        fds.append(read_end)
        cmd = [cmd[0], "--args", str(read_end), *cmd[options:]]
        if self.auditing:
            trace = self.scratch / "trace" / str(len(self._traces))
            trace.mkdir(parents=True, exist_ok=True)
            self._traces.append(trace)
            strace = [
                _strace() or "strace",
                "-f",
                "-ff",
                "-qq",
                "--seccomp-bpf",
                "-y",
                "--pidns-translation",
                "-s",
                "1024",
                "-e",
                f"trace={TRACE}",
                "-e",
                "signal=none",
                "-o",
                str(trace / "t"),
            ]
            setpriv = _setpriv()
            prefix = [setpriv, "--pdeathsig", "KILL"] if setpriv else []
            cmd = [*prefix, *strace, "--", *cmd]
        if self._tasks is not None and self._tasks.procs is not None:
            # joins the sandbox's pids cgroup before anything of it starts: every process and thread it makes
            # counts
            cmd = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self._tasks.procs), *cmd]
        return cmd, fds

    def _visible_path(self, path: str) -> str:
        roots = _visible_roots(self.seal)
        kept = [
            p
            for p in path.split(os.pathsep)
            if p and any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)
        ]
        return os.pathsep.join(dict.fromkeys(kept)) or "/usr/local/bin:/usr/bin:/bin"

    # ------------------------------------------------------------------ audit
    def bounds(self) -> Bounds:
        return Bounds(
            inside=_visible_roots(self.seal),
            protected=dict(self.seal.protected),
            ignore=set(PROBES),
            allowed_ports={ep.port for ep in self.endpoints} | set(self._exposed),
            allowed_sockets=[f"{RUN_DIR}/sock"],
            own=[str(p) for p in [*self.seal.writable, *self.seal.own]]
            + [str(m.target) for m in self.seal.readable],
            quiet=[*QUIET, *self.seal.quiet],
        )

    def audit(self) -> AuditReport:
        report = AuditReport(traced=self.auditing)
        bounds = self.bounds()
        for trace in self._traces:
            report = report.merge(parse_trace(trace, bounds))
        return report


class Bubblewrap(Isolation):
    name = NAME
    description = "bubblewrap namespaces: private mounts, PIDs and network; an unprivileged user"

    def problem(self) -> str | None:
        return _trial()

    def open(self, seal: Seal, scratch: Path | None = None) -> Sandbox:
        problem = self.problem()
        if problem:
            raise IsolationError(f"{problem}; or run with --isolation none (nothing sealed)")
        return BubblewrapSandbox(seal, scratch)
