"""Emulator gaps in a sandbox run: an app's Seam request the emulator answered ``501 not_implemented``, or
answered from the generic engine (an approximate route, ``seam/emulator/generic.py``), inside the window of
a check that failed.

A gap is never the agent's failure, and never a way out (issue 27):
- **excused**: on a route a correct solution to the eval may use (``eval_routes``: derived from the eval's
  integration path) and in a failing check's own window: the run is the harness's failure (unscored);
- **flagged** otherwise (a route no correct solution needs, called on purpose or by mistake): the run is
  scored as it stands, and counted in the arms' unscored-share guard (``outcomes.SERVICE_GAP_FIGURE``), so
  an app that makes its failures land on gaps buys nothing.

A request outside every check's window (start-up, between steps) excuses nothing; nor does one in the
window of a check that passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Literal

from pydantic import BaseModel

from skillassay.seam.behaviour.result import SandboxResult
from skillassay.seam.behaviour.trace import SeamTrace
from skillassay.seam.rubric.checks import canonical_path

# Routes any path's correct solution may use (prefixes end with "/"; others are exact routes).
_COMMON = (
    "/devices/",
    "/locks/",
    "/connected_accounts/",
    "/action_attempts/",
    "/events/",
    "/webhooks/",
    "/workspaces/get",
)
# Each path's own routes, as written in Seam's guides for it; a path reads the others' records at most.
PATH_ROUTES: dict[str, tuple[str, ...]] = {
    "access_codes": ("/access_codes/",),
    "access_grants": (
        "/access_grants/",
        "/access_methods/",
        "/user_identities/",
        "/spaces/",
        "/acs/",
        "/access_codes/list",
        "/access_codes/get",
    ),
    "reservation_automations": (
        "/customers/",
        "/spaces/",
        "/user_identities/",
        "/access_grants/list",
        "/access_grants/get",
        "/access_methods/list",
        "/access_methods/get",
        "/access_codes/list",
        "/access_codes/get",
    ),
}


def _matches(path: str, patterns: Iterable[str]) -> bool:
    return any(path.startswith(p) if p.endswith("/") else path == p for p in patterns)


@cache
def eval_routes(api_path: str) -> frozenset[str]:
    """The public routes a correct solution on ``api_path`` may call (none for an unknown path); the
    sandbox-only ``/simulate/`` routes never."""
    from skillassay.seam.emulator.generic import public_routes
    from skillassay.seam.emulator.spec import load_spec

    path = canonical_path(api_path)
    if path is None:
        return frozenset()
    patterns = _COMMON + PATH_ROUTES[path]
    return frozenset(r for r in public_routes(load_spec()) if "/simulate/" not in r and _matches(r, patterns))


@cache
def _approximate() -> frozenset[str]:
    from skillassay.seam.emulator.generic import approximate_routes
    from skillassay.seam.emulator.spec import load_spec

    return approximate_routes(load_spec())


def approximate_paths() -> frozenset[str]:
    """The routes the emulator answers from its generic engine (approximate), read once."""
    return _approximate()


class EmulatorGap(BaseModel):
    check: str  # the failing check whose window the request arrived in
    method: str
    path: str
    status: int | None
    kind: Literal["not_implemented", "approximate"]
    excused: bool  # on a route a correct solution to the eval may use

    def text(self) -> str:
        what = "501 not implemented" if self.kind == "not_implemented" else "an approximate (generic) answer"
        return f"{self.method} {self.path} got {what} during the failing {self.check} check"


def gap_requests(trace: SeamTrace | None, approximate: frozenset[str] | None = None) -> list[str]:
    """Every request of a trace the emulator answered 501 or from its generic engine, whatever its window
    and its check's fate, as ``METHOD path -> status`` (a control, a golden above all, must meet none:
    what it is checked against would be the generic engine's guess, not Seam's semantics)."""
    generic = _approximate() if approximate is None else approximate
    return [
        f"{r.method} {r.path} -> {r.status}"
        for r in (trace.requests if trace is not None else [])
        if r.status == 501 or r.path in generic
    ]


def emulator_gaps(
    result: SandboxResult, api_path: str, approximate: frozenset[str] | None = None
) -> list[EmulatorGap]:
    """The gaps in the windows of ``result``'s failing checks (see the module's docstring)."""
    trace = result.seam_trace
    if trace is None:
        return []
    generic = _approximate() if approximate is None else approximate
    allowed = eval_routes(api_path)
    failing = {name for name, check in result.checks.items() if not check.passed}
    gaps = []
    for request in trace.requests:
        if request.endpoint not in failing:
            continue
        if request.status == 501:
            kind: Literal["not_implemented", "approximate"] = "not_implemented"
        elif request.path in generic:
            kind = "approximate"
        else:
            continue
        gaps.append(
            EmulatorGap(
                check=str(request.endpoint),
                method=request.method,
                path=request.path,
                status=request.status,
                kind=kind,
                excused=request.path in allowed,
            )
        )
    return gaps
