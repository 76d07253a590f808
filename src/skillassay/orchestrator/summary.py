"""The job summary: one row per eval (and variant), as a terminal table or JSON."""

from __future__ import annotations

from statistics import mean
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer
from rich.markup import escape
from rich.table import Table

from skillassay.definitions.models import EvalDefinition
from skillassay.kinds.base import (
    EvalColumn,
    FigureColumn,
    SummaryValue,
    eval_columns,
    figure_columns,
    unjudged_notes,
)
from skillassay.orchestrator import canary as canaries
from skillassay.outcomes import OUTCOMES, SCORED, label
from skillassay.report.runs import run_reason
from skillassay.report.tables import fit
from skillassay.scoring.cost import CostSummary, runs_cost
from skillassay.scoring.verdict import points_text
from skillassay.store.records import CanaryCheck, RunRecord


class Spread(BaseModel):
    mean: float
    min: float
    max: float
    n: int

    def text(self, unit: str = "") -> str:
        # the digits the verdict is decided on (scoring.verdict.SCORE_DECIMALS): a run shown as 80 passes at
        # 80
        if self.n == 1:
            return points_text(self.mean) + unit
        return f"{points_text(self.mean)}{unit} ({points_text(self.min)}-{points_text(self.max)}{unit})"


def spread(values: list[float | None]) -> Spread | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return Spread(mean=round(mean(vals), 2), min=min(vals), max=max(vals), n=len(vals))


class EvalSummary(BaseModel):
    eval_id: str
    variant: str
    runs: int
    outcomes: dict[str, int]
    errors: list[str] = Field(default_factory=list)  # why the unscored runs were not scored
    # why runs failed or were not scored, short (scoring/reasons.py), the most frequent first
    reasons: list[str] = Field(default_factory=list)
    graded: int = 0  # runs that count: the scored outcomes (completed, agent error, timed out)
    # the kinds' own figures (``FigureColumn.key`` -> spread; the Seam kind's rubric, sandbox, combined):
    # in the JSON, each a key of its own after ``graded``
    figures: dict[str, Spread | None] = Field(default_factory=dict)
    # the kinds' own per-eval columns' fields (``EvalColumn.fields``; the Seam kind's api_path and
    # api_path_correct): in the JSON, each a key of its own after the key the column names
    columns: dict[str, SummaryValue] = Field(default_factory=dict)
    score: Spread | None = None  # verdict score, 0-100
    passed: int = 0
    pass_rate: float | None = None
    unjudged: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    threshold: float | None = None
    # what the model calls of every run of this eval cost (graded or not: a failed run was paid for too)
    cost: CostSummary = Field(default_factory=CostSummary)
    # the eval's golden on this machine (orchestrator/canary.py): its scores' spread is the grader noise
    canary: CanaryCheck | None = None
    noise: float | None = None

    @model_serializer(mode="wrap")
    def _figures_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        after: dict[str, dict[str, Any]] = {"graded": data.pop("figures", {})}
        columns = data.pop("columns", {})
        for column in eval_columns():
            for name, key in column.fields.items():
                if name in columns:
                    after.setdefault(key, {})[name] = columns[name]
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[key] = value
            out.update(after.get(key, {}))
        return out

    @property
    def headline(self) -> float | None:
        """The number a --fail-under threshold is held against: a kind's headline figure (the Seam kind's
        combined score), else the verdict score."""
        for column in figure_columns():
            figure = self.figures.get(column.key)
            if column.headline and figure is not None:
                return figure.mean
        return self.score.mean if self.score is not None else None


def summarise(records: list[RunRecord], evals: list[EvalDefinition]) -> list[EvalSummary]:
    by_id = {e.id: e for e in evals}
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for r in records:
        groups.setdefault((r.eval_id, r.variant), []).append(r)
    out: list[EvalSummary] = []
    order = {e.id: i for i, e in enumerate(evals)}
    for (eid, variant), runs in sorted(
        groups.items(), key=lambda kv: (order.get(kv[0][0], 1e9), kv[0][1] != "skill")
    ):
        d = by_id.get(eid)
        outcomes: dict[str, int] = {}
        cost = runs_cost(runs)
        canary = canaries.merge([r.canary for r in runs if r.canary is not None])
        for r in runs:
            outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        errors = sorted({r.error or "unknown error" for r in runs if not r.scored})
        reasons = _reasons(runs)
        # a run the provider or the harness failed says nothing about the agent: it is left out of every
        # figure
        runs = [r for r in runs if r.scored]
        verdicts = [r.verdict for r in runs if r.verdict is not None]
        unjudged = sorted({u for v in verdicts for u in v.unjudged})
        forbidden = sorted({f for v in verdicts for f in v.forbidden_observed})
        out.append(
            EvalSummary(
                eval_id=eid,
                variant=variant,
                runs=sum(outcomes.values()),
                outcomes=outcomes,
                errors=errors,
                reasons=reasons,
                graded=len(runs),
                figures={c.key: spread([r.figure(c.grade) for r in runs]) for c in figure_columns()},
                columns={k: v for c in eval_columns() for k, v in c.values(d, runs).items()},
                score=spread([v.score * 100 for v in verdicts]),
                passed=sum(1 for v in verdicts if v.passed),
                pass_rate=round(sum(1 for v in verdicts if v.passed) / len(verdicts), 4)
                if verdicts
                else None,
                unjudged=unjudged,
                forbidden=forbidden,
                threshold=d.pass_threshold if d else None,
                cost=cost,
                canary=canary,
                noise=canary.noise if canary is not None else None,
            )
        )
    return out


def _reasons(runs: list[RunRecord]) -> list[str]:
    counts: dict[str, int] = {}
    for r in runs:
        why = run_reason(r)
        if why and not why.startswith("unjudged:"):  # the notes say what was unjudged once, for the eval
            counts[why] = counts.get(why, 0) + 1
    return sorted(counts, key=lambda k: -counts[k])


def drop_at_width(columns: list[FigureColumn], own: list[EvalColumn]) -> tuple[str, ...]:
    """The columns left out first when the table does not fit the terminal (report.tables.fit): the kinds'
    per-eval columns after the cost, then their figures; a kind's headline figure is kept."""
    return ("Cost", *(c.header for c in own), *(c.header for c in columns if not c.headline), "Runs")


def _figure_text(figure: Spread | None) -> str:
    return figure.text() if figure is not None else "-"


def table(summaries: list[EvalSummary], title: str, width: int | None = None) -> Table:
    """One row per eval (and variant). At ``width`` columns, columns are left out (``drop_at_width``) rather
    than any header or eval id broken mid-word; the Notes wrap at spaces."""
    t = Table(title=title, title_justify="left")
    columns = figure_columns()
    own = eval_columns()
    headers = [c.header for c in columns]
    right = ("Runs", *headers, "Score", "Cost")
    for col in (
        "Eval",
        "Runs",
        *headers,
        *(c.header for c in own),
        "Score",
        "Verdict",
        "Cost",
        "Notes",
    ):
        t.add_column(col, overflow="fold", no_wrap=col == "Eval", justify="right" if col in right else "left")
    for s in summaries:
        name = s.eval_id + (" [dim](baseline)[/dim]" if s.variant == "baseline" else "")
        if s.pass_rate is None:
            verdict = "-"
        elif s.graded == 1:
            verdict = "[green]pass[/green]" if s.passed else "[red]fail[/red]"
        else:
            verdict = f"{s.passed}/{s.graded} pass"
        notes = []
        scored = {k: v for k, v in s.outcomes.items() if k != "completed" and k in SCORED}
        if scored:
            notes.append(", ".join(f"{v} {label(k)}" for k, v in scored.items()) + " (scored)")
        unscored = {k: v for k, v in s.outcomes.items() if k not in SCORED}
        if unscored:
            notes.append(
                "[yellow]"
                + ", ".join(f"{v} {label(k)}" for k, v in unscored.items())
                + ": not scored, left out of every figure[/yellow]"
            )
        if s.reasons:
            more = f" (+{len(s.reasons) - 1} other reason(s))" if len(s.reasons) > 1 else ""
            notes.append(f"[red]{escape(s.reasons[0])}[/red]{more}")
        if s.forbidden:
            notes.append("[red]forbidden:[/red] " + ", ".join(s.forbidden))
        if s.unjudged:
            # a layer that was not run leaves all its criteria unjudged: its kind says that once
            notes.append("unjudged: " + ", ".join(unjudged_notes(s.unjudged)))
        runs = str(s.runs) if s.graded == s.runs else f"{s.graded} of {s.runs} scored"
        t.add_row(
            name,
            runs,
            *(_figure_text(s.figures.get(c.key)) for c in columns),
            *(c.cell(s.columns, s.graded) for c in own),
            s.score.text("%") if s.score else "-",
            verdict,
            s.cost.text(),
            "; ".join(notes),
        )
    t.caption = "\n".join(filter(None, [outcome_caption(summaries), canary_caption(summaries)])) or None
    t.caption_justify = "left"
    return fit(t, width, drop_at_width(columns, own))


def outcome_counts(summaries: list[EvalSummary]) -> dict[str, int]:
    total: dict[str, int] = {}
    for s in summaries:
        for k, v in s.outcomes.items():
            total[k] = total.get(k, 0) + v
    return {k: total[k] for k in OUTCOMES if k in total}


def outcome_caption(summaries: list[EvalSummary]) -> str | None:
    """Each outcome's count, and what the unscored ones mean for the figures (docs/results.md)."""
    counts = outcome_counts(summaries)
    if not counts:
        return None
    text = "Outcomes: " + ", ".join(f"{v} {label(k)}" for k, v in counts.items()) + "."
    unscored = sum(v for k, v in counts.items() if k not in SCORED)
    if unscored:
        text += (
            f" {unscored} run(s) not scored (provider, harness or definition errors): left out of every "
            "figure;"
            " run --resume reruns the provider and harness errors."
        )
    return text


def cannot_measure(summaries: list[EvalSummary]) -> list[str]:
    """ "this machine cannot measure <eval>: <reason>", once per eval whose canary failed."""
    seen: dict[str, str] = {}
    for s in summaries:
        if s.canary is not None and not s.canary.passed and s.eval_id not in seen:
            seen[s.eval_id] = canaries.cannot_measure(s.canary)
    return list(seen.values())


def canary_caption(summaries: list[EvalSummary]) -> str | None:
    """What the canary found, beside the figures: the evals this machine cannot measure and why, and the
    grader noise (the spread of the golden's scores over its runs) of the others."""
    checks = {s.eval_id: s.canary for s in summaries if s.canary is not None}
    if not checks:
        return None
    lines = [f"[red]{escape(line)}[/red]" for line in cannot_measure(summaries)]
    passed = {e: c for e, c in checks.items() if c.status == "passed"}
    if passed:
        noisy = {e: c for e, c in passed.items() if c.noise}
        runs = sorted({len(c.scores) for c in passed.values()})
        text = (
            f"Canary: the golden passed here for {len(passed)} eval(s) ({'/'.join(map(str, runs))} run(s) "
            "each"
            + (
                f", {sum(c.cached for c in passed.values())} from the cache"
                if any(c.cached for c in passed.values())
                else ""
            )
            + "); grader noise (spread of the golden's scores): "
        )
        if noisy:
            text += ", ".join(
                f"{e} {c.noise:g} ({min(c.scores):g}-{max(c.scores):g})" for e, c in noisy.items()
            )
            text += ", 0 for the rest." if len(noisy) < len(passed) else "."
        else:
            text += "0" + ("" if max(runs) > 1 else " (one run: not measured)") + "."
        lines.append(text)
    skipped = sorted(e for e, c in checks.items() if c.status == "skipped")
    if skipped:
        lines.append("No canary (no golden solution): " + ", ".join(skipped) + ".")
    return "\n".join(lines)
