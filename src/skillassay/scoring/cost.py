"""What runs cost, and what a pass cost: from each run's model cost (measured by the job's model proxy) and
verdict.

Every run counts toward the money spent, graded or not (a run the provider failed was still paid for); only
passes count as passes. A run whose cost is unknown (no proxy, or a model missing from the price table) makes
the totals a lower bound, and ``complete`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from skillassay.outcomes import is_scored


class CostSummary(BaseModel):
    runs: int = 0
    priced_runs: int = 0  # runs whose cost is known
    total_usd: float = 0.0
    per_run_usd: float | None = None  # mean over priced runs
    passes: int = 0
    per_pass_usd: float | None = None  # total / passes (None without a pass, or without a priced run)
    complete: bool = True  # every run's cost is known: the totals are exact, not a lower bound

    def text(self) -> str:
        if not self.priced_runs:
            return "–"
        bound = "" if self.complete else "≥ "
        per_pass = f"{bound}${self.per_pass_usd:.4f}/pass" if self.per_pass_usd is not None else "no pass"
        return f"{bound}${self.total_usd:.4f} ({per_pass})"


def cost_summary(runs: Iterable[tuple[float | None, bool, bool]]) -> CostSummary:
    """``runs``: (cost in USD or None when unknown, passed, cost complete) per run."""
    s = CostSummary()
    for cost, passed, complete in runs:
        s.runs += 1
        s.passes += bool(passed)
        if cost is None:
            s.complete = False
            continue
        s.priced_runs += 1
        s.total_usd += cost
        s.complete = s.complete and complete
    if s.priced_runs:
        s.total_usd = round(s.total_usd, 6)
        s.per_run_usd = round(s.total_usd / s.priced_runs, 6)
        s.per_pass_usd = round(s.total_usd / s.passes, 6) if s.passes else None
    return s


def runs_cost(runs: Iterable) -> CostSummary:
    """The cost summary of stored runs (anything with ``model_usage``, ``verdict`` and ``outcome``)."""
    triples = []
    for r in runs:
        usage = getattr(r, "model_usage", None)
        verdict = getattr(r, "verdict", None)
        passed = bool(verdict is not None and verdict.passed and is_scored(r.outcome))
        if usage is None:
            triples.append((None, passed, False))
        else:
            triples.append((usage.cost_usd, passed, not usage.unpriced_models))
    return cost_summary(triples)
