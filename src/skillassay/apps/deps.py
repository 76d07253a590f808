"""Dependency installs cached by what determines them, so an unchanged repeat installs nothing. Each runtime
family's stack (``stacks.base.Stack``) says which installer fills it and what keys it:

- a folder installer (Node's ``node_modules``): the folder built once per hash of (the runtime's version, the
  install command, what of the stack's ``dependency_files`` decides the install: for npm what it reads from
  package.json and package-lock.json, and .npmrc) in ``<cache>/deps/<family>-<hash>/``, then symlinked into
  the app copy (for the build of an app whose build tool refuses a symlink, Next.js: mounted in place when
  sealed, else hard linked).
- the venv installer (Python): a venv made from the running Python, once per hash of (Python version,
  requirements files, extra packages), in ``<cache>/deps/py-<hash>/``; used in place (venvs are not
  relocatable) by putting its ``bin`` first on PATH.

``<cache>`` is ``$SKILLASSAY_CACHE_DIR`` or ``~/.cache/skillassay``. A cache entry is complete only once its
``.complete`` marker exists; builds of one entry are serialised with a file lock so concurrent validations
share the work: an install of one key, and a build of one tree (``build_once``), runs once however many
processes want it at the same time.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skillassay import stacks
from skillassay.apps.runplan import InstallSpec
from skillassay.apps.steps import StepFailed, run_step
from skillassay.isolation.reach import RegistryUnreachable, unreachable
from skillassay.paths import cache_dir
from skillassay.stacks import Stack
from skillassay.stacks.python import local_requirement, requirement_refs
from skillassay.untrusted import copy_entry, make_dirs, read_regular
from skillassay.workspace.skiplist import SKIP_DIRS

MARKER = ".complete"

# the sandbox an install runs in, given the cache entry it may write (skillassay.isolation.Sandbox)
SealFor = Callable[[Path], Any]


def cache_root() -> Path:
    return cache_dir()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()[:20]


# the runtime versions by family, read once per process (part of a folder install's cache key)
_versions: dict[str, str] = {}


def runtime_version(stack: Stack) -> str:
    """What ``stack.version_command`` prints ("" without one)."""
    if not stack.version_command:
        return ""
    if stack.family not in _versions:
        try:
            _versions[stack.family] = subprocess.run(
                list(stack.version_command), capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as e:
            raise StepFailed(
                "install", f"{stack.version_command[0]} is not available on this machine: {e}"
            ) from e
    return _versions[stack.family]


ABSENT = b"<absent>"


def _key_bytes(app_dir: Path, name: str) -> bytes:
    """What a manifest adds to a cache key: its bytes, or the text of a link (never followed: the app's copy
    is the agent's, and a link may name any host file), or what kind of thing stands there (a fifo is never
    opened)."""
    path = app_dir / name
    try:
        info = os.lstat(path)
    except OSError:
        return ABSENT
    if stat.S_ISLNK(info.st_mode):
        return b"\0link\0" + os.fsencode(os.readlink(path))
    try:
        return read_regular(name, root=app_dir)
    except OSError:
        return b"\0special\0"


def install_key(stack: Stack, app_dir: Path, argv: list[str]) -> str:
    """A folder install's cache entry: its family, the runtime's version, the install command and what of
    each of the stack's ``dependency_files`` decides the install (``Stack.install_key``)."""
    parts = [runtime_version(stack).encode(), json.dumps(argv).encode()]
    for name in stack.dependency_files:
        data = _key_bytes(app_dir, name)
        if data != ABSENT and not data.startswith(b"\0"):
            data = stack.install_key(name, data)
        parts.append(name.encode() + data)
    return f"{stack.family}-" + _digest(parts)


def node_key(app_dir: Path, npm_argv: list[str]) -> str:
    return install_key(stacks.family("node"), app_dir, npm_argv)


def python_key(app_dir: Path, spec: InstallSpec) -> str:
    parts = [sys.version.encode(), json.dumps(spec.pip_args).encode()]
    local = any(local_requirement(a) for a in spec.pip_args)
    seen: set[str] = set()
    todo = list(spec.pip_requirements)
    while todo:
        name = todo.pop(0)
        if name in seen or len(seen) > 50:
            continue
        seen.add(name)
        data = _key_bytes(app_dir, name)
        parts.append(name.encode() + data)
        nested, has_local = requirement_refs(name, data)
        todo += nested
        local = local or has_local
    if local:
        # what pip installs depends on the app's own files (`-e .`, `./pkg`): two apps with the same
        # requirements file but different code must not share one venv (the second would run the first's
        # package)
        parts.append(b"\0tree\0" + build_key(app_dir, [], "").encode())
    return "py-" + _digest(parts)


def fetch(
    step: str, argv: list[str], *, cwd: Path, env: Mapping[str, str], log: Path, timeout: float, sandbox: Any
) -> None:
    """Run an install step that fetches from the registries ``sandbox`` may reach, blaming exactly: a
    declared registry this machine cannot reach (probed by the harness, before and again after a failure) is a
    harness error naming it (``RegistryUnreachable``); a failure while all of them answer is the app's (what
    its manifest names cannot be fetched: a package no registry has, a host not on the list)."""
    registries = list(sandbox.seal.registries) if sandbox is not None else []
    if down := unreachable(registries):  # said at once, not after a long retrying install
        _note(log, str(error := RegistryUnreachable(down, step)))
        raise error
    try:
        run_step(step, argv, cwd=cwd, env=env, log=log, timeout=timeout, sandbox=sandbox)
    except StepFailed as failed:
        if down := unreachable(registries, fresh=True):
            _note(log, str(error := RegistryUnreachable(down, f"{step}: {failed.reason}")))
            raise error from failed
        if registries:
            _note(
                log, f"the registries ({', '.join(registries)}) answer the harness: what failed is the app's"
            )
        raise


def _note(log: Path, line: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        f.write(f"skillassay: {line}\n")


def ensure_install(
    stack: Stack,
    app_dir: Path,
    argv: list[str],
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    seal: SealFor | None = None,
) -> tuple[Path, bool]:
    """Return (the cache entry holding ``stack.dependency_folder``, cache hit), installing it when missing
    with ``argv`` (``Stack.install_command``). Reads only the stack's ``dependency_files`` of ``app_dir``
    (copied into the entry); writes nothing there. ``seal(entry)`` gives the sandbox the install runs in,
    with only the cache entry it fills writable."""
    needed = stack.dependency_files[0]
    if not (app_dir / needed).exists():
        raise StepFailed("install", f"{' '.join(argv[:2])}: no {needed} in the app")
    key = install_key(stack, app_dir, argv)
    entry = cache_root() / "deps" / key
    hit = True
    with _locked(entry.with_name(key + ".lock")):
        if not (entry / MARKER).exists():
            hit = False
            shutil.rmtree(entry, ignore_errors=True)
            entry.mkdir(parents=True)
            for name in stack.dependency_files:
                if os.path.lexists(app_dir / name):
                    # a link stays a link: the install sees what it names
                    copy_entry(app_dir / name, entry / name)
            command = stack.install_command(argv, entry)
            try:
                box = seal(entry) if seal else None
                fetch("install", command, cwd=entry, env=env, log=log, timeout=timeout, sandbox=box)
            except BaseException:
                shutil.rmtree(entry, ignore_errors=True)
                raise
            (entry / (stack.dependency_folder or stack.family)).mkdir(exist_ok=True)
            (entry / MARKER).write_text(json.dumps({"argv": command}))
    return entry, hit


def ensure_node_modules(
    app_dir: Path,
    npm_argv: list[str],
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    seal: SealFor | None = None,
) -> bool:
    """Make ``app_dir/node_modules`` point at a cached install (``ensure_linked`` for the Node family).
    Returns True on a cache hit."""
    return ensure_linked(stacks.family("node"), app_dir, npm_argv, env, log, timeout, seal)


def ensure_linked(
    stack: Stack,
    app_dir: Path,
    argv: list[str],
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    seal: SealFor | None = None,
) -> bool:
    """Make ``app_dir/<stack.dependency_folder>`` a link to a cached install (``ensure_install``), whatever
    stood there before. Returns True on a cache hit."""
    assert stack.dependency_folder is not None, f"the {stack.family} family installs no folder"
    entry, hit = ensure_install(stack, app_dir, argv, env, log, timeout, seal)
    target = app_dir / stack.dependency_folder
    if target.is_symlink() or target.exists():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    target.symlink_to(entry / stack.dependency_folder, target_is_directory=True)
    return hit


def ensure_venv(
    app_dir: Path,
    spec: InstallSpec,
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    with_pip: bool = False,
    seal: SealFor | None = None,
) -> tuple[Path, bool]:
    """Return (venv dir, cache hit). The venv is made from the running Python.

    Without ``with_pip`` (nothing in the app runs pip itself) the venv is made without pip and filled by the
    running Python's pip (``pip --python``): seconds faster than bootstrapping pip into every new venv.
    """
    import importlib.util

    outer_pip = not with_pip and importlib.util.find_spec("pip") is not None
    for name in spec.pip_requirements:
        if not (app_dir / name).exists():
            raise StepFailed("install", f"pip install -r {name}: the file is missing from the app")
    key = python_key(app_dir, spec) + ("-pip" if not outer_pip else "")
    entry = cache_root() / "deps" / key
    hit = True
    with _locked(entry.with_name(key + ".lock")):
        if not (entry / MARKER).exists():
            hit = False
            shutil.rmtree(entry, ignore_errors=True)
            try:
                box = seal(entry) if seal else None
                venv = [_base_python(), "-m", "venv", str(entry)] + (["--without-pip"] if outer_pip else [])
                run_step("install", venv, cwd=app_dir, env=env, log=log, timeout=timeout, sandbox=box)
                if outer_pip:
                    pip = [_base_python(), "-m", "pip", "--python", str(entry / "bin" / "python"), "install"]
                else:
                    pip = [str(entry / "bin" / "python"), "-m", "pip", "install"]
                pip += ["--disable-pip-version-check", "-q"]
                args = [a for r in spec.pip_requirements for a in ("-r", r)] + spec.pip_args
                if args:
                    fetch("install", pip + args, cwd=app_dir, env=env, log=log, timeout=timeout, sandbox=box)
            except BaseException:
                shutil.rmtree(entry, ignore_errors=True)
                raise
            (entry / MARKER).write_text(
                json.dumps({"requirements": spec.pip_requirements, "args": spec.pip_args})
            )
    return entry, hit


def needs_real_node_modules(app_dir: Path) -> bool:
    """``needs_real_folder`` for ``node_modules``."""
    return needs_real_folder(app_dir, "node_modules")


def needs_real_folder(app_dir: Path, folder: str) -> bool:
    """The app is of a stack whose build tool will not read a node_modules outside the project root
    (``Stack.refuses_linked_dependencies``). Next.js's Turbopack (the default `next build` since Next 16)
    refuses the cache's symlink ("files outside of the workspace root are not compiled"), so an app that
    depends on it gets, for its build, a node_modules of hard links to the cached files instead."""
    for stack in stacks.all_stacks():
        refuses = stack.refuses_linked_dependencies and stack.dependency_folder == folder
        if refuses and stack.package is not None and stack.belongs(app_dir):
            try:
                if stack.declares(app_dir, stack.package, strict=True):
                    return True
            except (OSError, ValueError):
                continue
    return False


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem (EXDEV) or links not allowed: a copy, slower but the same files
        shutil.copy2(src, dst)


def materialise_node_modules(app_dir: Path, folder: str = "node_modules") -> bool:
    """Replace the ``folder`` symlink into the cache by a tree of hard links to the same files (the
    folders are the copy's own, so files a build adds stay in the copy). Returns False when there was no
    such symlink.

    Hard links share the cached files' contents: like the symlink, a build that rewrites a file inside
    node_modules in place changes it for later runs (see the limits in docs/sandbox.md)."""
    target = app_dir / folder
    if not target.is_symlink():
        return False
    source = target.resolve()
    target.unlink()
    shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)
    return True


def copy_linked_folder(app_dir: Path, folder: str) -> bool:
    """Replace the ``folder`` symlink into the cache by a copy of the cached files, for a family whose
    runtime will not use its dependencies through a link (``Stack.refuses_linked_dependencies`` of the
    family: PHP's autoloader finds the app from where ``vendor`` really lies). Copies, not hard links: the
    app writes its copy at run time, and through a hard link its writes would reach the cache. Returns
    False when there was no such symlink."""
    target = app_dir / folder
    if not target.is_symlink():
        return False
    source = target.resolve()
    target.unlink()
    shutil.copytree(source, target, symlinks=True)
    return True


def _base_python() -> str:
    # The running interpreter; `python -m venv` from inside a venv makes a venv of the same base Python (its
    # own installation, none of the running venv's packages): the Python every app venv runs on, in both
    # layers.
    return sys.executable


# ----------------------------------------------------------------------------- build outputs
# Like Docker's layer cache for `COPY . . ; RUN npm run build`: when the whole source tree, the dependencies
# and the build commands are unchanged, the files the build produced are restored instead of building again.
# The sources are what the change's skip-list keeps; its output folders (dist/, build/...) are what a build
# produces, so they are seen here. Produced by a build but not needed to start the app: a build tool's own
# incremental cache (Next.js keeps ~30 MB of compiler cache in .next/cache; `next start` does not read it).
# Not stored, so a restore copies only what runs.
BUILD_OUTPUT_SKIP = (".next/cache/",)


def _walk_files(root: Path, links: bool = False) -> Iterator[Path]:
    """Files (and links to files) below ``root``; with ``links``, links to folders too (never entered)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        names = filenames + (
            [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))] if links else []
        )
        for name in sorted(names):
            yield Path(dirpath) / name


def tree_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for f in _walk_files(root):
        st = f.lstat()
        out[str(f.relative_to(root))] = (st.st_mtime_ns, st.st_size)
    return out


def build_key(root: Path, build: list[list[str]], deps_key: str) -> str:
    parts = [json.dumps(build).encode(), deps_key.encode()]
    # every entry, links to folders included (a tree with `lib -> /somewhere` is not the tree with an empty
    # `lib/`); links never followed, fifos never opened
    for f in _walk_files(root, links=True):
        rel = os.fsencode(str(f.relative_to(root)))
        if f.is_symlink():
            content = b"<link>" + os.fsencode(os.readlink(f))
        else:
            try:
                content = read_regular(f)
            except OSError:
                content = b"<special>"
        parts.append(rel + b"\0" + content)
    return "build-" + _digest(parts)


def restore_build(root: Path, key: str) -> bool:
    entry = cache_root() / "builds" / key
    if not (entry / MARKER).exists():
        return False
    files = entry / "files"
    if files.exists():
        # into the app's copy without passing through any link in it (a link the agent left where the build
        # writes would carry the cached outputs anywhere on the host)
        for dirpath, _, filenames in os.walk(files):
            rel_dir = os.path.relpath(dirpath, files)
            target = make_dirs(root, "" if rel_dir == "." else rel_dir)
            for name in filenames:
                copy_entry(Path(dirpath) / name, target / name)
    return True


@contextmanager
def building(key: str) -> Iterator[None]:
    """Hold the build of ``key`` (a ``build_key``): another process or thread building the same tree at once
    (an xdist worker, a parallel eval's sandbox) waits here until this build has ended, then finds its
    outputs in the cache. A lock of its own, apart from the one ``save_build`` takes inside it."""
    with _locked(cache_root() / "builds" / f"{key}.building"):
        yield


def build_once(root: Path, key: str, build: Callable[[], None]) -> bool:
    """The build outputs cached under ``key`` copied into ``root``, else ``build()`` run there and what it
    produced saved under ``key``; one build per key at a time (``building``), so two builds of the same tree
    at once build it once. Returns True when the outputs came from the cache. A failed build saves nothing
    (the next one waiting builds for itself)."""
    with building(key):
        if restore_build(root, key):
            return True
        before = tree_snapshot(root)
        build()
        save_build(root, key, before)
        return False


def save_build(root: Path, key: str, before: dict[str, tuple[int, int]]) -> None:
    entry = cache_root() / "builds" / key
    after = tree_snapshot(root)
    produced = [
        rel
        for rel, sig in after.items()
        if before.get(rel) != sig and not rel.replace(os.sep, "/").startswith(BUILD_OUTPUT_SKIP)
    ]
    with _locked(entry.with_name(key + ".lock")):
        if (entry / MARKER).exists():
            return
        shutil.rmtree(entry, ignore_errors=True)
        (entry / "files").mkdir(parents=True)
        for rel in produced:
            dest = entry / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest, follow_symlinks=False)
        (entry / MARKER).write_text(json.dumps({"files": len(produced)}))
