"""The out-of-bounds audit: which paths outside what a sealed process was given it touched or tried to touch,
and which addresses it tried to connect to.

Two sources, both kept:
- **syscalls**: the sandbox runs under ``strace -f`` (seccomp-filtered, so only file syscalls, ``connect`` and
  forks stop the process), from OUTSIDE the sandbox: the sealed processes cannot see, stop or rewrite the
  trace. A path that is not mounted fails with ``ENOENT`` inside, so an attempt on the suite shows as exactly
  that: the path and the error. Paths are resolved against each process's working directory (strace decodes
  ``AT_FDCWD``).
- **transcripts**: the file paths of the agent's tool calls and the absolute paths its shell commands name, so
  an attempt is seen even where nothing ran it (a denied tool call).

``Bounds`` says what is in bounds: the folders the sandbox mounted (workspace, home, private /tmp, tools,
system). Everything else is listed; a path under a protected root (the suite, the results) is flagged.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

MAX_ENTRIES = 300  # per report; the rest is counted in ``truncated``
# distinct paths (and addresses) held while a trace is read; beyond, only the protected ones
MAX_TRACKED = 100_000

# syscalls traced; %file covers every syscall that takes a file name (open, stat, exec, chdir, rename, ...)
TRACE = "%file,connect,clone,clone3,fork,vfork"

# syscall -> positions of its path arguments, each (dirfd position or None, path position)
_AT: list[tuple[int | None, int]] = [(0, 1)]
_PLAIN: list[tuple[int | None, int]] = [(None, 0)]
PATH_ARGS: dict[str, list[tuple[int | None, int]]] = {
    **dict.fromkeys(
        (
            "open",
            "creat",
            "stat",
            "lstat",
            "access",
            "readlink",
            "execve",
            "chdir",
            "chroot",
            "statfs",
            "truncate",
            "mkdir",
            "rmdir",
            "unlink",
            "chmod",
            "chown",
            "lchown",
            "utime",
            "utimes",
            "mknod",
            "getxattr",
            "lgetxattr",
            "setxattr",
            "lsetxattr",
            "listxattr",
            "llistxattr",
            "removexattr",
            "lremovexattr",
            "uselib",
            "acct",
            "swapon",
            "swapoff",
        ),
        _PLAIN,
    ),
    **dict.fromkeys(
        (
            "openat",
            "openat2",
            "newfstatat",
            "fstatat64",
            "statx",
            "faccessat",
            "faccessat2",
            "readlinkat",
            "execveat",
            "mkdirat",
            "unlinkat",
            "fchmodat",
            "fchmodat2",
            "fchownat",
            "utimensat",
            "futimesat",
            "mknodat",
            "name_to_handle_at",
        ),
        _AT,
    ),
    "rename": [(None, 0), (None, 1)],
    "link": [(None, 0), (None, 1)],
    "symlink": [(None, 1)],
    "renameat": [(0, 1), (2, 3)],
    "renameat2": [(0, 1), (2, 3)],
    "linkat": [(0, 1), (2, 3)],
    "symlinkat": [(1, 2)],
    "inotify_add_watch": [(None, 1)],
}
WRITING = {
    "creat",
    "truncate",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "mknod",
    "mknodat",
    "setxattr",
    "lsetxattr",
    "removexattr",
    "lremovexattr",
}
_WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC")

_LINE = re.compile(r"^(?P<name>[a-z_0-9]+)\((?P<args>.*)\)\s+=\s+(?P<ret>.*)$")
_FD_PATH = re.compile(r"^(?:AT_FDCWD|-?\d+)<(?P<path>.*)>$")
_RET_FD = re.compile(r"^\d+<(?P<path>[^>]*)>")
_RET_ERR = re.compile(r"^-1 (?P<err>E[A-Z0-9]+)")
_CHILD = re.compile(r"^(\d+)(?: /\* (\d+) in strace's PID NS \*/)?")
_INET = re.compile(
    r'sin6?_port=htons\((?P<port>\d+)\).*?(?:inet_addr\("(?P<v4>[^"]+)"\)|inet_pton\(AF_INET6, '
    r'"(?P<v6>[^"]+)"\))'
)
_UNIX = re.compile(r'sun_path=(?P<path>@?"(?:[^"\\]|\\.)*")')


class PathTouch(BaseModel):
    """A path outside the sandbox's bounds that was touched or tried, summed over every attempt."""

    path: str
    ops: list[str] = Field(default_factory=list)  # syscalls, or a tool call's name
    results: list[str] = Field(default_factory=list)  # "ok" or the errno name (ENOENT: not mounted)
    write: bool = False  # tried to change it
    count: int = 0
    programs: list[str] = Field(default_factory=list)  # who (the executable's name, or "transcript")
    source: list[str] = Field(default_factory=list)  # "syscall", "transcript"
    protected: str | None = None  # "suite", "results", "other run", ... when under a protected root


class ConnectTry(BaseModel):
    """A connection attempt to an address the sandbox was not given."""

    address: str  # "10.0.0.1:443", "127.0.0.1:5432", "unix:/var/run/docker.sock"
    results: list[str] = Field(default_factory=list)
    count: int = 0
    programs: list[str] = Field(default_factory=list)


class AuditReport(BaseModel):
    out_of_bounds: list[PathTouch] = Field(default_factory=list)
    connects: list[ConnectTry] = Field(default_factory=list)
    truncated: int = 0  # entries left out beyond MAX_ENTRIES
    traced: bool = False  # the syscall trace ran (else: transcripts only)

    @property
    def protected_hits(self) -> list[PathTouch]:
        return [t for t in self.out_of_bounds if t.protected]

    def merge(self, other: AuditReport) -> AuditReport:
        out = AuditReport(traced=self.traced or other.traced, truncated=self.truncated + other.truncated)
        paths: dict[str, PathTouch] = {}
        for t in [*self.out_of_bounds, *other.out_of_bounds]:
            _merge_touch(paths, t)
        conns: dict[str, ConnectTry] = {}
        for c in [*self.connects, *other.connects]:
            got = conns.setdefault(c.address, ConnectTry(address=c.address))
            got.count += c.count
            got.results = sorted(set(got.results) | set(c.results))
            got.programs = sorted(set(got.programs) | set(c.programs))
        out.out_of_bounds, extra = _cap(sorted(paths.values(), key=_rank))
        out.connects = sorted(conns.values(), key=lambda c: c.address)[:MAX_ENTRIES]
        out.truncated += extra
        return out


def _merge_touch(into: dict[str, PathTouch], t: PathTouch) -> None:
    got = into.setdefault(t.path, PathTouch(path=t.path, protected=t.protected))
    got.ops = sorted(set(got.ops) | set(t.ops))
    got.results = sorted(set(got.results) | set(t.results))
    got.programs = sorted(set(got.programs) | set(t.programs))
    got.source = sorted(set(got.source) | set(t.source))
    got.write = got.write or t.write
    got.count += t.count
    got.protected = got.protected or t.protected


def _rank(t: PathTouch) -> tuple:
    return (t.protected is None, not t.write, t.path)


def _cap(items: list) -> tuple[list, int]:
    return items[:MAX_ENTRIES], max(0, len(items) - MAX_ENTRIES)


@dataclass
class Bounds:
    """What a sealed process was given. ``inside`` are the mounted roots (anything under them is in bounds
    unless it is a write that failed: a write refused by a read-only mount is listed); ``protected`` maps
    roots that must never be reached (not mounted) to a label; ``ignore`` are exact paths the runtimes
    probe on their own."""

    inside: list[str]
    protected: dict[str, str] = field(default_factory=dict)
    ignore: set[str] = field(default_factory=set)
    allowed_ports: set[int] = field(default_factory=set)  # loopback ports bridged into the sandbox
    allowed_sockets: list[str] = field(default_factory=list)  # Unix socket folders the launcher uses
    # the process's own folders (workspace, home, tools): never flagged
    own: list[str] = field(default_factory=list)
    # globs of lookups that find nothing and mean nothing (a CLI's
    quiet: list[str] = field(default_factory=list)
    # search for its settings, a runtime's search path): not listed when they fail with ENOENT...
    # ...unless under a root labelled so
    always: set[str] = field(default_factory=lambda: {"suite", "results"})

    def __post_init__(self) -> None:
        # the folders above a mount exist inside (bwrap makes them to mount on) and show only the mounted
        # names
        self.ancestors = {str(p) for root in self.inside for p in Path(root).parents}

    def contains(self, path: str) -> bool:
        return path in self.ancestors or any(_under(path, root) for root in self.inside)

    def protection(self, path: str) -> str | None:
        """The label of the protected root ``path`` is under (a root may be a glob: ``/tmp/skillassay-*``)."""
        if path in self.ancestors or any(_under(path, root) for root in self.own):
            return None
        for root, label in self.protected.items():
            if "*" in root:
                if fnmatch.fnmatchcase(path, root) or fnmatch.fnmatchcase(path, root.rstrip("/") + "/*"):
                    return label
            elif _under(path, root):
                return label
        return None


def _under(path: str, root: str) -> bool:
    if root == "/":
        return True
    return path == root or path.startswith(root.rstrip("/") + "/")


# ----------------------------------------------------------------------------- parsing strace output
def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments, respecting quotes, brackets and strace's ``<path>``
    decorations.
    """
    args, depth, cur, i = [], 0, [], 0
    in_str = False
    while i < len(text):
        ch = text[i]
        if in_str:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            cur.append(ch)
        elif ch in "([{<":
            depth += 1
            cur.append(ch)
        elif ch in ")]}>":
            depth = max(0, depth - 1)
            cur.append(ch)
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if cur or args:
        args.append("".join(cur).strip())
    return args


def _unquote(arg: str) -> str | None:
    """strace's C-escaped string argument -> text; None when the argument is not a string (NULL, a number)."""
    arg = arg.strip()
    arg = arg.removesuffix("...")
    if len(arg) < 2 or not (arg.startswith('"') and arg.endswith('"')):
        return None
    raw = codecs.escape_decode(arg[1:-1].encode("latin-1", "backslashreplace"))[0]
    return raw.decode("utf-8", "surrogateescape")


def _dir_of(arg: str) -> str | None:
    found = _FD_PATH.match(arg.strip())
    return found.group("path") if found else None


def _resolve(path: str, base: str | None) -> str:
    if not path.startswith("/"):
        path = os.path.join(base or "/", path)
    return os.path.normpath(path).replace("//", "/")


@dataclass
class _Proc:
    cwd: str
    program: str = "?"
    active: bool = False  # past the sandbox's own set-up: the sealed command or what it started


def _parse_file(path: Path) -> Iterator[tuple[str, str, str]]:
    """(syscall, args, return) per complete line of one process's trace, read as it goes (a trace may hold
    millions of lines: never all in memory at once)."""
    try:
        fh = path.open(encoding="latin-1")
    except OSError:
        return
    with fh:
        for line in fh:
            found = _LINE.match(line.rstrip("\n"))
            if found:
                yield found.group("name"), found.group("args"), found.group("ret").strip()


def _spawns(path: Path) -> list[tuple[int, int]]:
    """(line index, child host pid) of each fork/clone in one process's trace."""
    out = []
    for n, (name, _args, ret) in enumerate(_parse_file(path)):
        if name in ("clone", "clone3", "fork", "vfork"):
            found = _CHILD.match(ret)
            if found:
                out.append((n, int(found.group(2) or found.group(1))))
    return out


def parse_trace(
    trace_dir: Path, bounds: Bounds, start_cwd: str = "/", setup_programs: Iterable[str] = ("bwrap",)
) -> AuditReport:
    """Read ``strace -ff -o <trace_dir>/t`` output: one file per process (``t.<pid>``, host pids).

    Processes are walked parents first, each child from its parent's state where it was forked;
    iteratively, and reading each file as a stream, so a chain of thousands of forks or a trace of
    gigabytes (what an agent can make) costs time, never the harness's stack or memory."""
    files = {
        int(p.name.rsplit(".", 1)[1]): p for p in trace_dir.glob("t.*") if p.name.rsplit(".", 1)[1].isdigit()
    }
    children: dict[int, dict[int, int]] = {}  # parent -> {line index: child host pid}
    has_parent: set[int] = set()
    for pid, path in files.items():
        spawns = {n: child for n, child in _spawns(path) if child in files}
        if spawns:
            children[pid] = spawns
            has_parent.update(spawns.values())
    setup = set(setup_programs)
    paths: dict[str, PathTouch] = {}
    conns: dict[str, ConnectTry] = {}
    dropped = 0

    def visit(pid: int, state: _Proc) -> list[tuple[int, _Proc]]:
        nonlocal dropped
        spawn = children.get(pid, {})
        queue: list[tuple[int, _Proc]] = []
        target: str | None  # the path argument in hand
        for n, (name, args, ret) in enumerate(_parse_file(files[pid])):
            if n in spawn:
                queue.append((spawn[n], _Proc(state.cwd, state.program, state.active)))
                continue
            ok = not ret.startswith("-1")
            err = _RET_ERR.match(ret)
            result = "ok" if ok else (err.group("err") if err else ret.split(" ", 1)[0])
            argv = _split_args(args)
            if name in ("execve", "execveat") and ok:
                target = _unquote(argv[0 if name == "execve" else 1]) or ""
                state.program = os.path.basename(target) or state.program
                if state.program not in setup:
                    state.active = True
            if name == "chdir" and ok:
                target = _unquote(argv[0]) if argv else None
                if target is not None:
                    state.cwd = _resolve(target, state.cwd)
            if not state.active:
                continue
            if name == "connect":
                if len(conns) < MAX_TRACKED:
                    _record_connect(conns, args, result, state.program, bounds)
                continue
            positions = PATH_ARGS.get(name)
            if not positions:
                continue
            write = name in WRITING or (
                name in ("open", "openat", "openat2") and bool(_WRITE_FLAGS.search(args))
            )
            for dir_at, path_at in positions:
                if path_at >= len(argv):
                    continue
                target = _unquote(argv[path_at])
                if not target:
                    continue  # "" with AT_EMPTY_PATH: the descriptor itself
                base = _dir_of(argv[dir_at]) if dir_at is not None and dir_at < len(argv) else None
                full = _resolve(target, base or state.cwd)
                resolved = _RET_FD.match(ret) if ok and name in ("open", "openat", "openat2") else None
                if resolved and resolved.group("path").startswith("/"):
                    full = resolved.group("path")  # where it really led (through symlinks)
                if len(paths) >= MAX_TRACKED and full not in paths and not bounds.protection(full):
                    dropped += 1  # a flood of distinct paths: counted; what reaches the suite is always kept
                    continue
                _record_path(paths, full, name, result, write, state.program, bounds)
        return queue

    stack = [(root, _Proc(cwd=start_cwd)) for root in sorted(p for p in files if p not in has_parent)][::-1]
    seen: set[int] = set()
    while stack:
        pid, state = stack.pop()
        if pid in seen:
            continue  # a pid used again (one trace file for both): read once
        seen.add(pid)
        # children in the order they were forked, each before its later siblings
        stack += visit(pid, state)[::-1]
    report = AuditReport(traced=True)
    report.out_of_bounds, report.truncated = _cap(sorted(paths.values(), key=_rank))
    report.truncated += dropped
    report.connects = sorted(conns.values(), key=lambda c: c.address)[:MAX_ENTRIES]
    return report


def _record_path(
    paths: dict[str, PathTouch], full: str, op: str, result: str, write: bool, program: str, bounds: Bounds
) -> None:
    if full in bounds.ignore:
        return
    protected = bounds.protection(full)
    if (
        protected not in bounds.always
        and result == "ENOENT"
        and any(fnmatch.fnmatchcase(full, q) for q in bounds.quiet)
    ):
        return
    inside = bounds.contains(full)
    # in bounds: a mounted folder, unless a write there was refused (a read-only tool or system folder)
    if inside and not protected and not (write and result in ("EROFS", "EACCES", "EPERM")):
        return
    touch = PathTouch(
        path=full,
        ops=[op],
        results=[result],
        write=write,
        count=1,
        programs=[program],
        source=["syscall"],
        protected=protected,
    )
    _merge_touch(paths, touch)


def _record_connect(
    conns: dict[str, ConnectTry], args: str, result: str, program: str, bounds: Bounds
) -> None:
    inet = _INET.search(args)
    if inet:
        host = inet.group("v4") or inet.group("v6")
        port = int(inet.group("port"))
        if host in ("127.0.0.1", "::1") and port in bounds.allowed_ports:
            return
        address = f"[{host}]:{port}" if ":" in (host or "") else f"{host}:{port}"
    else:
        unix = _UNIX.search(args)
        if not unix:
            return  # AF_NETLINK and the like: the sandbox's own plumbing
        raw = unix.group("path")
        path = ("@" + (_unquote(raw[1:]) or "")) if raw.startswith("@") else (_unquote(raw) or "")
        if path in bounds.ignore or any(_under(path, d) for d in bounds.allowed_sockets):
            return
        address = f"unix:{path}"
    if result == "EINPROGRESS":
        result = "attempted"  # a non-blocking connect: its outcome is not a syscall's return
    got = conns.setdefault(address, ConnectTry(address=address))
    got.count += 1
    got.results = sorted(set(got.results) | {result})
    got.programs = sorted(set(got.programs) | {program})


# ----------------------------------------------------------------------------- transcripts
_ABS_PATH = re.compile(r"""(?:(?<=[\s'"=:(])|^)(/(?:[\w.@+-]+/?)+)""")
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "dir", "directory", "cwd")


def transcript_touches(tool_calls: Iterable, workspace: Path | str, bounds: Bounds) -> list[PathTouch]:
    """Paths outside the workspace named by the agent's tool calls: file tools' path arguments and the
    absolute paths in shell commands. ``tool_calls`` are ``skillassay.transcripts.ToolCall``s."""
    ws = os.path.normpath(str(workspace))
    out: dict[str, PathTouch] = {}
    for call in tool_calls:
        names: list[tuple[str, bool]] = []
        inputs = call.input if isinstance(call.input, dict) else {}
        for key in _PATH_KEYS:
            value = inputs.get(key)
            if isinstance(value, str) and value:
                names.append((value, call.kind in ("write", "edit")))
        for change in inputs.get("changes") or []:  # Codex's apply_patch
            if isinstance(change, dict) and isinstance(change.get("path"), str):
                names.append((change["path"], True))
        command = call.command or (inputs.get("command") if isinstance(inputs.get("command"), str) else None)
        if command:
            names.extend((m, False) for m in _ABS_PATH.findall(command))
        for name, write in names:
            full = _resolve(name, ws)
            if _under(full, ws):
                continue
            protected = bounds.protection(full)
            if not protected and (bounds.contains(full) or full in bounds.ignore):
                continue
            result = "denied" if getattr(call, "denied", False) else ("error" if call.is_error else "ok")
            _merge_touch(
                out,
                PathTouch(
                    path=full,
                    ops=[call.name],
                    results=[result],
                    write=write,
                    count=1,
                    programs=["transcript"],
                    source=["transcript"],
                    protected=protected,
                ),
            )
    return sorted(out.values(), key=_rank)
