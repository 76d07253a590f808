"""What a language stack is to skillassay: the ``Stack`` interface every stack module implements.

A stack is one framework on one runtime (Express on Node, Flask on Python). It says how to recognise an app of
its kind from the app's files, which runtime runs it (the family: the install cache, the registries, the
runtime mounts, the Dockerfile base images), how its source files are written (comments, string literals, the
HTTP client libraries and the SDK naming the Seam wing's rubric reads) and what ``init`` writes for it. The
runtime families are base classes here (``stacks/node.py``, ``stacks/python.py``): a framework of a known
family is one small subclass; see docs/languages.md.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

SYSTEM = ("/usr/", "/bin/", "/lib/", "/lib64/", "/sbin/")


@dataclass(frozen=True, kw_only=True)
class SourceSyntax:
    """How source files of one parsed language (``languages.base.Module.language``) are written. A plain
    frozen dataclass: the rubric reads it, and the rubric runs without pydantic (``skillassay rubric``'s
    fast path)."""

    language: str  # "python", "javascript" (TypeScript too): what the parser names its modules' language
    extensions: tuple[str, ...]  # the files written in it, lower-case, with the dot
    comment: str  # a line comment's mark with its space: "# ", "// "
    literal: Literal["repr", "json"]  # how a string literal is written: Python's repr, or a JSON string
    statement_end: str = ""  # what ends a statement written alone ("" or ";")
    http_clients: frozenset[str] = frozenset()  # HTTP client libraries (first segment of an import source)
    # which Seam SDK its code calls (snake_case or camelCase methods)
    sdk_family: Literal["python", "javascript"]
    label: str  # "Python", "JavaScript": in messages
    # the mutants' run-time switch: an expression true when the environment variable {name} is {value}, and a
    # conditional expression choosing {new} when {cond} holds, else {old}
    env_test: str
    choice: str

    def quote(self, text: str) -> str:
        """``text`` as a string literal of this language."""
        return repr(text) if self.literal == "repr" else json.dumps(text)

    def env_is(self, name: str, value: str) -> str:
        return self.env_test.format(name=name, value=value)

    def choose(self, cond: str, new: str, old: str) -> str:
        return self.choice.format(cond=cond, new=new, old=old)


@dataclass(kw_only=True)
class StackCommands:
    """How an app of a stack is installed, built and started when its fixture has no Dockerfile and no ``run``
    (shell commands, as in ``run``; the install ones folded into the install cache the same way)."""

    install: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)
    start: str


# a manifest file of the app by its relative path: its bytes, or None when absent. The caller's reader refuses
# a link or a file that is not regular (raising), so a stack never follows one of the agent's links.
ReadManifest = Callable[[str], bytes | None]


@dataclass(kw_only=True)
class Dependencies:
    """What an app declares it needs from one runtime family, as its stack read it (``Stack.dependencies``):
    what the app's environment (graders/appenv) installs through the install cache (apps/deps)."""

    family: str
    files: dict[str, bytes]  # relative path -> bytes: everything its install reads, in reading order
    # the "venv" installer: the requirements files given to pip (-r), in order, and requirement strings
    requirements: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    # any other installer: the command filling ``Stack.dependency_folder`` in the cache entry
    install: list[str] = field(default_factory=list)

    @property
    def installs(self) -> bool:
        """It asks for an install (a pyproject.toml declaring nothing asks for none)."""
        return bool(self.requirements or self.packages or self.install)


class Stack(ABC):
    """One stack. Instances carry no state: skillassay makes one per registered stack."""

    name: ClassVar[str]  # its entry point's name: "express", "nextjs", "flask"
    family: ClassVar[str]  # the runtime: "node", "python" (``RunPlan.runtime``, the install cache it uses)
    order: ClassVar[int]  # detection order, lowest first: a framework before the bare runtime of its family
    # the dependency whose declaration says this framework (None: any app)
    package: ClassVar[str | None] = None
    init_name: ClassVar[str]  # the framework as ``init`` reports it ("next", "express", "python")
    init_language: ClassVar[str]  # the language as ``init`` reports it ("typescript", "python")
    default_port: ClassVar[int]  # where its apps listen unless they say otherwise (``init``)
    # family facts
    definition_languages: ClassVar[tuple[str, ...]]  # the definitions' ``language`` values its apps have
    # files whose presence makes an app one of this family, first match wins
    manifests: ClassVar[tuple[str, ...]]
    # files that say the runtime when nothing else does (no Dockerfile)
    runtime_files: ClassVar[tuple[str, ...]]
    images: ClassVar[tuple[str, ...]]  # Dockerfile base images (name without registry or tag) that run it
    registries: ClassVar[tuple[str, ...]]  # what its installs may reach through the egress proxy
    syntaxes: ClassVar[tuple[SourceSyntax, ...]]  # the source languages its files are written in
    # the install cache filling its dependencies (apps/deps): "venv", a virtual environment of the Python
    # skillassay runs on, filled by pip and used in place; any other, a cache entry holding its
    # ``dependency_files`` in which its install command fills ``dependency_folder``
    installer: ClassVar[str]
    refuses_linked_dependencies: ClassVar[bool] = False  # its build will not read dependencies through a link
    mount_order: ClassVar[int] = 50  # where its runtime comes among the sealed processes' mounts and PATH

    # ------------------------------------------------------------------ detection
    def belongs(self, app: Path) -> bool:
        """The app is of this stack's family (one of its manifests is there)."""
        return any((app / m).is_file() for m in self.manifests)

    @abstractmethod
    def declares(self, app: Path, package: str, strict: bool) -> bool:
        """The app's manifest declares ``package``; ``strict``: as a dependency (``init``), else anywhere in
        the manifest's text (the definition loader)."""

    def detect(self, app: Path, strict: bool = False) -> bool:
        return self.belongs(app) and (self.package is None or self.declares(app, self.package, strict))

    @abstractmethod
    def language(self, app: Path) -> str:
        """The definition's ``language`` for an app of this stack ("typescript", "javascript", "python")."""

    @abstractmethod
    def stack_id(self, app: Path) -> str:
        """The definition's ``stack`` ("typescript-express", "python-flask", "python")."""

    def manifest(self, app: Path) -> str | None:
        """The manifest ``init`` reads (the first of ``manifests`` present)."""
        return next((m for m in self.manifests if (app / m).is_file()), None)

    # ------------------------------------------------------------------ running
    def runtime_paths(self, venv: bool) -> tuple[list[Path], list[str]]:
        """(folders to show read-only, bin folders for PATH) of this family's runtime on this machine, for
        sealed processes; folders under the system folders are left out (visible anyway). ``venv``: with
        the virtual environment the harness runs in, where the runtime has one."""
        return [], []

    def commands(self, app: Path) -> StackCommands | None:
        """Its own install, build and start commands for an app with neither a Dockerfile nor ``run`` (None:
        the fixture must say; every shipped stack)."""
        return None

    def dependency_bins(self, app_dir: Path) -> list[Path]:
        """Program folders of the app's installed dependencies inside its copy (``node_modules/.bin``)."""
        return []

    # ------------------------------------------------------------------ dependencies (issue 25, item 4)
    # the files its family's installs read, the first the one an install needs (keyed by the install cache)
    dependency_files: ClassVar[tuple[str, ...]] = ()
    dependency_folder: ClassVar[str | None] = None  # where its install puts them in the app ("node_modules")
    version_command: ClassVar[tuple[str, ...]] = ()  # prints its runtime's version (part of the cache key)

    def dependencies(self, read: ReadManifest) -> Dependencies | None:
        """What the app declares of this family's dependencies, read with ``read`` (raises ValueError for a
        manifest it cannot parse); None: nothing declared. By default its ``dependency_files`` when the first
        is there (the others alone install nothing), installed by ``install_argv``."""
        if not self.dependency_files or (first := read(self.dependency_files[0])) is None:
            return None
        files = {self.dependency_files[0]: first}
        files.update((n, d) for n in self.dependency_files[1:] if (d := read(n)) is not None)
        return Dependencies(family=self.family, files=files, install=self.install_argv(files))

    def install_argv(self, files: Mapping[str, bytes]) -> list[str]:
        """The install command for these manifest files (a folder installer's)."""
        return []

    def install_command(self, argv: list[str], entry: Path) -> list[str]:
        """``argv`` as run in the cache entry holding the manifest files (the install's own flags)."""
        return list(argv)

    def folds_install(self, argv: list[str]) -> bool:
        """A Dockerfile's RUN ``argv`` is what this family's cached install does (dropped from the build
        steps, as npm's and pip's installs are); none by default."""
        return False

    def install_key(self, name: str, data: bytes) -> bytes:
        """What of the manifest file ``name`` decides what its install fills (the rest, a name or a
        description, differs between apps sharing one install): all of it unless the stack knows better."""
        return data

    # ------------------------------------------------------------------ init
    @abstractmethod
    def dockerfile(self, app: Path, manifest: str, port: int) -> str:
        """The Dockerfile ``init`` writes for an app of this stack."""


def system_path(path: Path) -> bool:
    return any(str(path).startswith(p) for p in SYSTEM)


def which_real(program: str) -> Path | None:
    """``program`` on PATH with its links resolved, or None."""
    import shutil  # only here: shutil imports the compression modules, which grading never needs

    found = shutil.which(program)
    return Path(os.path.realpath(found)) if found else None
