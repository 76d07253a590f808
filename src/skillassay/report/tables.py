"""Terminal tables (rich) for ``skillassay runs``, ``compare`` and ``report``."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from skillassay.kinds.base import figure_columns
from skillassay.report.runs import failure_reason, is_graded, run_reason, skill_label, variant_label
from skillassay.scoring.stats import Comparison, Summary
from skillassay.store.db import JobProgress
from skillassay.store.records import JobRecord, RunRecord

WIDE = 160  # columns when not on a terminal (CI logs, `> file`): rich's default of 80 wraps ids mid-word


def console(stderr: bool = False) -> Console:
    """A console for tables: the terminal's width on a terminal; otherwise $COLUMNS when set, else at least
    160 columns, so tables in CI logs and files keep one row per line."""
    con = Console(soft_wrap=False, stderr=stderr)
    if not con.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        con = Console(soft_wrap=False, stderr=stderr, width=max(WIDE, con.width))
    return con


WRAPPING_MIN = 12  # the narrowest a wrapping column (notes, reasons) is allowed to get


def _longest_word(cell: object) -> int:
    text = Text.from_markup(cell) if isinstance(cell, str) else cell
    plain = text.plain if isinstance(text, Text) else str(text)
    return max((cell_len(w) for w in plain.split()), default=0)


def min_width(t: Table) -> int:
    """The narrowest ``t`` can be with no header, id or figure broken mid-word: each column as wide as its
    longest word (a column that wraps, such as notes, at most ``WRAPPING_MIN``), plus padding and borders."""
    total = 1
    for c in t.columns:
        longest = max([_longest_word(c.header), *(_longest_word(x) for x in c.cells)])
        if c.no_wrap:
            longest = max(
                cell_len(Text.from_markup(x).plain) if isinstance(x, str) else longest for x in c.cells
            )
        elif c is t.columns[-1]:
            longest = min(longest, max(WRAPPING_MIN, _longest_word(c.header)))
        total += longest + 3  # one space each side and a border
    return total


def fit(t: Table, width: int | None, drop: Sequence[str]) -> Table:
    """The table at ``width`` columns without a word broken: the columns in ``drop`` are left out, in that
    order, until every column's longest word fits (rich would otherwise fold headers and ids mid-word).
    None: as it is."""
    if width is None:
        return t
    for header in drop:
        if min_width(t) <= width:
            break
        t.columns[:] = [c for c in t.columns if c.header != header]
    return t


def _interval(lo: float | None, hi: float | None, n: int) -> str:
    """A bootstrap interval; one run has none (``–``, never ``100.0% – 100.0%``)."""
    return "–" if n < 2 or lo is None or hi is None else f"{_pct(lo)} – {_pct(hi)}"


def _pct(v: float | None, d: int = 1) -> str:
    return "–" if v is None else f"{v * 100:.{d}f}%"


def _num(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def jobs_table(progress: list[JobProgress], width: int | None = None) -> Table:
    t = Table(title="Jobs (runs: done/planned)")
    for col in ("job", "date", "agent", "skill", "evals", "runs", "passed", "status"):
        t.add_column(
            col, justify="right" if col in ("evals", "runs", "passed") else "left", no_wrap=col == "job"
        )
    for p in progress:
        j = p.job
        done = f"{p.done}/{p.planned}" + (f" (+{p.unscored} not scored)" if p.unscored else "")
        t.add_row(
            j.job_id,
            j.created_at.strftime("%Y-%m-%d %H:%M"),
            j.agent,
            skill_label(j.skill_path, j.skill_hash, path=False),
            str(p.evals),
            done,
            str(p.passed),
            j.status,
        )
    return fit(t, width, ("skill", "evals", "date", "passed"))


def runs_table(
    job_id: str, runs: list[RunRecord], job: JobRecord | None = None, width: int | None = None
) -> Table:
    """One row per run, and why it failed or was not scored (``run_reason``). An unscored run (provider,
    harness or definition error): no scores. The variant column appears only when the job has baseline runs
    (a job without a skill has one kind of run). At ``width`` columns the layer totals go first, then the
    score."""
    has_skill = (
        bool(job.skill_path or job.skill_hash) if job else any(r.skill_path or r.skill_hash for r in runs)
    )
    show_variant = any(r.variant == "baseline" for r in runs)
    why = {id(r): run_reason(r) for r in runs}
    show_why = any(why.values())
    t = Table(title=f"Runs of {job_id}" + ("" if has_skill else " (no skill)"))
    figures = figure_columns()  # the kinds' own figures (the Seam kind's layer totals and combined score)
    heads = [c.header.lower() for c in figures]
    cols = [
        "eval",
        *(["variant"] if show_variant else []),
        "run",
        "outcome",
        *heads,
        "score",
        "verdict",
        "grading",
        *(["why"] if show_why else []),
    ]
    right = ("run", *heads, "score", "grading")  # grading: the run's grading version
    for col in cols:
        t.add_column(col, justify="right" if col in right else "left", no_wrap=col in ("eval", "outcome"))
    for r in runs:
        v = r.verdict
        graded = is_graded(r)
        if not graded:
            verdict = "[yellow]not scored[/]"
        elif v is None:
            verdict = "–"
        else:
            verdict = "[green]pass[/]" if v.passed else f"[red]{v.label}[/]"
        scores = (
            [*(_num(r.figure(c.grade)) for c in figures), _pct(v.score if v else None)]
            if graded
            else ["–"] * (len(figures) + 1)
        )
        t.add_row(
            r.eval_id,
            *([variant_label(r, has_skill)] if show_variant else []),
            str(r.run_index),
            r.outcome.replace("_", " "),
            *scores,
            verdict,
            f"v{r.grading_version}" if graded else "–",
            *([_esc(why[id(r)] or "")] if show_why else []),
        )
    return fit(t, width, (*heads, "grading", "score", "outcome", "run"))


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def summary_table(
    title: str, s: Summary, runs: list[RunRecord] | None = None, width: int | None = None
) -> Table:
    """Statistics per eval and overall. With ``runs``, evals none of whose runs was scored get a row too (no
    scores), and the runs column counts the unscored runs left out."""
    t = Table(title=title)
    ks = list(s.overall.pass_at_k) if s.overall else []
    errors: dict[str, list[RunRecord]] = defaultdict(list)
    for r in runs or []:
        if not is_graded(r):
            errors[r.eval_id].append(r)
    for col in (
        "eval",
        "runs",
        "mean",
        "95% interval",
        "sd",
        "min",
        "max",
        "pass rate",
        *(f"pass@{k}" for k in ks),
        *(f"pass^{k}" for k in ks),
    ):
        t.add_column(col, justify="left" if col == "eval" else "right", no_wrap=col == "eval")
    counted = {x.eval_id for x in s.per_eval}
    for x in s.per_eval:
        _stats_row(t, x, ks, len(errors.get(x.eval_id, [])))
    for eval_id, errs in errors.items():  # evals none of whose runs was graded: a row, and no scores
        if eval_id not in counted:
            t.add_row(eval_id, f"0 (+{len(errs)} not scored)", *("–" for _ in range(6 + 2 * len(ks))))
    if s.overall:
        _stats_row(t, s.overall, ks, s.overall.excluded)
    return fit(t, width, (*(f"pass^{k}" for k in ks), *(f"pass@{k}" for k in ks), "sd", "min", "max"))


def _stats_row(t: Table, x, ks: list[int], n_err: int) -> None:
    t.add_row(
        "overall" if x.eval_id == "*" else x.eval_id,
        str(x.n) + (f" (+{n_err} not scored)" if n_err else ""),
        _pct(x.mean),
        _interval(x.ci[0], x.ci[1], x.n),
        f"{x.sd * 100:.1f}",
        _pct(x.min),
        _pct(x.max),
        _pct(x.pass_rate, 0),
        *(_pct(x.pass_at_k.get(k), 0) for k in ks),
        *(_pct(x.pass_hat_k.get(k), 0) for k in ks),
    )


def unscored_runs(runs: list[RunRecord]) -> list[str]:
    """One line per unscored run (provider, harness or definition error): left out of every statistic."""
    out = []
    for r in runs:
        if not is_graded(r):
            label = f"{'baseline ' if r.variant == 'baseline' else ''}run {r.run_index}"
            out.append(
                f"{r.eval_id} {label}: {r.outcome.replace('_', ' ')} (not scored, not counted): "
                f"{run_reason(r) or 'no error recorded'}"
            )
    return out


def outcome_line(runs: list[RunRecord]) -> str | None:
    """``Outcomes: 8 completed, 1 agent error, 1 harness error (1 not scored: left out of every figure).``"""
    from skillassay.outcomes import OUTCOMES, SCORED

    counts = {o: n for o in OUTCOMES if (n := sum(r.outcome == o for r in runs))}
    if not counts:
        return None
    text = "Outcomes: " + ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in counts.items())
    unscored = sum(n for o, n in counts.items() if o not in SCORED)
    return text + (f" ({unscored} not scored: left out of every figure)." if unscored else ".")


def comparison_tables(cmp: Comparison, a: str, b: str) -> list[Table]:
    t = Table(title=f"B = {b} vs A = {a} (differences in points, B minus A)")
    for col in ("eval", "pairs", "A", "B", "difference", "95% interval", "pass rate", "runs needed"):
        t.add_column(col, justify="left" if col == "eval" else "right", no_wrap=col == "eval")
    for d in [*cmp.per_eval, *([cmp.overall] if cmp.overall else [])]:
        ci = f"{d.ci[0] * 100:+.1f} to {d.ci[1] * 100:+.1f}" if d.ci else "–"
        if d.excludes_zero:
            ci = f"[bold]{ci}[/]"
        t.add_row(
            "overall" if d.eval_id == "*" else d.eval_id,
            str(d.pairs),
            _pct(d.mean_a),
            _pct(d.mean_b),
            f"{d.delta * 100:+.1f}",
            ci,
            f"{_pct(d.pass_rate_a, 0)} → {_pct(d.pass_rate_b, 0)}",
            "–" if d.runs_needed is None else str(d.runs_needed),
        )
    if cmp.outcomes_a or cmp.outcomes_b:
        t.caption = (
            "Outcomes: "
            + "; ".join(
                f"{side}: " + ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in counts.items())
                for side, counts in (("A", cmp.outcomes_a), ("B", cmp.outcomes_b))
                if counts
            )
            + (
                ". Unscored runs (provider, harness, definition errors) are left out of every figure."
                if cmp.unscored_a or cmp.unscored_b
                else "."
            )
        )
        t.caption_justify = "left"
    out = [t]
    if cmp.criteria:
        c = Table(title="Per criterion (mean fraction earned)")
        for col in ("criterion", "A", "B", "difference"):
            c.add_column(col, justify="left" if col == "criterion" else "right")
        for cid, (ma, mb, dd) in cmp.criteria.items():
            c.add_row(cid, _pct(ma), _pct(mb), f"{dd * 100:+.1f}")
        out.append(c)
    return out


def cost_table(sides: dict) -> Table:
    """Model cost per side (label -> CostSummary): total, per run, per pass."""
    t = Table(title="Model cost (every run paid for, graded or not)")
    for col in ("", "runs", "total", "per run", "passes", "per pass"):
        t.add_column(col, justify="left" if not col else "right")
    for label, c in sides.items():
        bound = "" if c.complete else "≥ "
        usd = lambda v: "–" if v is None else f"{bound}${v:.4f}"  # noqa: E731, B023 - used in this iteration only
        t.add_row(
            label,
            f"{c.runs}" + (f" ({c.runs - c.priced_runs} unpriced)" if c.runs - c.priced_runs else ""),
            usd(c.total_usd if c.priced_runs else None),
            usd(c.per_run_usd),
            str(c.passes),
            usd(c.per_pass_usd),
        )
    return t


__all__ = [
    "comparison_tables",
    "console",
    "cost_table",
    "failure_reason",
    "jobs_table",
    "outcome_line",
    "runs_table",
    "summary_table",
    "unscored_runs",
]
