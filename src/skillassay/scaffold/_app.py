"""``skillassay init --app``: a Seam eval scaffolded around the user's own application.

What can be read from the app is read with the same parsers the rubric grades with (routes, their handlers);
what cannot (the prompt, the Seam path to expect, the calls, a golden solution) is left empty, so that
``skillassay check`` names each missing piece by file and field. ``SCAFFOLD.md`` beside the eval says which
values were inferred, from where, so nothing guessed passes for something decided.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay import stacks
from skillassay.errors import SkillassayError
from skillassay.languages import parser_for
from skillassay.stacks import Stack

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
                )
            )
    return out


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


_PARAM = re.compile(r"(:\w+|<[^>]+>|\{[^}]+\}|\[[^\]]+\])$")


def _lifecycle(routes: list[DetectedRoute]) -> dict[str, DetectedRoute]:
    """create / update / cancel for the route family that looks most like a stay or booking."""
    families: dict[str, dict[str, DetectedRoute]] = {}
    for r in routes:
        path = r.path.rstrip("/") or "/"
        base = _PARAM.sub("", path).rstrip("/")
        fam = families.setdefault(base, {})
        if r.method == "POST" and path == base:
            fam.setdefault("create", r)
        elif r.method in ("PUT", "PATCH") and path != base:
            fam.setdefault("update", r)
        elif r.method == "DELETE" and path != base:
            fam.setdefault("cancel", r)
    for r in routes:  # POST /things/:id/cancel counts as a cancel where no DELETE exists
        if r.method == "POST" and re.search(r"/(cancel|checkout|end)$", r.path):
            base = _PARAM.sub("", re.sub(r"/(cancel|checkout|end)$", "", r.path)).rstrip("/")
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


def _dockerfile(app: Path, d: Detection) -> str:
    return stacks.by_name(d.stack).dockerfile(app, d.manifest, d.port)


def _endpoint_path(route: DetectedRoute | None, with_id: bool) -> str:
    if route is None:
        return ""
    return _PARAM.sub("{{RESERVATION_ID}}", route.path.rstrip("/")) if with_id else route.path


def scaffold_app(
    app: Path, suite: Path, name: str | None = None, *, force: bool = False
) -> tuple[Path, Detection]:
    """Write ``<suite>/fixtures/<name>/`` around a copy of ``app``; returns the fixture folder and what was
    read.
    """
    app = app.resolve()
    d = detect(app)
    name = name or re.sub(r"[^a-z0-9-]+", "-", app.name.lower()).strip("-") or "my-app"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise SkillassayError(f"--name {name!r}: use lower-case letters, digits and dashes")
    fixture = suite / "fixtures" / name
    if fixture.exists() and not force:
        raise SkillassayError(f"{fixture}: exists; choose another --name, or --force to overwrite it")
    if fixture.exists():
        shutil.rmtree(fixture)
    shutil.copytree(app, fixture / "app", symlinks=True, ignore=shutil.ignore_patterns(*_SKIP_DIRS))
    (fixture / "test_controls").mkdir(parents=True)
    if not (suite / "rubric.json").is_file():
        from skillassay.scaffold._starter import starter_sources

        shutil.copy2(starter_sources()[0] / "rubric.json", suite / "rubric.json")

    (fixture / "Dockerfile").write_text(
        (app / "Dockerfile").read_text(encoding="utf-8") if d.has_dockerfile else _dockerfile(app, d),
        encoding="utf-8",
    )
    life = d.lifecycle
    endpoints = {
        "create": {
            "method": life["create"].method if "create" in life else "POST",
            "path": _endpoint_path(life.get("create"), False),
            "payload": {},
            "response_id_path": "id",
        },
        "update": {
            "method": life["update"].method if "update" in life else "PUT",
            "path": _endpoint_path(life.get("update"), True),
            "payload": {},
        },
        "cancel": {
            "method": life["cancel"].method if "cancel" in life else "DELETE",
            "path": _endpoint_path(life.get("cancel"), True),
        },
    }
    config = {
        "fixture": name,
        "title": f"{name}: Seam access for the app's stays",
        "prompt": "",
        "expected_api_path": "",
        "seam_env_var": "SEAM_API_KEY",
        "app_port": d.port,
        "test_endpoints": endpoints,
    }
    (fixture / "eval_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    handlers = {
        phase: [h.strip() for h in (r.handler or "").split(",") if h.strip()] for phase, r in life.items()
    }
    answer_key = {
        "expected_files_modified": sorted({r.file for r in life.values()}),
        "expected_new_files_allowed": [],
        "expected_calls": {},
        "expected_placements": {},
        "required_parameters": {},
        "expected_package_additions": {d.manifest: ["seam"]} if d.manifest != "pyproject.toml" else {},
    }
    (fixture / "answer_key.json").write_text(json.dumps(answer_key, indent=2) + "\n", encoding="utf-8")
    (fixture / "SCAFFOLD.md").write_text(_notes(name, d, handlers), encoding="utf-8")
    return fixture, d


def _notes(name: str, d: Detection, handlers: dict[str, list[str]]) -> str:
    lines = [
        f"# {name}: what `skillassay init --app` inferred, and what is left to you",
        "",
        "Delete this file once every value below is checked.",
        "",
        "## Inferred (check each)",
        "",
        f"- stack: {d.language} / {d.framework} (from `{d.manifest}`)",
        f"- app port: {d.port} (from {d.port_source})",
        "- Dockerfile: "
        f"{'copied from the app' if d.has_dockerfile else 'written from a template: check the build and start commands'}",  # noqa: E501 - code inside a string, kept as written
    ]
    for phase in ("create", "update", "cancel"):
        r = d.lifecycle.get(phase)
        if r is None:
            lines.append(
                f"- {phase} endpoint: NOT FOUND among {len(d.routes)} route(s): fill "
                f"`eval_config.json` /test_endpoints/{phase}"
            )
        else:
            lines.append(
                f"- {phase} endpoint: {r.method} {r.path} ({r.file}:{r.line}); handled by "
                f"{', '.join(handlers.get(phase) or []) or 'an inline function'}. A router mounted under a "
                "prefix (`app.use('/api', router)`) may need the prefix added to the path."
            )
    lines.append(
        f"- files the integration should change (answer_key.json /expected_files_modified): "
        f"{', '.join(sorted({r.file for r in d.lifecycle.values()})) or 'none found'}"
    )
    lines += [
        "",
        "## Left to you (`skillassay check` names each)",
        "",
        "- eval_config.json /prompt: the task, as a user would ask it",
        "- eval_config.json /expected_api_path: reservation_automations, access_grants or access_codes",
        (
            "- eval_config.json /test_endpoints/*/payload: a valid request body for create and update, with "
            "`{{STARTS_AT}}`, `{{ENDS_AT}}`, `{{NEW_ENDS_AT}}`, `{{RUN_ID}}` where dates and unique values "
            "go; "
            "/test_endpoints/create/response_id_path: where the new id is in the create response"
        ),
        "- answer_key.json /expected_calls, /expected_placements (candidates: "
        + (", ".join(sorted({h for hs in handlers.values() for h in hs})) or "none found")
        + "), /required_parameters",
        "- test_golden/: a correct solution written with the official Seam SDK (the whole app folder)",
        "- test_controls/<name>/ with <name>.expected.json: flawed solutions and what they must score",
        "",
        "See docs/plan-formats.md for every field.",
        "",
    ]
    return "\n".join(lines)
