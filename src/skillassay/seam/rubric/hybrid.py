"""The hybrid rubric: the static reading's judgements about what runs, confirmed or refuted by the run's Seam
trace (``seam/behaviour/trace.py``), which the sandbox already recorded. Nothing is run again.

For every claim the static reading makes about reachability (path selection, placement, lifecycle, and
whether what is sent is accepted), the trace says whether that Seam call was sent during the endpoint step the
claim is about. Where the two disagree the trace decides whether the call happens and from which endpoint; the
static reading still decides what only it can see (which file and function, parameters built in code). Where
the trace cannot tell (the step did not run, the emulator's log dropped requests) the static judgement stands
and says so. Each piece of evidence names its ``source`` (static, trace or both) and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay.seam.behaviour.trace import SeamTrace, TraceRequest
from skillassay.seam.plan import AnswerKey, Rubric
from skillassay.seam.rubric.checks import PATH_SIGNATURES, PHASE_WORDS, canonical_path

Source = Literal["static", "trace", "both"]
STATIC_EVIDENCE = "the static reading's evidence"
Seen = Literal["yes", "no", "unknown"]
REFUSED = 400  # the emulator refused what was sent (invalid_input and the like): not a correct call
# the checks whose claims are about what runs; the others (files changed, webhook routes) the trace cannot see
TRACE_JUDGED = (
    "api_path_match",
    "calls_in_expected_functions",
    "all_handlers_modified",
    "required_params_present",
)


class HybridFinding(BaseModel):
    ok: bool
    message: str
    location: str | None = None
    source: Source = "static"
    why: str = ""
    refuted: bool = False  # a static claim the trace shows false


class Disagreement(BaseModel):
    """One claim the static reading and the trace judged differently (a blind spot of the static reading)."""

    category: str
    claim: str
    endpoints: list[str]
    static: bool  # what the static reading said (the call runs there)
    trace: bool  # what the trace showed
    why: str


class HybridCategory(BaseModel):
    score: float
    weighted: float
    check: str
    static_score: float
    source: Source
    why: str
    evidence: list[HybridFinding] = Field(default_factory=list)


class HybridInfo(BaseModel):
    applied: bool
    reason: str
    seconds: float = 0.0


class HybridResult(BaseModel):
    """``rubric.json`` when the hybrid ran: the rubric's shape, each category with its static score, source
    and why; ``static_total`` is the static reading's own total."""

    total: float
    static_total: float
    categories: dict[str, HybridCategory]
    changed_files: list[str] = Field(default_factory=list)
    paths_taken: list[str] = Field(default_factory=list)
    static_paths_taken: list[str] = Field(default_factory=list)
    hybrid: HybridInfo
    disagreements: list[Disagreement] = Field(default_factory=list)


_ROUTE = re.compile(r"/[a-z_]+(?:/[a-z_]+)+")


def call_name(path: str) -> str:
    """``/access_codes/create`` -> ``access_codes.create`` (Seam's routes are the SDK's names); a path spelled
    any other way (``//``, a trailing slash, capitals, dots) names no call: it confirms nothing."""
    route = path.split("?", 1)[0]
    return route[1:].replace("/", ".") if _ROUTE.fullmatch(route) else ""


class TraceView:
    """What the trace says about one call during some endpoint steps: sent (yes), not sent (no), or unknown
    (a step without a window, or requests the emulator's log dropped)."""

    def __init__(self, trace: SeamTrace):
        self.trace = trace
        self.ran = {w.endpoint for w in trace.windows}

    def requests(self, call: str, phases: Iterable[str]) -> list[TraceRequest]:
        wanted = set(phases)
        return [r for r in self.trace.requests if r.endpoint in wanted and call_name(r.path) == call]

    def seen(self, call: str, phases: list[str]) -> tuple[Seen, str]:
        sent = self.requests(call, phases)
        steps = " or ".join(phases) or "no"
        if sent:
            first = sent[0]
            status = "no answer" if first.status is None else f"HTTP {first.status}"
            return "yes", (
                f"the trace shows {first.method} {first.path} ({status}) sent during the "
                f"{first.endpoint} step, {first.start_s:.2f} s in"
            )
        missing = [p for p in phases if p not in self.ran]
        if not phases or missing:
            return "unknown", (
                f"no trace for the {' or '.join(missing) or steps} step (the build failed or the step did "
                "not run): the static reading stands"
            )
        if self.trace.dropped:
            return "unknown", (
                f"the emulator's log dropped {self.trace.dropped} requests: an absence proves nothing, the "
                "static reading stands"
            )
        return "no", f"the trace shows no {call} request during the {steps} step"

    def accepted(self, call: str, phases: list[str]) -> tuple[bool, str]:
        """Whether Seam accepted one of the requests (some answered below 400)."""
        sent = self.requests(call, phases)
        good = [r for r in sent if r.status is not None and r.status < REFUSED]
        if good:
            return True, f"Seam accepted it (HTTP {good[0].status})"
        worst = sent[0] if sent else None
        detail = f"HTTP {worst.status}" if worst and worst.status is not None else "no answer"
        if worst and worst.error:
            detail += f": {worst.error}"
        return False, f"Seam refused every {call} request sent ({detail})"


# ----------------------------------------------------------------------------- the claims
def _phases_of_call(key: AnswerKey, call: str, endpoints: list[str]) -> list[str]:
    listed = [p for p, calls in sorted(key.expected_calls.items()) if call in calls]
    return listed or list(endpoints)


def _phases_of_pair(key: AnswerKey, call: str, fn: str, endpoints: list[str]) -> list[str]:
    """The steps a call placed in ``fn`` is for: those listing the call whose words the function's name
    holds (create_reservation -> create), else every step listing it."""
    listed = _phases_of_call(key, call, endpoints)
    named = [p for p in listed if any(w in fn.lower() for w in PHASE_WORDS.get(p, (p,)))]
    return named or listed


def _finding(f: dict[str, Any], source: Source, why: str, ok: bool | None = None, refuted: bool = False):
    return HybridFinding(
        ok=bool(f.get("ok")) if ok is None else ok,
        message=str(f.get("message", "")),
        location=f.get("location"),
        source=source,
        why=why,
        refuted=refuted,
    )


class Judge:
    """Judges one claim: static says ``claimed``, the trace says ``seen``; the outcome and its evidence."""

    def __init__(self, category: str, disagreements: list[Disagreement]):
        self.category = category
        self.disagreements = disagreements

    def claim(
        self, claim: str, phases: list[str], claimed: bool, seen: Seen, why: str, finding: dict[str, Any]
    ) -> tuple[bool, HybridFinding]:
        if seen == "unknown":
            return claimed, _finding(finding, "static", why)
        happened = seen == "yes"
        if happened == claimed:
            return claimed, _finding(finding, "both", f"the trace agrees: {why}")
        self.disagreements.append(
            Disagreement(
                category=self.category, claim=claim, endpoints=phases, static=claimed, trace=happened, why=why
            )
        )
        if claimed:
            return False, _finding(finding, "trace", f"refuted: {why}", ok=False, refuted=True)
        credited = {"ok": True, "message": f"{claim}: sent (the static reading missed it)"}
        return True, _finding(credited, "trace", f"credited: {why}", ok=True)


# ----------------------------------------------------------------------------- one check each
def _api_path(
    cat: dict[str, Any], static_paths: list[str], ctx: _Ctx, judge: Judge
) -> tuple[float, list[HybridFinding], list[str]]:
    evidence: list[HybridFinding] = []
    present: set[str] = set()
    for path, signature in sorted(PATH_SIGNATURES.items()):
        phases = _phases_of_call(ctx.key, signature, ctx.endpoints)
        seen, why = ctx.view.seen(signature, phases)
        claimed = path in static_paths
        if not claimed and seen != "yes":
            continue
        text = {"ok": claimed, "message": f"`{signature}` (the {path} path) is called"}
        taken, finding = judge.claim(f"{signature} (the {path} path)", phases, claimed, seen, why, text)
        finding.ok = taken and path == ctx.expected
        evidence.append(finding)
        if taken:
            present.add(path)
    others = present - {ctx.expected}
    score = (0.5 if others else 1.0) if ctx.expected in present else 0.0
    evidence += [_finding(f, "static", STATIC_EVIDENCE) for f in cat.get("evidence", [])]
    return score, evidence, sorted(present)


def _placement(cat: dict[str, Any], ctx: _Ctx, judge: Judge) -> tuple[float, list[HybridFinding]] | None:
    pairs = [(call, fn) for call, fns in sorted(ctx.key.expected_placements.items()) for fn in fns]
    found = cat.get("evidence", [])
    if not pairs or len(found) != len(pairs):
        return None
    evidence, placed = [], 0
    if any(
        not str(f.get("message", "")).startswith(f"{call} ")
        for (call, _), f in zip(pairs, found, strict=True)
    ):
        return None  # not one finding per pair in the answer key's order: the static score stands
    for (call, fn), f in zip(pairs, found, strict=True):
        phases = _phases_of_pair(ctx.key, call, fn, ctx.endpoints)
        seen, why = ctx.view.seen(call, phases)
        if not f.get("ok") and "no function named" in str(f.get("message", "")):
            seen, why = (
                "unknown",
                f"no function named {fn} in the app: which function, only the static reading sees",
            )
        ok, finding = judge.claim(f"{call} in {fn}", phases, bool(f.get("ok")), seen, why, f)
        placed += ok
        evidence.append(finding)
    return placed / len(pairs), evidence


def _lifecycle(cat: dict[str, Any], ctx: _Ctx, judge: Judge) -> tuple[float, list[HybridFinding]] | None:
    phases = sorted(ctx.key.expected_calls)
    found = cat.get("evidence", [])
    if not phases or len(found) != len(phases):
        return None
    evidence, done = [], 0
    for phase, f in zip(phases, found, strict=True):
        if not str(f.get("message", "")).startswith(f"{phase}: "):
            return None
        calls = ctx.key.expected_calls[phase]
        verdicts = [ctx.view.seen(c, [phase]) for c in calls]
        yes = [v for v in verdicts if v[0] == "yes"]
        if yes:
            seen, why = yes[0]
        elif any(v[0] == "unknown" for v in verdicts):
            seen, why = next(v for v in verdicts if v[0] == "unknown")
        else:
            seen, why = "no", f"the trace shows no {' or '.join(calls)} request during the {phase} step"
        ok, finding = judge.claim(f"{phase}: {' or '.join(calls)}", [phase], bool(f.get("ok")), seen, why, f)
        done += ok
        evidence.append(finding)
    return done / len(phases), evidence


_SHARE = re.compile(r"^(?P<name>[\w.]+): (?P<have>\d+)/(?P<of>\d+) required parameters")


def _method_shares(cat: dict[str, Any], key: AnswerKey) -> dict[str, list[float]] | None:
    """The static per-call shares of each method's required parameters, read back from its evidence; None
    when the evidence is not in that shape (then the static score stands)."""
    shares: dict[str, list[float]] = {m: [] for m in key.required_parameters}
    for f in cat.get("evidence", []):
        message = str(f.get("message", ""))
        head = message.split(":", 1)[0]
        if head in shares and message.startswith(f"{head}: no "):
            continue  # no call of this method: the method scores 0
        m = _SHARE.match(message)
        method = head.rsplit(".", 1)[-1]
        if method not in shares:
            return None
        shares[method].append(int(m["have"]) / int(m["of"]) if m else 0.0)
    return shares


def _correctness(cat: dict[str, Any], ctx: _Ctx, judge: Judge) -> tuple[float, list[HybridFinding]] | None:
    required = ctx.key.required_parameters
    shares = _method_shares(cat, ctx.key)
    if not required or shares is None:
        return None
    static_scores = {m: sum(s) / len(s) if s else 0.0 for m, s in shares.items()}
    mean = sum(static_scores.values()) / len(static_scores)
    if abs(mean - float(cat.get("score", 0))) > 0.011:
        return None  # read back wrongly: the static score stands
    evidence, scores = [], []
    for method in sorted(required):
        names = sorted(
            {c for cs in ctx.key.expected_calls.values() for c in cs if c.rsplit(".", 1)[-1] == method}
        )
        call = names[0] if names else method
        phases = _phases_of_call(ctx.key, call, ctx.endpoints)
        seen, why = ctx.view.seen(call, phases)
        claimed = bool(shares[method])
        static_text = {
            "ok": static_scores[method] >= 1.0,
            "message": f"{method}: {static_scores[method]:.2f} of the required parameters",
        }
        sent, finding = judge.claim(f"{call} sent", phases, claimed, seen, why, static_text)
        score = static_scores[method] if sent else 0.0
        if sent and seen == "yes":
            accepted, said = ctx.view.accepted(call, phases)
            if not accepted:
                score, finding.ok, finding.refuted = 0.0, False, claimed
                finding.source, finding.why = "trace", f"refuted: {said}"
            elif not claimed:
                score = 1.0  # the parameters are built where the static reading does not look; Seam took them
                finding.why += f"; {said}"
        scores.append(score)
        evidence.append(finding)
    refuted = {m for m, f in zip(sorted(required), evidence, strict=True) if f.refuted}
    for f in cat.get("evidence", []):
        head = str(f.get("message", "")).split(":", 1)[0]
        if head.rsplit(".", 1)[-1] in refuted:
            evidence.append(_finding(f, "trace", "refuted by the trace (above)", ok=False, refuted=True))
        else:
            evidence.append(_finding(f, "static", STATIC_EVIDENCE))
    return sum(scores) / len(scores), evidence


class _Ctx:
    def __init__(self, key: AnswerKey, expected: str, endpoints: list[str], view: TraceView):
        self.key, self.expected, self.endpoints, self.view = key, expected, endpoints, view


# ----------------------------------------------------------------------------- the pass
def _floor2(x: float) -> float:
    from skillassay.seam.rubric.grade import floor2

    return floor2(max(0.0, min(1.0, x)))


def static_only(rubric_json: dict[str, Any], reason: str) -> dict[str, Any]:
    """The static rubric as it is, each category saying the static reading decided and why."""
    out = dict(rubric_json)
    out["categories"] = {
        name: {
            **cat,
            "static_score": cat.get("score"),
            "source": "static",
            "why": reason,
            "evidence": [{**f, "source": "static", "why": reason} for f in cat.get("evidence", [])],
        }
        for name, cat in (rubric_json.get("categories") or {}).items()
    }
    out["static_total"] = rubric_json.get("total")
    out["hybrid"] = HybridInfo(applied=False, reason=reason).model_dump()
    out["disagreements"] = []
    return out


def hybrid(
    rubric_json: dict[str, Any],
    trace: SeamTrace,
    answer_key: AnswerKey,
    rubric: Rubric,
    expected_api_path: str,
    endpoints: list[str],
) -> HybridResult:
    """The static ``rubric_json`` (``RubricResult.to_json()``) judged against ``trace``."""
    ctx = _Ctx(
        answer_key, canonical_path(expected_api_path) or expected_api_path, endpoints, TraceView(trace)
    )
    weights = {c.name: c.weight for c in rubric.categories}
    disagreements: list[Disagreement] = []
    categories: dict[str, HybridCategory] = {}
    static_paths = list(rubric_json.get("paths_taken") or [])
    paths = static_paths
    for name, cat in (rubric_json.get("categories") or {}).items():
        check = str(cat.get("check"))
        judge = Judge(name, disagreements)
        static_score = float(cat.get("score", 0))
        got: tuple[float, list[HybridFinding]] | None = None
        if check == "api_path_match":
            score, found, paths = _api_path(cat, static_paths, ctx, judge)
            got = (score, found)
        elif check == "calls_in_expected_functions":
            got = _placement(cat, ctx, judge)
        elif check == "all_handlers_modified":
            got = _lifecycle(cat, ctx, judge)
        elif check == "required_params_present":
            got = _correctness(cat, ctx, judge)
        categories[name] = _category(name, cat, check, static_score, got, weights, judge)
    total = round(sum(c.weighted for c in categories.values()), 2)
    return HybridResult(
        total=total,
        static_total=float(rubric_json.get("total", 0)),
        categories=categories,
        changed_files=list(rubric_json.get("changed_files") or []),
        paths_taken=paths,
        static_paths_taken=static_paths,
        hybrid=HybridInfo(
            applied=True, reason="the static reading, confirmed or refuted by the run's Seam trace"
        ),
        disagreements=disagreements,
    )


def _category(
    name: str,
    cat: dict[str, Any],
    check: str,
    static_score: float,
    got: tuple[float, list[HybridFinding]] | None,
    weights: dict[str, float],
    judge: Judge,
) -> HybridCategory:
    weight = weights.get(name, float(cat.get("weighted", 0)) / static_score if static_score else 0.0)
    if got is None:
        why = (
            "the trace does not see this (files changed, webhook routes): the static reading decides"
            if check not in TRACE_JUDGED
            else "the static evidence is not in a shape the hybrid reads: the static reading stands"
        )
        found = [_finding(f, "static", why) for f in cat.get("evidence", [])]
        return HybridCategory(
            score=static_score,
            weighted=float(cat.get("weighted", 0)),
            check=check,
            static_score=static_score,
            source="static",
            why=why,
            evidence=found,
        )
    raw, found = got
    score = _floor2(raw)
    judged = [f for f in found if f.why not in (STATIC_EVIDENCE, "refuted by the trace (above)")]
    sources = {f.source for f in judged}
    source: Source = "trace" if "trace" in sources else ("both" if "both" in sources else "static")
    mine = [d for d in judge.disagreements if d.category == name]
    why = (
        f"{len(mine)} static claim(s) settled by the trace"
        if mine
        else (
            "the trace agrees with the static reading"
            if source == "both"
            else "no trace for these steps: the static reading stands"
        )
    )
    return HybridCategory(
        score=score,
        weighted=round(score * weight, 2),
        check=check,
        static_score=static_score,
        source=source,
        why=why,
        evidence=found,
    )
