"""The plan's checks that a schema cannot make: rubric checks that do not exist, weights that do not sum to
100, answer-key paths that leave the app, SDK methods that do not exist, placements naming functions the
pristine app does not define, parameters the Seam API spec does not accept, endpoints that are not paths, a
create payload the sandbox cannot set Seam up for, a Dockerfile outside the subset (``inspect_plan``: the
format's one lint)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from skillassay.definitions.jsonfile import read_json
from skillassay.definitions.loader import suite_dir_of
from skillassay.definitions.models import EvalDefinition
from skillassay.definitions.validation import (
    Defined,
    defined_functions,
    fixture_folder_problems,
    folder_problems,
    golden_problems,
)
from skillassay.errors import DefinitionError, Problem
from skillassay.seam.config import API_PATHS
from skillassay.seam.eval import SeamEval
from skillassay.seam.loader import ANSWER_KEY_FILE, CONFIG_FILE, RUBRIC_FILE, load_fixture, load_rubric
from skillassay.seam.plan import PATH_ALIASES, RUBRIC_CHECKS

HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}
UNIT_FIELDS = ("unitId", "unit_id")  # what the sandbox looks for in the create payload without `seam`


def bad_relative_path(value: str) -> str | None:
    if not value:
        return "an empty path"
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        return "an absolute path; answer-key paths are relative to app/"
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return "a path that escapes app/ (contains '..')"
    return None


# ----------------------------------------------------------------------------- rubric.json
def rubric_problems(path: Path) -> list[Problem]:
    problems: list[Problem] = []
    rubric = load_rubric(path, problems)
    if rubric is None:
        return problems
    total = 0.0
    seen: set[str] = set()
    for i, cat in enumerate(rubric.categories):
        if cat.check not in RUBRIC_CHECKS:
            problems.append(
                Problem(
                    path,
                    f"/categories/{i}/check",
                    f"unknown check {cat.check!r}; expected one of: {', '.join(RUBRIC_CHECKS)}",
                )
            )
        if cat.weight < 0:
            problems.append(Problem(path, f"/categories/{i}/weight", "a weight cannot be negative"))
        if cat.name in seen:
            problems.append(Problem(path, f"/categories/{i}/name", f"category {cat.name!r} appears twice"))
        seen.add(cat.name)
        total += cat.weight
    if abs(total - 100) > 1e-9:
        problems.append(Problem(path, "/categories", f"weights sum to {total:g}; expected 100"))
    return problems


# ----------------------------------------------------------------------------- answer_key.json
def _known_sdk_methods() -> frozenset[str] | None:
    try:  # the committed SDK surface (read from the official SDKs): a data file, no SDK needed
        from skillassay.seam.rubric.sdk_surface import all_methods
    except ImportError:
        return None
    return all_methods()


def answer_key_problems(d: SeamEval, defined: Defined) -> list[Problem]:
    problems: list[Problem] = []
    key = d.answer_key
    if key is None:
        return problems
    kp = d.fixture_dir / ANSWER_KEY_FILE
    for field in ("expected_files_modified", "expected_new_files_allowed"):
        for i, value in enumerate(getattr(key, field)):
            why = bad_relative_path(value)
            if why:
                problems.append(Problem(kp, f"/{field}/{i}", f"{value!r} is {why}"))
            elif (
                field == "expected_files_modified"
                and d.app_dir.is_dir()
                and not (d.app_dir / value).is_file()
            ):
                problems.append(
                    Problem(
                        kp,
                        f"/{field}/{i}",
                        f"{value!r} does not exist in the pristine app, so it cannot be modified",
                    )
                )
    for manifest in key.expected_package_additions:
        why = bad_relative_path(manifest)
        if why:
            problems.append(Problem(kp, f"/expected_package_additions/{manifest}", f"{manifest!r} is {why}"))
    known = _known_sdk_methods()
    if known is not None:
        hint = "; expected a method of the Seam SDK as namespace.method, e.g. customers.push_data"
        for phase, calls in key.expected_calls.items():
            for i, call in enumerate(calls):
                if call not in known:
                    problems.append(
                        Problem(kp, f"/expected_calls/{phase}/{i}", f"unknown SDK method {call!r}{hint}")
                    )
        for call in key.expected_placements:
            if call not in known:
                problems.append(
                    Problem(kp, f"/expected_placements/{call}", f"unknown SDK method {call!r}{hint}")
                )
        last = {m.rsplit(".", 1)[-1] for m in known}
        for method in key.required_parameters:
            if method not in last:
                problems.append(
                    Problem(
                        kp,
                        f"/required_parameters/{method}",
                        f"no Seam SDK method is called {method!r} (keys are the method's last "
                        "segment, e.g. push_data)",
                    )
                )
    functions = defined(d.app_dir) if d.app_dir.is_dir() and not d.app_dir.is_symlink() else None
    if functions is not None:
        for call, names in key.expected_placements.items():
            for i, name in enumerate(names):
                if name not in functions:
                    problems.append(
                        Problem(
                            kp,
                            f"/expected_placements/{call}/{i}",
                            f"function {name!r} is not defined in the pristine app",
                        )
                    )
    problems.extend(_parameters_against_spec(d, kp))
    return problems


def _parameters_against_spec(d: SeamEval, kp: Path) -> list[Problem]:
    """Parameters the real API does not accept are flagged (a warning: the plan's own key lists
    ``customer_key`` for ``delete_data``, which the rubric matches deliberately against ``customer_keys``)."""
    key = d.answer_key
    if key is None or not key.required_parameters:
        return []
    try:
        from skillassay.seam.emulator.spec import load_spec
    except ImportError:  # the emulator package is optional for linting
        return []
    try:
        spec = load_spec()
    except Exception as exc:  # noqa: BLE001 - the spec needs the node tools; say so instead of failing the lint
        return [
            Problem(kp, "/required_parameters", f"not checked against the Seam API spec: {exc}", "warning")
        ]
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
                        msg += (
                            f"; its parameter is {name + 's'!r}, which the rubric reads it as "
                            "(docs/rubric.md)"
                        )
                    if route == "/customers/delete_data" and name == "customer_key":
                        msg += (
                            "; note that customer_keys deletes ALL of the customer's data (every "
                            "reservation, "
                            "user and space), so an answer key requiring it rewards wiping the property on "
                            "each cancellation: require reservation_keys instead"
                        )
                    problems.append(Problem(kp, f"/required_parameters/{method}/{i}", msg, "warning"))
    return problems


# ----------------------------------------------------------------------------- eval_config.json
def config_problems(cp: Path, cfg: object) -> list[Problem]:
    """Semantic checks of an eval_config.json, on the raw JSON: they run even when another field has the wrong
    type, so one error does not hide the next."""
    problems: list[Problem] = []
    if not isinstance(cfg, dict):
        return problems
    api_path = cfg.get("expected_api_path")
    if isinstance(api_path, str) and PATH_ALIASES.get(api_path, api_path) not in API_PATHS:
        problems.append(
            Problem(
                cp,
                "/expected_api_path",
                f"unknown API path {api_path!r}; expected one of: {', '.join(API_PATHS)}",
            )
        )
    endpoints = cfg.get("test_endpoints")
    endpoints = endpoints if isinstance(endpoints, dict) else {}
    for phase in ("create", "update", "cancel"):
        ep = endpoints.get(phase)
        if not isinstance(ep, dict):
            continue
        rid = ep.get("response_id_path")
        if isinstance(rid, str) and not rid.strip(". "):
            problems.append(
                Problem(
                    cp,
                    f"/test_endpoints/{phase}/response_id_path",
                    "empty; expected a dot path into the response such as 'reservation.id'",
                )
            )
        method = ep.get("method")
        if isinstance(method, str) and method.upper() not in HTTP_METHODS:
            problems.append(
                Problem(
                    cp,
                    f"/test_endpoints/{phase}/method",
                    f"unknown HTTP method {method!r}; expected one of: {', '.join(sorted(HTTP_METHODS))}",
                )
            )
        path = ep.get("path")
        if isinstance(path, str) and (not path.startswith("/") or path.startswith("//")):
            # the validator sends requests to the app it started, never to a URL a definition names
            problems.append(
                Problem(
                    cp,
                    f"/test_endpoints/{phase}/path",
                    f"{path[:80]!r}: expected a path on the app starting with '/', not a URL",
                )
            )
        if phase == "create" and "response_id_path" not in ep:
            problems.append(
                Problem(
                    cp,
                    "/test_endpoints/create/response_id_path",
                    "missing; the validator needs it to find the new reservation's id",
                )
            )
    problems.extend(_seam_problems(cp, cfg, endpoints))
    return problems


def _seam_problems(cp: Path, cfg: dict, endpoints: dict) -> list[Problem]:
    """What the sandbox needs to set Seam up (graders.sandbox.validate.seam_plan): declared spaces, or a unit
    id in the create payload (``seam.unit_id_field`` or one of UNIT_FIELDS)."""
    create = endpoints.get("create")
    payload = create.get("payload") if isinstance(create, dict) else None
    payload = payload if isinstance(payload, dict) else {}
    seam = cfg.get("seam")
    if seam is not None and not isinstance(seam, dict):
        return []  # the model reports the wrong type
    seam = seam or {}
    problems: list[Problem] = []
    for field in ("unit_id_field", "property_id_field"):
        name = seam.get(field)
        if isinstance(name, str) and name not in payload:
            problems.append(
                Problem(
                    cp,
                    f"/seam/{field}",
                    f"{name!r} is not a field of the create payload (test_endpoints/create/payload)",
                )
            )
    declared = seam.get("spaces") or isinstance(seam.get("unit_id_field"), str)
    if not declared and not any(f in payload for f in UNIT_FIELDS):
        problems.append(
            Problem(
                cp,
                "/seam",
                f"missing: the create payload has no unit id field ({', '.join(UNIT_FIELDS)}), "
                "so the sandbox cannot tell which space to create; declare seam.unit_id_field "
                "or seam.spaces",
            )
        )
    return problems


def dockerfile_problems(d: SeamEval) -> list[Problem]:
    """The Dockerfile must be in the subset the sandbox runs (definitions.dockerfile), and something must
    start the app (its CMD/ENTRYPOINT, or run.start)."""
    from skillassay.definitions.dockerfile import DockerfileError, load_dockerfile

    path = d.dockerfile
    if path is None or not path.is_file():
        return []
    try:
        spec = load_dockerfile(path)
    except DockerfileError as exc:
        return [Problem(path, "", (f"line {exc.line}: " if exc.line else "") + exc.message)]
    run = d.config.run if d.config else None
    if spec.start_argv() is None and (run is None or run.start is None):
        return [
            Problem(
                path, "", "no CMD or ENTRYPOINT, and no run.start in eval_config.json: nothing starts the app"
            )
        ]
    return []


def inspect_plan(
    source: Path, defined: Defined = defined_functions
) -> tuple[EvalDefinition | None, list[Problem]]:
    """A fixture folder of the plan's format: the definition (None when it cannot load) and every problem."""
    problems: list[Problem] = []
    config_file = source / CONFIG_FILE
    raw: list[Problem] = []
    config_data = read_json(config_file, raw) if config_file.is_file() else None
    app_dir = source / "app"
    if app_dir.is_symlink():
        # refused before anything reads it: the rest of the checks would walk whatever it points at
        return None, folder_problems(app_dir, "the pristine app (app/)")
    try:
        d = load_fixture(source, problems=problems)
    except DefinitionError:
        d = None
    rubric_file = suite_dir_of(source) / RUBRIC_FILE
    problems = [p for p in problems if p.file != rubric_file]  # all of them below, structural and semantic
    problems.extend(rubric_problems(rubric_file))
    problems.extend(config_problems(config_file, config_data))
    if d is not None:
        problems.extend(answer_key_problems(d, defined))
        problems.extend(dockerfile_problems(d))
        problems.extend(fixture_folder_problems(d))
    else:
        # the rest cannot load, but what is missing can still be named now rather than one round later
        problems.extend(golden_problems(source))
    problems.extend(_empty_key_problems(source / ANSWER_KEY_FILE))
    return d, problems


def _empty_key_problems(kp: Path) -> list[Problem]:
    """An answer key that expects no call grades nothing (a scaffold not yet filled in)."""
    if not kp.is_file():
        return []  # reported by the loader
    data = read_json(kp, [])  # its own problems (invalid, too deep, too big) are reported by the loader
    if (
        isinstance(data, dict)
        and isinstance(data.get("expected_calls", {}), dict)
        and not data.get("expected_calls")
    ):
        return [
            Problem(
                kp,
                "/expected_calls",
                "empty: name the Seam SDK calls each phase must make, e.g. "
                '{"create": ["customers.push_data"], ...}',
            )
        ]
    return []
