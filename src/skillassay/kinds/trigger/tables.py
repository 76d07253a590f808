"""Terminal tables (rich) for trigger jobs: ``run``, ``report``, ``compare``; the kind's job summary and
comparison (``kinds.base.JobSummary``, ``JobComparison``)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from skillassay.kinds.base import Headline, JobComparison, JobSummary
from skillassay.kinds.trigger.scoring import (
    MetricDelta,
    TriggerComparison,
    TriggerSummary,
    compare_triggers,
    trigger_points,
)

METRIC_LABELS = {
    "recall": "recall",
    "precision": "precision",
    "f1": "F1",
    "false_trigger_rate": "false triggers",
    "accuracy": "accuracy",
}


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.1f}%"


def _with_ci(e) -> str:
    if e.value is None:
        return "–"
    return _pct(e.value) + (f" [{e.ci[0] * 100:.0f}–{e.ci[1] * 100:.0f}]" if e.ci else "")


def _num(v: float | None, unit: str = "") -> str:
    if v is None:
        return "–"
    return (f"{v:.1f}" if isinstance(v, float) and not v.is_integer() else f"{v:.0f}") + unit


def trigger_summary_tables(summary: TriggerSummary, title: str) -> list[Table]:
    """Metrics overall and per category (with 95% intervals, clustered by prompt), then one row per prompt."""
    m = Table(
        title=f"{title}: did the agent pick the skill up? (95% intervals in brackets, clustered by prompt)",
        title_justify="left",
    )
    m.add_column("group", justify="left")
    for col in ("prompts", "runs", "TP", "FP", "FN", "TN", "recall", "precision", "F1", "false triggers"):
        m.add_column(col, justify="right")
    for s in [summary.overall, *summary.per_category]:
        c = s.confusion
        m.add_row(
            "all prompts" if s.group == "*" else s.group,
            str(s.prompts),
            str(s.runs),
            str(c.tp),
            str(c.fp),
            str(c.fn),
            str(c.tn),
            _with_ci(s.metrics["recall"]),
            _with_ci(s.metrics["precision"]),
            _with_ci(s.metrics["f1"]),
            _with_ci(s.metrics["false_trigger_rate"]),
        )
    p = Table(title="Prompts (time to trigger: medians over the runs that triggered)", title_justify="left")
    for col, just in (
        ("prompt", "left"),
        ("category", "left"),
        ("expected", "left"),
        ("triggered", "right"),
        ("turn", "right"),
        ("seconds", "right"),
        ("tokens", "right"),
        ("", "left"),
    ):
        p.add_column(col, justify=just)  # type: ignore[arg-type]
    for x in summary.prompts:
        if x.correct == x.runs:
            mark = "[green]✓[/green]"
        elif x.correct == 0:
            mark = "[red]✗[/red] " + ("missed" if x.should_trigger else "false trigger")
        else:
            mark = "[yellow]unstable[/yellow]"
        p.add_row(
            escape(x.prompt),
            x.category,
            "trigger" if x.should_trigger else "leave alone",
            f"{x.triggered}/{x.runs}",
            _num(x.turn),
            _num(x.seconds),
            _num(x.tokens),
            mark,
        )
    return [m, p]


def _delta_row(t: Table, label: str, d: MetricDelta) -> None:
    delta = "–" if d.delta is None else f"{d.delta * 100:+.1f}"
    ci = f"[{d.ci[0] * 100:+.1f}, {d.ci[1] * 100:+.1f}]" if d.ci else "–"
    t.add_row(
        label, METRIC_LABELS[d.metric], _pct(d.a), _pct(d.b), delta, ci + (" *" if d.excludes_zero else "")
    )


def trigger_comparison_tables(cmp: TriggerComparison, a: str, b: str) -> list[Table]:
    t = Table(
        title=f"Trigger metrics, {b} against {a}, paired by prompt (* : the 95% interval excludes zero)",
        title_justify="left",
    )
    for col, just in (
        ("group", "left"),
        ("metric", "left"),
        ("A", "right"),
        ("B", "right"),
        ("B - A (points)", "right"),
        ("95% interval", "right"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for d in cmp.overall:
        if d.metric != "accuracy":
            _delta_row(t, "all prompts", d)
    for cat, ds in cmp.per_category.items():
        for d in ds:
            if d.metric in (("false_trigger_rate",) if cat == "negative" else ("recall",)):
                _delta_row(t, cat, d)
    tables = [t]
    if cmp.changed:
        f = Table(
            title="Prompts whose trigger rate changed (flipped: the majority decision changed)",
            title_justify="left",
        )
        for col in ("prompt", "category", "expected", "A", "B", ""):
            f.add_column(col)
        flipped = {x.prompt for x in cmp.flips}
        for x in cmp.changed:
            note = ""
            if x.prompt in flipped:
                note = "[green]flipped, now right[/green]" if x.better else "[red]flipped, now wrong[/red]"
            f.add_row(
                escape(x.prompt),
                x.category,
                "trigger" if x.should_trigger else "leave alone",
                _pct(x.rate_a),
                _pct(x.rate_b),
                note,
            )
        tables.append(f)
    return tables


def compare_trigger_runs(a_runs, b_runs, a: str, b: str) -> TriggerComparison:
    return compare_triggers(trigger_points(a_runs), trigger_points(b_runs), a, b)


class TriggerJobSummary(JobSummary):
    """A trigger suite's job: recall, precision and F1 per category, and each prompt's decisions."""

    key = "trigger"

    def __init__(self, summary: TriggerSummary) -> None:
        self.summary = summary

    def to_dict(self) -> dict[str, Any]:
        return self.summary.to_dict()

    def tables(self, title: str) -> list[Table]:
        return trigger_summary_tables(self.summary, title)

    def headline(self) -> Headline:
        f1 = self.summary.overall.metrics["f1"].value
        return Headline(name="F1", value=None if f1 is None else f1 * 100)

    @property
    def figures(self) -> TriggerSummary:
        return self.summary


class TriggerJobComparison(JobComparison):
    """Two jobs of one trigger suite, prompt by prompt: recall, precision, F1 and the prompts that
    flipped."""

    key = "trigger"

    def __init__(self, cmp: TriggerComparison) -> None:
        self.cmp = cmp
        self.verdict = cmp.verdict

    def to_dict(self) -> dict[str, Any]:
        return self.cmp.to_dict()

    def tables(self, a: str, b: str) -> list[Table]:
        return trigger_comparison_tables(self.cmp, a, b)

    def nothing_in_common(self, a: str, b: str) -> str | None:
        return None if self.cmp.pairs else f"{a} and {b} have no prompt in common"

    def worse(self) -> bool:
        f1 = next(d for d in self.cmp.overall if d.metric == "f1")
        return f1.excludes_zero and (f1.delta or 0) < 0

    @property
    def figures(self) -> TriggerComparison:
        return self.cmp
