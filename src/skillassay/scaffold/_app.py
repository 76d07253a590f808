"""``skillassay init --app``: an eval scaffolded around the user's own application.

What can be read from the app is read here with the same parsers the rubric grades with (stack, port, routes,
their handlers: ``detect``). The eval's own files are a kind's (an ``AppScaffold`` registered under the
entry-point group ``skillassay.scaffolds``; the Seam wing's writes a plan fixture): what cannot be read is
left empty, so that ``skillassay check`` names each missing piece by file and field.
"""

from __future__ import annotations

import re
import shutil
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay import plugins, stacks
from skillassay.errors import SkillassayError
from skillassay.languages import parser_for
from skillassay.languages.base import Module, Route
from skillassay.stacks import Stack

GROUP = "skillassay.scaffolds"

# folders never copied from the user's app, nor read for routes
_SKIP_DIRS = {
    "node_modules",
    "dist",
    "build",
    ".next",
    "__pycache__",
    ".venv",
    "venv",
    ".git",
    ".pytest_cache",
    ".mypy_cache",
    "coverage",
}
_MAX_FILES = 5000  # read for routes and ports; a larger tree is a monorepo: point --app at the service

# words that make a route family look like the thing Seam access follows (a stay, a booking, a lease...)
_LIFECYCLE_WORDS = (
    "reservation",
    "booking",
    "stay",
    "lease",
    "visit",
    "appointment",
    "rental",
    "tenancy",
    "membership",
    "checkin",
    "guest",
)


class DetectedRoute(BaseModel):
    method: str
    path: str
    file: str
    line: int
    # the named function handling it, or the named functions its inline handler calls
    handler: str | None = None
    # the files the handlers are defined in, where the route names them from another file (a Rails route's
    # controller, an Express router's imported handler); empty when they are in ``file``
    handler_files: list[str] = Field(default_factory=list)

    def edited_files(self) -> list[str]:
        """Where an integration changes this endpoint: its handlers' files, else the file declaring it."""
        return self.handler_files or [self.file]


class Detection(BaseModel):
    """What ``init --app`` read from an application, each value with where it came from."""

    stack: str  # the stack's name (stacks/): express | nextjs | node | flask | fastapi | python
    language: str  # typescript | python
    framework: str  # express | next | node | flask | fastapi | python
    manifest: str  # package.json | requirements.txt | pyproject.toml
    port: int
    port_source: str
    routes: list[DetectedRoute] = Field(default_factory=list)
    lifecycle: dict[str, DetectedRoute] = Field(default_factory=dict)  # create | update | cancel -> route
    has_dockerfile: bool = False


def _files(app: Path) -> list[Path]:
    out: list[Path] = []
    for path in sorted(app.rglob("*")):
        rel = path.relative_to(app)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.is_symlink() or not path.is_file():
            continue
        out.append(path)
        if len(out) >= _MAX_FILES:
            break
    return out


def _stack(app: Path) -> Stack:
    try:
        found = stacks.detect(app, strict=True)
    except ValueError as exc:
        raise SkillassayError(f"{app / 'package.json'}: not valid JSON ({exc})") from exc
    if found is None:
        manifests = list(dict.fromkeys(m for s in stacks.all_stacks() for m in s.manifests))
        named = ", ".join(manifests[:-1]) + " or " + manifests[-1] if len(manifests) > 1 else manifests[0]
        raise SkillassayError(
            f"{app}: no {named}: which stack is this? (skillassay scaffolds the apps of the "
            f"stacks {', '.join(s.name for s in stacks.all_stacks())})"
        )
    return found


_PORT_PATTERNS = [
    re.compile(r"^\s*EXPOSE\s+(\d{2,5})", re.MULTILINE),
    re.compile(r"\bPORT\b[^\n]{0,40}?(?:\|\||\?\?|\bor\b|,)\s*['\"]?(\d{2,5})"),
    re.compile(r"\.listen\(\s*(\d{2,5})"),
    re.compile(r"\bport\s*=\s*(\d{2,5})"),
    re.compile(r"--port[= ](\d{2,5})"),
]


def _port(app: Path, files: list[Path], stack: Stack) -> tuple[int, str]:
    candidates = ([app / "Dockerfile"] if (app / "Dockerfile").is_file() else []) + [
        f
        for f in files
        if f.suffix in {".ts", ".js", ".mjs", ".py"} or f.name in {"package.json", "Procfile"}
    ]
    for path in candidates:
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in _PORT_PATTERNS:
            found = pattern.search(text)
            if found and 1 <= int(found.group(1)) <= 65535:
                rel = path.relative_to(app).as_posix()
                line = text.count("\n", 0, found.start(1)) + 1
                return int(found.group(1)), f"{rel}:{line}"
    return stack.default_port, f"the {stack.init_name} default"


def _routes(app: Path, files: list[Path]) -> list[DetectedRoute]:
    out: list[DetectedRoute] = []
    stems = {p.relative_to(app).with_suffix("").as_posix(): p.relative_to(app).as_posix() for p in files}
    for path in files:
        rel = path.relative_to(app).as_posix()
        parser = parser_for(rel)
        if parser is None:
            continue
        try:
            module = parser(path.read_bytes(), rel)
        except Exception:  # noqa: BLE001 - a file the parser cannot read has no routes worth guessing from
            continue
        for route in module.routes:
            out.append(
                DetectedRoute(
                    method=route.method.upper(),
                    path=route.path,
                    file=rel,
                    line=route.line,
                    handler=_handler_name(module, route),
                    handler_files=_handler_files(module, route, stems),
                )
            )
    return out


def _handler_files(module: Module, route: Route, stems: dict[str, str]) -> list[str]:
    """The app's files defining the handlers a route names from elsewhere (through the module's import
    references: the stem of the file, as the call graph resolves it), in the route's order."""
    found: list[str] = []
    for value in route.handlers:
        if value.kind != "ref" or not value.chain:
            continue
        for ref in module.import_refs.get(value.chain[0], []):
            matches = [
                f for stem, f in stems.items() if stem == ref.stem or (ref.fuzzy and stem.endswith(ref.stem))
            ]
            found.extend(f for f in matches if f != module.path)
    return list(dict.fromkeys(found))


def _handler_name(module, route) -> str | None:
    names: list[str] = []
    for value in route.handlers:
        if value.kind == "func" and value.func is not None:
            fn = module.functions[value.func]
            if fn.name:
                names.append(fn.name)
                continue
            # an inline handler: the named functions it calls are where the work (and the Seam calls) belong
            inside = {value.func}
            inside.update(i for i, f in enumerate(module.functions) if f.parent in inside)
            called = [
                c.chain[-1]
                for c in module.calls
                if c.scope in inside and len(c.chain) == 1 and c.chain[0] in module.imports
            ]
            names.extend(dict.fromkeys(called))
        elif value.kind == "ref" and value.chain:
            names.append(value.chain[-1])
    return ", ".join(dict.fromkeys(names)) or None


ROUTE_PARAM = re.compile(r"(:\w+|<[^>]+>|\{[^}]+\}|\[[^\]]+\])$")


def _lifecycle(routes: list[DetectedRoute]) -> dict[str, DetectedRoute]:
    """create / update / cancel for the route family that looks most like a stay or booking."""
    families: dict[str, dict[str, DetectedRoute]] = {}
    for r in routes:
        path = r.path.rstrip("/") or "/"
        base = ROUTE_PARAM.sub("", path).rstrip("/")
        fam = families.setdefault(base, {})
        if r.method == "POST" and path == base:
            fam.setdefault("create", r)
        elif r.method in ("PUT", "PATCH") and path != base:
            fam.setdefault("update", r)
        elif r.method == "DELETE" and path != base:
            fam.setdefault("cancel", r)
    for r in routes:  # POST /things/:id/cancel counts as a cancel where no DELETE exists
        if r.method == "POST" and re.search(r"/(cancel|checkout|end)$", r.path):
            base = ROUTE_PARAM.sub("", re.sub(r"/(cancel|checkout|end)$", "", r.path)).rstrip("/")
            families.setdefault(base, {}).setdefault("cancel", r)

    def rank(item: tuple[str, dict[str, DetectedRoute]]) -> tuple[int, int]:
        base, fam = item
        return len(fam), int(any(w in base.lower() for w in _LIFECYCLE_WORDS))

    best = max(families.items(), key=rank, default=None)
    return dict(best[1]) if best and best[1] else {}


def detect(app: Path) -> Detection:
    if not app.is_dir():
        raise SkillassayError(f"--app {app}: no such folder")
    stack = _stack(app)
    manifest = stack.manifest(app) or stack.manifests[0]
    files = _files(app)
    port, port_source = _port(app, files, stack)
    routes = _routes(app, files)
    return Detection(
        stack=stack.name,
        language=stack.init_language,
        framework=stack.init_name,
        manifest=manifest,
        port=port,
        port_source=port_source,
        routes=routes,
        lifecycle=_lifecycle(routes),
        has_dockerfile=(app / "Dockerfile").is_file(),
    )


# -- writing the eval ----------------------------------------------------------------------------------------


class AppScaffold(ABC):
    """The files of one kind's eval written around an app (``init --app``); registered under ``GROUP``."""

    @abstractmethod
    def folder(self, suite: Path, name: str) -> Path:
        """Where the eval ``name`` goes in the suite folder ``suite`` (the app is copied into its ``app``)."""

    @abstractmethod
    def write(self, app: Path, suite: Path, folder: Path, name: str, found: Detection) -> None:
        """Write the eval's files into ``folder`` (``folder/app`` holds the copy of ``app`` already)."""


def app_scaffold(kind: str | None = None) -> AppScaffold:
    """The scaffold registered as ``kind`` (None: the only one registered). Raises PluginError."""
    names = plugins.names(GROUP)
    if kind is None:
        if len(names) != 1:
            raise plugins.PluginError(f"{GROUP}: name one of {', '.join(names) or 'none registered'}")
        kind = names[0]
    found = plugins.load(GROUP, kind)
    if not isinstance(found, AppScaffold):
        raise plugins.PluginError(f"{GROUP} {kind!r} is not an AppScaffold: {found!r}")
    return found


def scaffold_app(
    app: Path, suite: Path, name: str | None = None, *, force: bool = False, kind: str | None = None
) -> tuple[Path, Detection]:
    """Write the eval ``name`` around a copy of ``app`` into ``suite`` (``kind``: which scaffold, see
    ``app_scaffold``); returns the eval's folder and what was read.
    """
    app = app.resolve()
    d = detect(app)
    name = name or re.sub(r"[^a-z0-9-]+", "-", app.name.lower()).strip("-") or "my-app"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise SkillassayError(f"--name {name!r}: use lower-case letters, digits and dashes")
    writer = app_scaffold(kind)
    folder = writer.folder(suite, name)
    if folder.exists() and not force:
        raise SkillassayError(f"{folder}: exists; choose another --name, or --force to overwrite it")
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(app, folder / "app", symlinks=True, ignore=shutil.ignore_patterns(*_SKIP_DIRS))
    writer.write(app, suite, folder, name, d)
    return folder, d
