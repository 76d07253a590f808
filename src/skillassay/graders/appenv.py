"""The app's own environment: where quality gates, hidden tests and the agent's new tests run.

Built from the app's own manifests with the sandbox layer's install cache (``apps/deps.py``: keyed by
content, shared by runs and by both layers, filled by a sealed install that reaches only the registries,
mounted read-only into the commands that use it), never from skillassay's own environment. Each runtime
family's stack (``stacks.base.Stack.dependencies``) says which of the app's files declare its dependencies
and how they are read; its ``installer`` which cache fills them:

- Python (the venv installer): a virtual environment of the Python skillassay runs on, its base installation
  (the same interpreter the sandbox layer runs apps on; none of skillassay's own packages), holding what the
  app's requirements files install (``requirements.txt``, ``requirements-dev.txt``, ``requirements-test.txt``,
  ``dev-requirements.txt``, ``test-requirements.txt``, and the files they include with ``-r``/``-c``) or, with
  none of them, what its ``pyproject.toml`` declares (``[project] dependencies``, the
  ``test``/``tests``/``testing``/``dev`` extras and dependency groups).
- Node (a folder installer): ``node_modules`` from ``package.json`` (``npm ci`` with ``package-lock.json``,
  ``npm install`` without); another family's folder the same way, by its stack's install command.
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
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillassay import stacks
from skillassay.isolation import Mount, Sandbox
from skillassay.stacks import Dependencies
from skillassay.untrusted import Refused, read_regular, remove

Side = Literal["pristine", "modified"]

MAX_MANIFEST = 2 << 20  # bytes per manifest file


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
    """What an app declares it needs, as its stacks read it from its tree: one entry per runtime family, in
    the families' order."""

    families: dict[str, Dependencies] = field(default_factory=dict)

    def declares(self, family: str) -> bool:
        return family in self.families

    def _venv_families(self) -> list[Dependencies]:
        return [d for d in self.families.values() if stacks.family(d.family).installer == "venv"]

    @property
    def files(self) -> dict[str, bytes]:
        """Relative path -> bytes: everything an install reads."""
        return {rel: data for d in self.families.values() for rel, data in d.files.items()}

    @property
    def requirements(self) -> list[str]:
        """The requirements files given to pip (-r), in order."""
        return [r for d in self._venv_families() for r in d.requirements]

    @property
    def packages(self) -> list[str]:
        """Requirement strings given to pip (pyproject.toml's)."""
        return [p for d in self._venv_families() for p in d.packages]

    @property
    def venv(self) -> bool:
        """A virtual environment is made for a Python app, and for an app declaring nothing else (the bare
        interpreter).
        """
        venv = self._venv_families()
        return any(d.installs for d in venv) or len(venv) == len(self.families)

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


def read_manifest(app_dir: Path) -> Manifest:
    """The app's manifest files, as each runtime family's stack reads them (raises ManifestError for one the
    harness will not read)."""
    root = Path(app_dir)
    out = Manifest()
    for stack in stacks.families():
        try:
            found = stack.dependencies(lambda rel: _read(root, rel))
        except ValueError as exc:
            raise ManifestError(str(exc)) from None
        if found is not None:
            out.families[stack.family] = found
    return out


@dataclass
class AppEnv:
    """One side's environment, ready (or why not: ``error``)."""

    side: Side
    manifest: list[str] = field(default_factory=list)  # the files it was built from ([]: none)
    venv: Path | None = None
    # runtime family -> its cached install's folder (``Stack.dependency_folder``: node_modules)
    folders: dict[str, Path] = field(default_factory=dict)
    error: str | None = None  # it cannot be used (its install failed): why, with the install log's tail
    log: Path | None = None
    cache_hits: dict[str, bool] = field(default_factory=dict)  # family ("python", "node") -> from the cache

    def describe(self) -> str:
        if not self.manifest:
            *most, last = [m for s in stacks.families() for m in s.manifests]
            return f"no manifest ({', '.join(most)} or {last}): the bare interpreter, nothing installed"
        return "installed from " + ", ".join(self.manifest)

    def attach(self, workdir: Path, sealed: bool) -> tuple[list[Mount], list[str]]:
        """Make the environment visible to commands run in ``workdir`` (a copy the harness made): (read-only
        mounts, folders to put first on PATH). Sealed, a cached folder (node_modules) is mounted in place,
        read-only; unsealed, it is a link (hard links for build tools that refuse one)."""
        mounts: list[Mount] = []
        path: list[str] = []
        if self.venv is not None:
            mounts.append(Mount(src=self.venv))
            path.append(str(self.venv / "bin"))
        for family, cached in self.folders.items():
            stack = stacks.family(family)
            name = stack.dependency_folder or family
            target = Path(workdir) / name
            # whatever the agent left there (the copy leaves node_modules out; a link is no folder)
            remove(target)
            if sealed:
                target.mkdir()
                mounts.append(Mount(src=cached, dest=target))
            else:
                from skillassay.apps import deps

                target.symlink_to(cached, target_is_directory=True)
                if stack.refuses_linked_dependencies:  # the whole family's runtime (PHP's vendor): a copy
                    deps.copy_linked_folder(Path(workdir), name)
                elif deps.needs_real_folder(Path(workdir), name):
                    deps.materialise_node_modules(Path(workdir), name)
            path += [str(p) for p in stack.dependency_bins(Path(workdir))]
        return mounts, path

    def bin_dirs(self, workdir: Path | None) -> list[str]:
        """The program folders of the environment, first on a command's PATH (the venv's ``bin``, and in
        ``workdir`` the installed folders' programs: ``node_modules/.bin``)."""
        out = [str(self.venv / "bin")] if self.venv is not None else []
        if workdir is not None:
            out += [str(p) for f in self.folders for p in stacks.family(f).dependency_bins(Path(workdir))]
        return out

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
        if manifest.venv:
            spec = InstallSpec(pip_requirements=manifest.requirements, pip_args=manifest.packages)
            out.venv, out.cache_hits[_venv_family()] = deps.ensure_venv(
                staging, spec, env, log, timeout, seal=sealed
            )
        for found in manifest.families.values():
            stack = stacks.family(found.family)
            if stack.installer != "venv" and found.install:  # a folder install, by the stack's command
                entry, out.cache_hits[found.family] = deps.ensure_install(
                    stack, staging, found.install, env, log, timeout, seal=sealed
                )
                out.folders[found.family] = entry / (stack.dependency_folder or found.family)
    except StepFailed as exc:
        out.error = (
            f"could not install the app's dependencies ({', '.join(manifest.names) or 'none'}): "
            f"{exc.reason}\n{(exc.log_tail or tail(log, 1500)).strip()[-1500:]}"
        )
    return out


def _venv_family() -> str:
    """The family the venv installer speaks for ("python")."""
    return next(s.family for s in stacks.families() if s.installer == "venv")
