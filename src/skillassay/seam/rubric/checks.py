"""The six checks of the plan's rubric, looked up by the ``check`` name a rubric.json category gives.

Each check returns a score in 0..1 and the evidence for it. Scoring rules: docs/rubric.md.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from skillassay.languages.base import Module, Route, Value
from skillassay.languages.callgraph import Reach
from skillassay.languages.routes import MountedRoute, endpoint_routes, mounted_routes, resolve_name
from skillassay.seam.plan import PATH_ALIASES, RUBRIC_CHECKS, AnswerKey
from skillassay.seam.rubric.models import Finding
from skillassay.seam.rubric.project import FnRef, Project, SdkCall
from skillassay.seam.rubric.sdk_surface import event_types
from skillassay.workspace.changes import ChangeSet

# The call that identifies each integration path (the plan's "lower_level" is access_codes).
PATH_SIGNATURES = {
    "reservation_automations": "customers.push_data",
    "access_grants": "access_grants.create",
    "access_codes": "access_codes.create",
}


def canonical_path(name: str) -> str | None:
    name = PATH_ALIASES.get(name, name)
    return name if name in PATH_SIGNATURES else None


@dataclass
class Context:
    """Everything a check reads: both apps' outlines, the change, the answer key and the test endpoints."""

    project: Project  # the modified app: every source file parsed, Seam calls counted in the changed ones
    pristine: dict[str, Module]  # the pristine app's outlines (unchanged files shared with ``project``)
    changes: ChangeSet
    answer_key: AnswerKey
    expected_api_path: str  # canonical
    endpoints: dict[str, tuple[str, str]] = field(default_factory=dict)  # phase -> (METHOD, path)
    _routes: list[MountedRoute] | None = None

    def routes(self) -> list[MountedRoute]:
        """Every route of the modified app, mount prefixes applied (computed once)."""
        if self._routes is None:
            self._routes = mounted_routes(self.project.modules.values())
        return self._routes


CheckResult = tuple[float, list[Finding]]
CHECKS: dict[str, Callable[[Context], CheckResult]] = {}  # the plan's RUBRIC_CHECKS, each registered below


def check(name: str) -> Callable[[Callable[[Context], CheckResult]], Callable[[Context], CheckResult]]:
    """Register a check under one of the plan's names (``seam/plan.py: RUBRIC_CHECKS``, what a definition may
    name): a name the plan does not list is refused here, so the two cannot drift apart."""
    if name not in RUBRIC_CHECKS:
        raise ValueError(f"rubric check {name!r} is not one of the plan's RUBRIC_CHECKS (seam/plan.py)")

    def deco(fn: Callable[[Context], CheckResult]) -> Callable[[Context], CheckResult]:
        CHECKS[name] = fn
        return fn

    return deco


def _calls_named(ctx: Context, name: str) -> list[SdkCall]:
    return [c for c in ctx.project.sdk_calls if c.name == name]


def _call_finding(c: SdkCall, ok: bool = True, extra: str = "") -> Finding:
    names = [
        c.module.functions[i].qualname for i in c.module.enclosing(c.call.scope) if c.module.functions[i].name
    ]
    where = f" in {names[0]}" if names else " at module level"
    problems = f" ({'; '.join(c.problems)})" if c.problems else ""
    return Finding(ok=ok, message=f"`{c.label}` ({c.name}){where}{extra}{problems}", location=c.location)


def _dead_findings(ctx: Context, name: str | None = None) -> list[Finding]:
    """Seam calls written where they never run: named in the evidence, never counted."""
    out = []
    for c in ctx.project.dead_calls:
        if name is None or c.name == name:
            why = (
                "behind a condition that is never true, or after a return"
                if c.call.dead
                else "in a function nothing calls"
            )
            out.append(
                Finding(ok=False, message=f"`{c.label}` ({c.name}) never runs: {why}", location=c.location)
            )
    return out


# ----------------------------------------------------------------------------- api_path_match
def paths_taken(ctx: Context) -> list[str]:
    """The Seam integration paths whose signature call the change makes, whatever the answer key expects."""
    return sorted(path for path, signature in PATH_SIGNATURES.items() if _calls_named(ctx, signature))


@check("api_path_match")
def api_path_match(ctx: Context) -> CheckResult:
    present: dict[str, list[SdkCall]] = {}
    for path, signature in PATH_SIGNATURES.items():
        calls = _calls_named(ctx, signature)
        if calls:
            present[path] = calls
    evidence = [
        _call_finding(c, ok=path == ctx.expected_api_path, extra=f": the {path} path")
        for path in sorted(present)
        for c in present[path]
    ]
    evidence += _dead_findings(ctx, PATH_SIGNATURES[ctx.expected_api_path])
    expected = ctx.expected_api_path
    others = sorted(p for p in present if p != expected)
    if expected not in present:
        evidence.append(
            Finding(
                ok=False,
                message=f"no `{PATH_SIGNATURES[expected]}` call: the expected path "
                f"({expected}) was not taken",
            )
        )
        return 0.0, evidence
    if others:
        evidence.append(
            Finding(ok=False, message=f"another path's signature call is present too: {', '.join(others)}")
        )
        return 0.5, evidence
    return 1.0, evidence


# ----------------------------------------------------------------------------- files_modified_match
def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def _allowed(path: str, patterns: list[str]) -> bool:
    for pattern in map(_norm, patterns):
        if path == pattern or fnmatch.fnmatchcase(path, pattern):
            return True
        if pattern.endswith("/") and path.startswith(pattern):
            return True
    return False


@check("files_modified_match")
def files_modified_match(ctx: Context) -> CheckResult:
    key = ctx.answer_key
    changed = set(ctx.changes.modified) | set(ctx.changes.added)
    evidence: list[Finding] = []
    expected = sorted({_norm(p) for p in key.expected_files_modified})
    hit = 0
    for path in expected:
        if path in changed:
            hit += 1
            evidence.append(Finding(ok=True, message=f"modified {path}", location=path))
        else:
            evidence.append(
                Finding(ok=False, message=f"expected {path} to be modified; it was not", location=path)
            )
    share = hit / len(expected) if expected else 1.0
    added = ctx.changes.added
    unexpected = [p for p in added if not _allowed(p, key.expected_new_files_allowed) and p not in expected]
    not_allowed = set(unexpected)  # a set: thousands of added files must not cost their square
    for path in added:
        if path in not_allowed:
            evidence.append(Finding(ok=False, message=f"unexpected new file {path}", location=path))
        else:
            evidence.append(Finding(ok=True, message=f"new file {path} (allowed)", location=path))
    penalty = 0.3 * len(unexpected) / len(added) if added else 0.0
    return max(0.0, min(1.0, share - penalty)), evidence


# ----------------------------------------------------------------------------- calls_in_expected_functions
def _placed(ctx: Context, call_name: str, function: str) -> tuple[bool, Finding]:
    """Whether a function named ``function`` reaches a live ``call_name`` call through the call graph."""
    project = ctx.project
    starts = project.find_functions(function)
    if not starts:
        return False, Finding(
            ok=False, message=f"{call_name} in {function}: no function named {function} in the app"
        )
    reach = project.reach(starts)
    calls = project.reached_calls(reach, call_name)
    if calls:
        first = calls[0]
        path = reach.path(first.scope)
        via = f" via {project.chain_text(reach, first)}" if len(path) > 1 else ""
        return True, Finding(
            ok=True, message=f"{call_name} in {function}{via}: `{first.label}`", location=first.location
        )
    where = ", ".join(project.describe(s) for s in starts)
    return False, Finding(
        ok=False,
        message=f"{call_name} not reached from {function} ({where}){_unawaited(ctx, reach, call_name)}",
    )


def _unawaited(ctx: Context, reach: Reach, call_name: str) -> str:
    """Why a call is not reached when a coroutine that would reach it is made and never awaited."""
    project = ctx.project
    for ref in reach:
        for call, target in project.graph.dropped_coroutine_calls(ref):
            if project.reached_calls(project.reach([target]), call_name):
                where = f"{ref.module}:{call.line}"
                return (
                    f"; `{'.'.join(call.chain)}(...)` at {where} makes a coroutine nothing awaits: "
                    f"{project.graph.name(target)} never runs"
                )
    return ""


@check("calls_in_expected_functions")
def calls_in_expected_functions(ctx: Context) -> CheckResult:
    pairs = [(call, fn) for call, fns in sorted(ctx.answer_key.expected_placements.items()) for fn in fns]
    if not pairs:
        return 1.0, [Finding(ok=True, message="the answer key expects no placements")]
    evidence = []
    placed = 0
    for call_name, fn in pairs:
        ok, finding = _placed(ctx, call_name, fn)
        placed += ok
        evidence.append(finding)
    return placed / len(pairs), evidence


# ----------------------------------------------------------------------------- required_params_present
def _steps(param: str) -> list[str]:
    """``reservations[].space_keys`` -> ["reservations", "[]", "space_keys"]."""
    steps: list[str] = []
    for part in param.split("."):
        while part.endswith("[]"):
            part = part[:-2]
            steps.append(part)
            steps.append("[]")
            part = ""
        if part:
            steps.append(part)
    return [s for s in steps if s]


def _has_param(project: Project, sdk: SdkCall, param: str, accepted: list[str]) -> tuple[bool, str | None]:
    """Whether the call's parameters hold ``param``; the second value notes a spelling correction."""
    steps = _steps(param)
    note = None
    if steps and accepted and steps[0] not in accepted and steps[0] + "s" in accepted:
        note = f"`{steps[0]}` read as `{steps[0]}s` (the SDK's {sdk.method} takes `{steps[0]}s`)"
        steps[0] = steps[0] + "s"
    # a raw request's query string (DELETE ...?reservation_keys=)
    if len(steps) == 1 and steps[0] in sdk.query:
        return True, note
    current = [project.argument(sdk)]
    for step in steps:
        if step == "[]":
            current = [item for ctx in current for item in project.items(ctx)]
        else:
            current = [v for ctx in current for v in project.key_values(ctx, step)]
        if not current:
            return False, note
    return True, note


def _method_calls(ctx: Context, method: str) -> tuple[list[str], list[SdkCall]]:
    expected = sorted(
        {
            c
            for calls in ctx.answer_key.expected_calls.values()
            for c in calls
            if c.rsplit(".", 1)[-1] == method
        }
    )
    if expected:
        return expected, [c for c in ctx.project.sdk_calls if c.name in expected]
    calls = [c for c in ctx.project.sdk_calls if c.method == method]
    return sorted({c.name for c in calls}) or [method], calls


@check("required_params_present")
def required_params_present(ctx: Context) -> CheckResult:
    required = ctx.answer_key.required_parameters
    if not required:
        return 1.0, [Finding(ok=True, message="the answer key requires no parameters")]
    evidence: list[Finding] = []
    method_scores = []
    for method, params in sorted(required.items()):
        names, calls = _method_calls(ctx, method)
        if not calls:
            evidence.append(Finding(ok=False, message=f"{method}: no {' / '.join(names)} call found"))
            method_scores.append(0.0)
            continue
        scores = []
        for sdk in calls:
            if not sdk.valid:
                scores.append(0.0)
                for problem in sdk.problems:
                    evidence.append(
                        Finding(ok=False, message=f"{sdk.name}: {problem}", location=sdk.location)
                    )
                continue
            accepted = ctx.project.surface_params(sdk)
            present: list[str] = []
            missing: list[str] = []
            notes: list[str] = []
            for param in params:
                ok, note = _has_param(ctx.project, sdk, param, accepted)
                (present if ok else missing).append(param)
                if note:
                    notes.append(note)
            share = len(present) / len(params) if params else 1.0
            scores.append(share)
            msg = f"{sdk.name}: {len(present)}/{len(params)} required parameters"
            if missing:
                msg += f"; missing {', '.join(missing)}"
            if notes:
                msg += f" ({'; '.join(notes)})"
            evidence.append(Finding(ok=not missing, message=msg, location=sdk.location))
        method_scores.append(sum(scores) / len(scores))
    return sum(method_scores) / len(method_scores), evidence


# ----------------------------------------------------------------------------- all_handlers_modified
# Words that tie a lifecycle phase to its handler's name (createReservation, update_booking, cancelStay, ...).
PHASE_WORDS = {
    "create": ("create", "add"),
    "update": ("update", "change", "modify", "edit", "reschedule"),
    "cancel": ("cancel", "delete", "remove"),
}


def _phase_handlers(ctx: Context, phase: str, call_name: str) -> list[str]:
    words = PHASE_WORDS.get(phase, (phase,))
    fns = ctx.answer_key.expected_placements.get(call_name, [])
    return [fn for fn in fns if any(w in fn.lower() for w in words)]


def _endpoint_reach(ctx: Context, phase: str) -> tuple[Reach | None, list[MountedRoute], str]:
    """What the handler(s) of a phase's test endpoint reach; (None, [], label) when no route answers it."""
    method, path = ctx.endpoints[phase]
    label = f"{method} {path}"
    routes = endpoint_routes(ctx.routes(), method, path)
    starts: list[FnRef] = []
    for mounted in routes:
        starts.extend(handler_refs(ctx.project, mounted.module, mounted.route.handlers))
    if not starts:
        return None, routes, label
    return ctx.project.reach(starts), routes, label


@check("all_handlers_modified")
def all_handlers_modified(ctx: Context) -> CheckResult:
    """A phase counts when one of its calls is reachable from the handler of that phase's test endpoint (the
    method and path of create/update/cancel in eval_config), across files, wrappers, classes and injected
    clients. Without an endpoint (or when no route of the app answers it), from the placement function of
    the call whose name names the phase; when none does, a live call anywhere counts (the plan's rule)."""
    phases = ctx.answer_key.expected_calls
    if not phases:
        return 1.0, [Finding(ok=True, message="the answer key lists no lifecycle phases")]
    done = 0
    evidence = []
    for phase, calls in sorted(phases.items()):
        hit: Finding | None = None
        tried: list[str] = []
        if phase in ctx.endpoints:
            reach, routes, label = _endpoint_reach(ctx, phase)
            if reach is not None:
                where = ", ".join(f"{m.module.path}:{m.route.line}" for m in routes)
                for call_name in calls:
                    found = ctx.project.reached_calls(reach, call_name)
                    if found:
                        chain = ctx.project.chain_text(reach, found[0])
                        hit = Finding(
                            ok=True,
                            message=f"{call_name} reached from {label} ({where}) via {chain}: "
                            f"`{found[0].label}`",
                            location=found[0].location,
                        )
                        break
                if hit is None:
                    why = "".join(_unawaited(ctx, reach, c) for c in calls[:1])
                    tried.append(f"{' or '.join(calls)} from the handler of {label} ({where}){why}")
            else:
                tried.append(f"no route of the app answers {label}")
        if hit is None and not (phase in ctx.endpoints and not tried[-1].startswith("no route")):
            hit = _by_name(ctx, phase, calls, tried)
        if hit is not None:
            done += 1
            evidence.append(Finding(ok=True, message=f"{phase}: {hit.message}", location=hit.location))
        else:
            evidence.append(Finding(ok=False, message=f"{phase}: not handled ({'; '.join(tried)})"))
    return done / len(phases), evidence


def _by_name(ctx: Context, phase: str, calls: list[str], tried: list[str]) -> Finding | None:
    """The rule without an endpoint: from the placement function naming the phase, else a live call
    anywhere.
    """
    for call_name in calls:
        handlers = _phase_handlers(ctx, phase, call_name)
        if handlers:
            for fn in handlers:
                ok, finding = _placed(ctx, call_name, fn)
                tried.append(f"{call_name} from {fn}")
                if ok:
                    return finding
        else:
            found = _calls_named(ctx, call_name)
            tried.append(call_name)
            if found:
                return _call_finding(found[0])
    return None


# ----------------------------------------------------------------------------- webhook_route_added
_WEBHOOK = re.compile("webhook", re.IGNORECASE)


def _is_event(text: str) -> bool:
    events = event_types()
    if text in events:
        return True
    return text.endswith(".") and any(e.startswith(text) for e in events)


def handler_refs(project: Project, module: Module, values: list[Value]) -> list[FnRef]:
    """The functions a route's handler values stand for (inline, by name, imported, re-exported, wrapped)."""
    out: list[FnRef] = []
    for value in values:
        found = project.graph.value_functions(module, None, value)
        if not found and value.kind == "ref" and value.chain:
            # a handler imported (or re-exported: `export { handle as POST } from './h'`) from a parsed module
            target = resolve_name(project.modules, module, value.chain)
            if target is not None:
                found = [r for r in project.by_name.get(target[1], []) if r.module == target[0].path]
        out.extend(r for r in found if r not in out)
    return out


def _module_strings(value: Value) -> list[str]:
    if value.kind == "object":
        return list(value.keys)
    if value.kind == "array":
        return [i.text for i in value.items if i.kind == "str"]
    if value.kind == "call":
        return [s for a in value.args for s in _module_strings(a)]
    return []


def _events_handled(project: Project, handlers: list[FnRef]) -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    reach = project.reach(handlers)
    for ref in reach:
        module = project.modules[ref.module]
        fn = project.graph.function(ref)
        decisions = fn.decision_strings if fn is not None else module.decision_strings
        names = fn.names if fn is not None else set()
        for text, line in decisions:
            if _is_event(text):
                found.setdefault(text, f"{module.path}:{line}")
        for name in sorted(names):  # a module-level dispatch table or list of event types
            for value in module.bindings.get(name, []):
                for text in _module_strings(value):
                    if _is_event(text):
                        found.setdefault(text, f"{module.path}:{value.line}")
    return sorted(found.items())


@check("webhook_route_added")
def webhook_route_added(ctx: Context) -> CheckResult:
    """New routes only: declared in a file the change wrote, with a (method, full path) the pristine app did
    not answer and not declared so in that file before. An unchanged file's routes are never new."""
    before_paths = {(m.route.method, m.path) for m in mounted_routes(ctx.pristine.values())}
    before_decl = {(m.path, r.method, r.path) for m in ctx.pristine.values() for r in m.routes}
    paths: dict[int, tuple[Module, Route, list[str]]] = {}
    for mounted in ctx.routes():
        module, route = mounted.module, mounted.route
        if module.path not in ctx.project.changed:
            continue
        if (module.path, route.method, route.path) in before_decl or (
            route.method,
            mounted.path,
        ) in before_paths:
            continue
        paths.setdefault(id(route), (module, route, []))[2].append(mounted.path)
    new = [(module, route, " | ".join(shown)) for module, route, shown in paths.values()]
    if not new:
        return 0.0, [Finding(ok=False, message="no new HTTP route")]
    best = 0.0
    evidence = []
    for module, route, shown in new:
        handlers = handler_refs(ctx.project, module, route.handlers)
        names = [ctx.project.function(h).qualname for h in handlers]
        events = _events_handled(ctx.project, handlers)
        webhookish = bool(
            _WEBHOOK.search(shown) or _WEBHOOK.search(module.path) or any(_WEBHOOK.search(n) for n in names)
        )
        label = f"new route {route.method} {shown}"
        where = f"{module.path}:{route.line}"
        if events:
            best = max(best, 1.0)
            listed = ", ".join(f"{e} ({loc})" for e, loc in events)
            evidence.append(
                Finding(ok=True, message=f"{label} handles Seam events: {listed}", location=where)
            )
        elif webhookish:
            best = max(best, 0.5)
            evidence.append(
                Finding(
                    ok=False,
                    message=f"{label} is a webhook route but handles no Seam event type",
                    location=where,
                )
            )
        else:
            evidence.append(Finding(ok=False, message=f"{label}: not a webhook route", location=where))
    return best, evidence
