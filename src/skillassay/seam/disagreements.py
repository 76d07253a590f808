"""Where the static reading and the run's Seam trace disagreed: the static reading's blind spots, found in
the wild. Read back from each run's ``rubric.json`` (the hybrid pass, ``seam/rubric/hybrid.py``) for a job's
report, and the run's trace from ``sandbox.json`` for its page. Nothing is graded again here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay.seam.rubric.hybrid import Disagreement
from skillassay.store.records import RunRecord

MAX_FILE_BYTES = 20_000_000  # a rubric.json or sandbox.json larger than this is not read for a report
MAX_SHOWN = 50  # requests per endpoint step on a run page


class RunDisagreement(Disagreement):
    """One disagreement, with the run it was found in."""

    eval_id: str
    run: str  # the run's folder, relative to the results root
    variant: str = "skill"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_disagreements(run_dir: Path) -> list[Disagreement]:
    """The disagreements the hybrid pass recorded in a run's rubric.json (none when it did not run)."""
    data = _read_json(run_dir / "rubric.json") or {}
    out = []
    for raw in data.get("disagreements") or []:
        try:
            out.append(Disagreement.model_validate(raw))
        except ValueError:
            continue  # a file written by another version: shown nowhere rather than wrongly
    return out


def job_disagreements(results_root: Path, runs: Sequence[RunRecord]) -> list[RunDisagreement]:
    """Every disagreement across a job's scored runs, in run order."""
    out = []
    for run in runs:
        if not run.scored:
            continue
        for d in run_disagreements(Path(results_root) / run.run_dir):
            out.append(
                RunDisagreement(**d.model_dump(), eval_id=run.eval_id, run=run.run_dir, variant=run.variant)
            )
    return out


def describe(d: Disagreement) -> str:
    """One disagreement as a sentence: which claim, what each source said, what decided."""
    said = "runs" if d.static else "does not run"
    shown = "sent" if d.trace else "not sent"
    steps = "/".join(d.endpoints) or "no"
    return f"{d.category}: {d.claim} — static: {said}; trace ({steps} step): {shown}. {d.why}"


def lines(found: Iterable[RunDisagreement]) -> list[str]:
    """A job's disagreements for the terminal: a heading, then one line per disagreement."""
    rows = list(found)
    if not rows:
        return []
    runs = len({r.run for r in rows})
    out = [f"Static/trace disagreements: {len(rows)} in {runs} run(s) (the trace decided each)"]
    out += [f"  {r.eval_id} {Path(r.run).name}: {describe(r)}" for r in rows]
    return out


class StepRequests(BaseModel):
    endpoint: str
    start_s: float
    end_s: float
    requests: list[dict[str, Any]] = Field(default_factory=list)
    hidden: int = 0


class RouteUse(BaseModel):
    """One Seam route the app called during the run, as its page lists it."""

    method: str
    path: str
    count: int
    statuses: list[int | None]  # each distinct answer, in the order first met
    emulator: Literal["emulated", "approximate", "not_implemented"]  # how the emulator answered it
    gap: Literal["excused", "flagged"] | None = None  # an emulator gap in a failing check's window


class TraceSummary(BaseModel):
    """A run's Seam trace for its page: the routes it used, the requests of each endpoint step, the
    unattributed, the dropped."""

    routes: list[RouteUse] = Field(default_factory=list)

    steps: list[StepRequests] = Field(default_factory=list)
    unattributed: list[dict[str, Any]] = Field(default_factory=list)
    unattributed_hidden: int = 0
    dropped: int = 0
    disagreements: list[str] = Field(default_factory=list)
    hybrid: str | None = None  # how the rubric was decided (hybrid or static, and why)


def _shown(requests: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    keep = ("method", "path", "status", "error", "start_s", "end_s")
    return [{k: r.get(k) for k in keep} for r in requests[:MAX_SHOWN]], max(0, len(requests) - MAX_SHOWN)


def trace_summary(run_dir: Path) -> TraceSummary | None:
    """The run's trace and disagreements, or None when the run has neither (no sandbox, another kind)."""
    sandbox = _read_json(run_dir / "sandbox.json") or {}
    rubric = _read_json(run_dir / "rubric.json") or {}
    trace = sandbox.get("seam_trace") if isinstance(sandbox.get("seam_trace"), dict) else None
    hybrid = rubric.get("hybrid") if isinstance(rubric.get("hybrid"), dict) else None
    if trace is None and hybrid is None:
        return None
    out = TraceSummary()
    if hybrid is not None:
        out.hybrid = ("hybrid: " if hybrid.get("applied") else "static: ") + str(hybrid.get("reason", ""))
    out.disagreements = [describe(d) for d in run_disagreements(run_dir)]
    if trace is not None:
        requests = [r for r in trace.get("requests") or [] if isinstance(r, dict)]
        for w in trace.get("windows") or []:
            mine = [r for r in requests if r.get("endpoint") == w.get("endpoint")]
            shown, hidden = _shown(mine)
            out.steps.append(
                StepRequests(
                    endpoint=str(w.get("endpoint")),
                    start_s=float(w.get("start_s") or 0),
                    end_s=float(w.get("end_s") or 0),
                    requests=shown,
                    hidden=hidden,
                )
            )
        out.unattributed, out.unattributed_hidden = _shown([r for r in requests if r.get("endpoint") is None])
        out.dropped = int(trace.get("dropped") or 0)
        out.routes = routes_used(requests, sandbox.get("emulator_gaps") or [])
    return out


def routes_used(requests: list[dict[str, Any]], gaps: list[dict[str, Any]]) -> list[RouteUse]:
    """Every route the trace holds, with how the emulator answered it (hand-written, the generic engine's
    approximate answer, 501) and whether a failing check met it as a gap (excused or flagged)."""
    from skillassay.seam.behaviour.gaps import approximate_paths

    approximate = approximate_paths()
    gap_of = {(g.get("method"), g.get("path")): "excused" if g.get("excused") else "flagged" for g in gaps}
    used: dict[tuple[str, str], RouteUse] = {}
    for r in requests:
        key = (str(r.get("method")), str(r.get("path")))
        status = r.get("status") if isinstance(r.get("status"), int) else None
        use = used.get(key)
        if use is None:
            use = used[key] = RouteUse(
                method=key[0], path=key[1], count=0, statuses=[], emulator="emulated", gap=gap_of.get(key)
            )
        use.count += 1
        if status not in use.statuses:
            use.statuses.append(status)
        if status == 501:
            use.emulator = "not_implemented"
        elif key[1] in approximate and use.emulator == "emulated":
            use.emulator = "approximate"
    return sorted(used.values(), key=lambda u: (u.path, u.method))
