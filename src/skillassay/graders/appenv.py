"""The app's own environment: where quality gates, hidden tests and the agent's new tests run.

Built from the app's own manifest with the sandbox layer's install cache (``apps/deps.py``: keyed by
content, shared by runs and by both layers, filled by a sealed install that reaches only the registries,
mounted read-only into the commands that use it), never from skillassay's own environment:

- Python: a virtual environment of the Python skillassay runs on, its base installation (the same interpreter
  the sandbox layer runs apps on; none of skillassay's own packages), holding what the app's requirements
  files install (``requirements.txt``, ``requirements-dev.txt``, ``requirements-test.txt``,
  ``dev-requirements.txt``, ``test-requirements.txt``, and the files they include with ``-r``/``-c``) or, with
  none of them, what its ``pyproject.toml`` declares (``[project] dependencies``, the
  ``test``/``tests``/``testing``/``dev`` extras and dependency groups).
- Node: ``node_modules`` from ``package.json`` (``npm ci`` with ``package-lock.json``, ``npm install``
  without).
- An app with no manifest at all gets a bare virtual environment: the interpreter with nothing installed. A
  command needing more (``python -m pytest``) then cannot start, which is a harness error naming the missing
  manifest.

The manifest is read from each side's tree: the pristine app's for the pristine app, the agent's for the
modified one (the same content, the same cache entry: built once). The files are read without following links
and copied to a folder of the harness's own before anything installs from them; requirement lines that point
at the app's own files (``-e .``, ``./pkg``) are not followed (the install fails and says so).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillassay.isolation import Mount, Sandbox
from skillassay.untrusted import Refused, read_regular, remove

Side = Literal["pristine", "modified"]

REQUIREMENTS = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
)
PYPROJECT_GROUPS = ("test", "tests", "testing", "dev")
NODE_FILES = ("package.json", "package-lock.json", ".npmrc")
MAX_MANIFEST = 2 << 20  # bytes per manifest file
MAX_FILES = 32


class ManifestError(Exception):
    """A manifest file the harness will not read (a link, not a regular file, too large, outside the app)."""


def _read(root: Path, rel: str) -> bytes | None:
    """``root/rel`` if it is a regular file reached through no link (None if absent); never blocks on a
    fifo.
    """
    try:
        return read_regular(rel, root=root, limit=MAX_MANIFEST)
    except FileNotFoundError:
        return None
    except Refused as exc:
        raise ManifestError(f"{rel}: {exc.strerror} (not read)") from None
    except NotADirectoryError:
        return None


@dataclass
class Manifest:
    """What an app declares it needs, as read from its tree."""

    # relative path -> bytes: everything an install reads
    files: dict[str, bytes] = field(default_factory=dict)
    # the requirements files given to pip (-r), in order
    requirements: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)  # requirement strings from pyproject.toml
    node: bool = False  # package.json: node_modules are installed

    @property
    def python(self) -> bool:
        """A Python environment is made for a Python app, and for an app declaring nothing (the bare
        interpreter).
        """
        return bool(self.requirements or self.packages) or not self.node

    @property
    def names(self) -> list[str]:
        return list(self.files)

    @property
    def signature(self) -> str:
        h = hashlib.sha256()
        for rel, data in sorted(self.files.items()):
            h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        h.update(repr(self.packages).encode())
        return h.hexdigest()


def _pyproject_packages(data: bytes) -> list[str]:
    try:
        doc = tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"pyproject.toml is not valid TOML: {exc}") from None
    project = section if isinstance(section := doc.get("project"), dict) else {}
    found: list[Any] = list(project.get("dependencies") or [])
    extras = section if isinstance(section := project.get("optional-dependencies"), dict) else {}
    groups = section if isinstance(section := doc.get("dependency-groups"), dict) else {}
    for name in PYPROJECT_GROUPS:
        found += list(extras.get(name) or []) + list(groups.get(name) or [])
    # requirement strings only: an option ("--index-url=...") or an include table is not a package
    return list(
        dict.fromkeys(
            p.strip() for p in found if isinstance(p, str) and p.strip() and not p.strip().startswith("-")
        )
    )


def read_manifest(app_dir: Path) -> Manifest:
    """The app's manifest files (raises ManifestError for one the harness will not read)."""
    from skillassay.apps.deps import requirement_refs

    root = Path(app_dir)
    out = Manifest()
    for name in REQUIREMENTS:
        data = _read(root, name)
        if data is not None:
            out.files[name] = data
            out.requirements.append(name)
    queue = list(out.requirements)
    while queue and len(out.files) < MAX_FILES:  # the files they include (-r, -c), read the same way
        rel = queue.pop(0)
        for inc in requirement_refs(rel, out.files[rel])[0]:
            inc = inc.replace(os.sep, "/")
            if inc.startswith(("/", "../")) or inc == "..":
                continue  # outside the app: not read (pip, sealed, cannot read it either)
            if inc not in out.files and (data := _read(root, inc)) is not None:
                out.files[inc] = data
                queue.append(inc)
    if not out.requirements and (data := _read(root, "pyproject.toml")) is not None:
        out.packages = _pyproject_packages(data)
        out.files["pyproject.toml"] = data
    if (data := _read(root, "package.json")) is not None:
        out.node = True
        out.files["package.json"] = data
        for name in NODE_FILES[1:]:
            if (more := _read(root, name)) is not None:
                out.files[name] = more
    return out


@dataclass
class AppEnv:
    """One side's environment, ready (or why not: ``error``)."""

    side: Side
    manifest: list[str] = field(default_factory=list)  # the files it was built from ([]: none)
    venv: Path | None = None
    node_modules: Path | None = None  # the cached install's node_modules folder
    error: str | None = None  # it cannot be used (its install failed): why, with the install log's tail
    log: Path | None = None
    cache_hits: dict[str, bool] = field(default_factory=dict)  # "python"/"node" -> taken from the cache

    def describe(self) -> str:
        if not self.manifest:
            return (
                "no manifest (requirements.txt, pyproject.toml or package.json): the bare interpreter, "
                "nothing "
                "installed"
            )
        return "installed from " + ", ".join(self.manifest)

    def attach(self, workdir: Path, sealed: bool) -> tuple[list[Mount], list[str]]:
        """Make the environment visible to commands run in ``workdir`` (a copy the harness made): (read-only
        mounts, folders to put first on PATH). Sealed, the cached node_modules is mounted in place,
        read-only; unsealed, it is a link (hard links for build tools that refuse one)."""
        mounts: list[Mount] = []
        path: list[str] = []
        if self.venv is not None:
            mounts.append(Mount(src=self.venv))
            path.append(str(self.venv / "bin"))
        if self.node_modules is not None:
            target = Path(workdir) / "node_modules"
            # whatever the agent left there (the copy leaves node_modules out; a link is no folder)
            remove(target)
            if sealed:
                target.mkdir()
                mounts.append(Mount(src=self.node_modules, dest=target))
            else:
                from skillassay.apps import deps

                target.symlink_to(self.node_modules, target_is_directory=True)
                if deps.needs_real_node_modules(Path(workdir)):
                    deps.materialise_node_modules(Path(workdir))
            path.append(str(target / ".bin"))
        return mounts, path

    def variables(self) -> dict[str, str]:
        return {"VIRTUAL_ENV": str(self.venv)} if self.venv is not None else {}


# the sandbox an install runs in: (the cache entry it fills, the folder holding the manifest) -> Sandbox
InstallSeal = Callable[[Path, Path], Sandbox]


def build(
    app_dir: Path,
    side: Side,
    staging: Path,
    log: Path,
    *,
    seal: InstallSeal | None,
    env: dict[str, str],
    timeout: float = 600.0,
    manifest: Manifest | None = None,
) -> AppEnv:
    """Install ``side``'s environment from the manifest in ``app_dir`` (or ``manifest``, read already),
    through the install cache. Never raises for the install itself: a failed install is ``AppEnv.error``."""
    from skillassay.apps import deps
    from skillassay.apps.runplan import InstallSpec
    from skillassay.apps.steps import StepFailed, tail

    out = AppEnv(side=side, log=log)
    try:
        manifest = manifest or read_manifest(app_dir)
    except ManifestError as exc:
        out.error = f"the app's manifest cannot be used: {exc}"
        return out
    out.manifest = manifest.names
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for rel, data in manifest.files.items():
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_bytes(data)

    def sealed(entry: Path):
        entry.mkdir(parents=True, exist_ok=True)  # `python -m venv` fills an empty folder as well
        return seal(entry, staging) if seal else None

    try:
        if manifest.python:
            spec = InstallSpec(pip_requirements=manifest.requirements, pip_args=manifest.packages)
            out.venv, out.cache_hits["python"] = deps.ensure_venv(
                staging, spec, env, log, timeout, seal=sealed
            )
        if manifest.node:
            argv = ["npm", "ci"] if "package-lock.json" in manifest.files else ["npm", "install"]
            entry, out.cache_hits["node"] = deps.ensure_node_install(
                staging, argv, env, log, timeout, seal=sealed
            )
            out.node_modules = entry / "node_modules"
    except StepFailed as exc:
        out.error = (
            f"could not install the app's dependencies ({', '.join(manifest.names) or 'none'}): "
            f"{exc.reason}\n{(exc.log_tail or tail(log, 1500)).strip()[-1500:]}"
        )
    return out
