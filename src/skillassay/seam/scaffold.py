"""``skillassay init --app`` for the plan's Seam evals: a fixture folder (``fixtures/<name>/``) around the
copy of the user's app, with the ``eval_config.json`` and ``answer_key.json`` of what ``scaffold.detect`` read
(the create, update and cancel endpoints, the handlers to change) and the rest left empty, so that
``skillassay check`` names each missing piece by file and field. ``SCAFFOLD.md`` beside the eval says which
values were inferred, from where, so nothing guessed passes for something decided.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillassay import stacks
from skillassay.scaffold import ROUTE_PARAM, AppScaffold, DetectedRoute, Detection, starter_sources


def _dockerfile(app: Path, d: Detection) -> str:
    return stacks.by_name(d.stack).dockerfile(app, d.manifest, d.port)


def _endpoint_path(route: DetectedRoute | None, with_id: bool) -> str:
    if route is None:
        return ""
    return ROUTE_PARAM.sub("{{RESERVATION_ID}}", route.path.rstrip("/")) if with_id else route.path


def _endpoints(d: Detection) -> dict[str, dict[str, object]]:
    """eval_config.json /test_endpoints: the lifecycle routes found (a method and an empty path where not)."""
    life = d.lifecycle
    return {
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


def _config(name: str, d: Detection) -> dict[str, object]:
    """eval_config.json: what was read; the prompt and the Seam path left to the user."""
    return {
        "fixture": name,
        "title": f"{name}: Seam access for the app's stays",
        "prompt": "",
        "expected_api_path": "",
        "seam_env_var": "SEAM_API_KEY",
        "app_port": d.port,
        "test_endpoints": _endpoints(d),
    }


# the official Seam SDK's package name in each manifest (npm, PyPI and RubyGems call it ``seam``)
_SDK_PACKAGES = {"composer.json": "seamapi/seam"}


def _answer_key(d: Detection) -> dict[str, object]:
    """answer_key.json: the files the lifecycle's handlers are in; the calls left to the user."""
    return {
        "expected_files_modified": sorted({f for r in d.lifecycle.values() for f in r.edited_files()}),
        "expected_new_files_allowed": [],
        "expected_calls": {},
        "expected_placements": {},
        "required_parameters": {},
        "expected_package_additions": (
            {d.manifest: [_SDK_PACKAGES.get(d.manifest, "seam")]} if d.manifest != "pyproject.toml" else {}
        ),
    }


def _write_json(path: Path, data: dict[str, object]) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


class SeamScaffold(AppScaffold):
    """A plan fixture: Dockerfile, eval_config.json, answer_key.json, SCAFFOLD.md and an empty
    test_controls/; the suite's rubric.json from the starter when it has none."""

    def folder(self, suite: Path, name: str) -> Path:
        return suite / "fixtures" / name

    def write(self, app: Path, suite: Path, folder: Path, name: str, found: Detection) -> None:
        (folder / "test_controls").mkdir(parents=True)
        if not (suite / "rubric.json").is_file():
            shutil.copy2(starter_sources()[0] / "rubric.json", suite / "rubric.json")
        (folder / "Dockerfile").write_text(
            (app / "Dockerfile").read_text(encoding="utf-8")
            if found.has_dockerfile
            else _dockerfile(app, found),
            encoding="utf-8",
        )
        _write_json(folder / "eval_config.json", _config(name, found))
        handlers = {
            phase: [h.strip() for h in (r.handler or "").split(",") if h.strip()]
            for phase, r in found.lifecycle.items()
        }
        _write_json(folder / "answer_key.json", _answer_key(found))
        (folder / "SCAFFOLD.md").write_text(_notes(name, found, handlers), encoding="utf-8")


SEAM_SCAFFOLD = SeamScaffold()


# stacks whose routers are mounted under a prefix in code the route reading may not follow (a router built in
# one file, mounted in another); Rails' routes file and Next.js' folders give the whole path
_MOUNTED_ROUTERS = {
    "express": "`app.use('/api', router)`",
    "node": "`app.use('/api', router)`",
    "flask": "`app.register_blueprint(bp, url_prefix='/api')`",
    "fastapi": "`app.include_router(router, prefix='/api')`",
}


# where a stack's apps usually keep what the integration touches, for the answer key's files and the golden
_STACK_HINTS = {
    "rails": [
        "- Rails: routes are in `config/routes.rb` (`resources`, `namespace`, `scope`); the key is read "
        'from `ENV["SEAM_API_KEY"]`, often in `config/initializers/seam.rb`; a client shared by '
        "controllers is an initializer's constant or a class under `app/services/`",
        '- the official gem is `seam` (`gem "seam"` in the Gemfile); where it cannot be installed, the '
        "golden may call Seam's HTTP API through Faraday or Net::HTTP",
    ],
    "laravel": [
        "- Laravel: routes in `routes/api.php` are served under `/api`; the key goes in "
        "`config/services.php` (`'seam' => ['api_key' => env('SEAM_API_KEY')]`), read with "
        "`config('services.seam.api_key')`; a client shared by controllers is bound in a service "
        "provider or built in a class under `app/Services/`",
        "- the official package is `seamapi/seam` (`composer require seamapi/seam`); where it cannot be "
        "installed, the golden may call Seam's HTTP API through Guzzle or the `Http` facade",
    ],
}


def _stack_hints(stack: str) -> list[str]:
    hints = _STACK_HINTS.get(stack)
    return ["", "## Where this stack keeps things", "", *hints] if hints else []


def _prefix_note(stack: str) -> str:
    mount = _MOUNTED_ROUTERS.get(stack)
    return (
        f" A router mounted under a prefix ({mount}) may need the prefix added to the path." if mount else ""
    )


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
            where = f" in {', '.join(r.handler_files)}" if r.handler_files else ""
            handled = ", ".join(handlers.get(phase) or []) or "an inline function"
            lines.append(
                f"- {phase} endpoint: {r.method} {r.path} ({r.file}:{r.line}); handled by "
                f"{handled}{where}.{_prefix_note(d.stack)}"
            )
    lines.append(
        f"- files the integration should change (answer_key.json /expected_files_modified): "
        f"{', '.join(sorted({f for r in d.lifecycle.values() for f in r.edited_files()})) or 'none found'}"
    )
    lines += _stack_hints(d.stack)
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
