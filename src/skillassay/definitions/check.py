"""``skillassay check``: every problem with the definitions, each naming the file, the field and what was expected.

Loading catches missing files, invalid JSON and fields of the wrong shape; the checks here catch what a schema
cannot: rubric checks that do not exist, weights that do not sum to 100, answer-key paths that leave the app,
placements naming functions the pristine app does not define, empty id paths, parameters the real API rejects.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from skillassay.definitions.jsonfile import read_json
from skillassay.definitions.loader import ANSWER_KEY_FILE, CONFIG_FILE, load_fixture, load_rubric
from skillassay.definitions.models import API_PATHS, RUBRIC_CHECKS, EvalDefinition
from skillassay.definitions.suite import definition_sources, load_one
from skillassay.errors import DefinitionError, Problem

PATH_ALIASES = {"lower_level": "access_codes"}


def _bad_relative_path(value: str) -> str | None:
    if not value:
        return "an empty path"
    if value.startswith("/") or value.startswith("\\") or (len(value) > 1 and value[1] == ":"):
        return "an absolute path; answer-key paths are relative to app/"
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return "a path that escapes app/ (contains '..')"
    return None


def check_rubric(path: Path) -> list[Problem]:
    problems: list[Problem] = []
    rubric = load_rubric(path, problems)
    if rubric is None:
        return problems
    total = 0.0
    seen: set[str] = set()
    for i, cat in enumerate(rubric.categories):
        if cat.check not in RUBRIC_CHECKS:
            problems.append(Problem(path, f"/categories/{i}/check",
                                    f"unknown check {cat.check!r}; expected one of: {', '.join(RUBRIC_CHECKS)}"))
        if cat.weight < 0:
            problems.append(Problem(path, f"/categories/{i}/weight", "a weight cannot be negative"))
        if cat.name in seen:
            problems.append(Problem(path, f"/categories/{i}/name", f"category {cat.name!r} appears twice"))
        seen.add(cat.name)
        total += cat.weight
    if abs(total - 100) > 1e-9:
        problems.append(Problem(path, "/categories", f"weights sum to {total:g}; expected 100"))
    return problems


def _check_answer_key(d: EvalDefinition, defined: Callable[[Path], set[str] | None]) -> list[Problem]:
    problems: list[Problem] = []
    key = d.answer_key
    if key is None:
        return problems
    kp = d.fixture_dir / ANSWER_KEY_FILE
    for field in ("expected_files_modified", "expected_new_files_allowed"):
        for i, value in enumerate(getattr(key, field)):
            why = _bad_relative_path(value)
            if why:
                problems.append(Problem(kp, f"/{field}/{i}", f"{value!r} is {why}"))
            elif field == "expected_files_modified" and d.app_dir.is_dir() and not (d.app_dir / value).is_file():
                problems.append(Problem(kp, f"/{field}/{i}",
                                        f"{value!r} does not exist in the pristine app, so it cannot be modified"))
    for manifest in key.expected_package_additions:
        why = _bad_relative_path(manifest)
        if why:
            problems.append(Problem(kp, f"/expected_package_additions/{manifest}", f"{manifest!r} is {why}"))
    functions = defined(d.app_dir) if d.app_dir.is_dir() else None
    if functions is not None:
        for call, names in key.expected_placements.items():
            for i, name in enumerate(names):
                if name not in functions:
                    problems.append(Problem(kp, f"/expected_placements/{call}/{i}",
                                            f"function {name!r} is not defined in the pristine app"))
    problems.extend(_check_parameters_against_spec(d, kp))
    return problems


def _check_parameters_against_spec(d: EvalDefinition, kp: Path) -> list[Problem]:
    """Parameters the real API does not accept are flagged (a warning: the plan's own key lists ``customer_key``
    for ``delete_data``, which the rubric matches deliberately against ``customer_keys``)."""
    key = d.answer_key
    if key is None or not key.required_parameters:
        return []
    try:
        from skillassay.services.seam.spec import load_spec
    except ImportError:  # the emulator package is optional for linting
        return []
    try:
        spec = load_spec()
    except Exception as exc:  # noqa: BLE001 - the spec needs the node tools; say so instead of failing the lint
        return [Problem(kp, "/required_parameters", f"not checked against the Seam API spec: {exc}", "warning")]
    calls = [c for cs in key.expected_calls.values() for c in cs] + list(key.expected_placements)
    problems: list[Problem] = []
    for method, params in key.required_parameters.items():
        matches = sorted({c for c in calls if c.split(".")[-1] == method}) or [method]
        for call in matches:
            route = "/" + call.replace(".", "/")
            if "/" not in call.replace(".", "/"):
                continue
            if spec.route(route) is None:
                continue
            top = [p.split("[]")[0].split(".")[0] for p in params]
            for i, name in enumerate(top):
                if spec.unknown_parameters(route, [name]):
                    msg = f"{route} does not accept {name!r} in the Seam API spec {spec.version}"
                    if not spec.unknown_parameters(route, [name + "s"]):
                        msg += f"; its parameter is {name + 's'!r}, which the rubric reads it as (docs/rubric.md)"
                    if route == "/customers/delete_data" and name == "customer_key":
                        msg += ("; note that customer_keys deletes ALL of the customer's data (every reservation, "
                                "user and space), so an answer key requiring it rewards wiping the property on "
                                "each cancellation: require reservation_keys instead")
                    problems.append(Problem(kp, f"/required_parameters/{method}/{i}", msg, "warning"))
    return problems


def _check_config(cp: Path, cfg: object) -> list[Problem]:
    """Semantic checks of an eval_config.json, on the raw JSON: they run even when another field has the wrong type,
    so one error does not hide the next."""
    problems: list[Problem] = []
    if not isinstance(cfg, dict):
        return problems
    api_path = cfg.get("expected_api_path")
    if isinstance(api_path, str) and PATH_ALIASES.get(api_path, api_path) not in API_PATHS:
        problems.append(Problem(cp, "/expected_api_path",
                                f"unknown API path {api_path!r}; expected one of: {', '.join(API_PATHS)}"))
    endpoints = cfg.get("test_endpoints")
    endpoints = endpoints if isinstance(endpoints, dict) else {}
    for phase in ("create", "update", "cancel"):
        ep = endpoints.get(phase)
        if not isinstance(ep, dict):
            continue
        rid = ep.get("response_id_path")
        if isinstance(rid, str) and not rid.strip(". "):
            problems.append(Problem(cp, f"/test_endpoints/{phase}/response_id_path",
                                    "empty; expected a dot path into the response such as 'reservation.id'"))
        method = ep.get("method")
        if isinstance(method, str) and method.upper() not in {"GET", "POST", "PUT", "PATCH", "DELETE"}:
            problems.append(Problem(cp, f"/test_endpoints/{phase}/method", f"unknown HTTP method {method!r}"))
        path = ep.get("path")
        if isinstance(path, str) and not path.startswith("/"):
            problems.append(Problem(cp, f"/test_endpoints/{phase}/path", "expected a path starting with '/'"))
        if phase == "create" and "response_id_path" not in ep:
            problems.append(Problem(cp, "/test_endpoints/create/response_id_path",
                                    "missing; the validator needs it to find the new reservation's id"))
    threshold = cfg.get("pass_threshold")
    if isinstance(threshold, (int, float)) and not 0 <= threshold <= 1:
        problems.append(Problem(cp, "/pass_threshold", "expected a share between 0 and 1, e.g. 0.8"))
    return problems


def defined_functions(app_dir: Path) -> set[str] | None:
    """Names of the functions and methods the app defines, from its syntax trees (the rubric's own parsers)."""
    try:
        from skillassay.languages import parser_for
    except ImportError:
        return None
    from skillassay.workspace import EXCLUDED_DIRS

    names: set[str] = set()
    for path in sorted(app_dir.rglob("*")):
        rel = path.relative_to(app_dir)
        if any(part in EXCLUDED_DIRS for part in rel.parts) or not path.is_file() or path.is_symlink():
            continue
        parse = parser_for(rel.as_posix())
        if parse is None:
            continue
        module = parse(path.read_bytes(), rel.as_posix())
        for fn in module.functions:
            if fn.name:
                names.add(fn.name)
            names.add(fn.qualname)
            names.add(fn.qualname.rsplit(".", 1)[-1])
    return names


def check_path(path: Path, defined: Callable[[Path], set[str] | None] = defined_functions) -> list[Problem]:
    """Every problem of every definition under ``path`` (errors and warnings)."""
    problems: list[Problem] = []
    try:
        sources = definition_sources(path)
    except DefinitionError as exc:
        return exc.problems
    rubric_files: set[Path] = set()
    for kind, source, suite_dir in sources:
        if kind == "plan-json":
            rubric_files.add(suite_dir / "rubric.json")
            local: list[Problem] = []
            config_file = source / CONFIG_FILE
            raw: list[Problem] = []
            config_data = read_json(config_file, raw) if config_file.is_file() else None
            try:
                d = load_fixture(source, problems=local)
            except DefinitionError:
                d = None
            problems.extend(p for p in local if not p.file.name == "rubric.json")
            problems.extend(_check_config(config_file, config_data))
            if d is not None:
                problems.extend(_check_answer_key(d, defined))
        else:
            try:
                load_one(kind, source, suite_dir)
            except DefinitionError as exc:
                problems.extend(exc.problems)
    for rf in sorted(rubric_files):
        problems.extend(check_rubric(rf))
    return problems
