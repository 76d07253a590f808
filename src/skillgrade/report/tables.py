"""Terminal tables (rich) for ``skillgrade runs`` and ``skillgrade compare``."""

from __future__ import annotations

from rich.table import Table

from skillgrade.report.runs import failure_reason
from skillgrade.scoring.stats import Comparison, Summary
from skillgrade.store.db import JobProgress
from skillgrade.store.models import RunRecord


def _pct(v: float | None, d: int = 1) -> str:
    return "–" if v is None else f"{v * 100:.{d}f}%"


def _num(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def jobs_table(progress: list[JobProgress]) -> Table:
    t = Table(title="Jobs (runs: done/planned)")
    for col in ("job", "date", "agent", "skill", "evals", "runs", "passed", "status"):
        t.add_column(col, justify="right" if col in ("evals", "runs", "passed") else "left", no_wrap=col == "job")
    for p in progress:
        j = p.job
        done = f"{p.done}/{p.planned}" + (f" ({p.infrastructure_errors} infra errors)" if p.infrastructure_errors else "")
        t.add_row(
            j.job_id, j.created_at.strftime("%Y-%m-%d %H:%M"), j.agent, (j.skill_hash or "–").removeprefix("sha256:")[:12], str(p.evals),
            done, str(p.passed), j.status,
        )
    return t


def runs_table(job_id: str, runs: list[RunRecord]) -> Table:
    t = Table(title=f"Runs of {job_id}")
    for col in ("eval", "variant", "run", "outcome", "rubric", "sandbox", "combined", "score", "verdict"):
        t.add_column(col, justify="right" if col in ("run", "rubric", "sandbox", "combined", "score") else "left",
                     no_wrap=col == "eval")
    for r in runs:
        v = r.verdict
        if v is None:
            verdict = "–"
        else:
            verdict = "[green]pass[/]" if v.passed else f"[red]{v.label}[/]"
        t.add_row(
            r.eval_id, r.variant, str(r.run_index), r.outcome, _num(r.rubric_total), _num(r.sandbox_total),
            _num(r.combined), _pct(v.score if v else None), verdict,
        )
    return t


def summary_table(title: str, s: Summary) -> Table:
    t = Table(title=title)
    ks = list(s.overall.pass_at_k) if s.overall else []
    for col in ("eval", "runs", "mean", "95% interval", "sd", "min", "max", "pass rate",
                *(f"pass@{k}" for k in ks), *(f"pass^{k}" for k in ks)):
        t.add_column(col, justify="left" if col == "eval" else "right", no_wrap=col == "eval")
    rows = [*s.per_eval, *([s.overall] if s.overall else [])]
    for x in rows:
        t.add_row(
            "overall" if x.eval_id == "*" else x.eval_id, str(x.n), _pct(x.mean), f"{_pct(x.ci[0])} – {_pct(x.ci[1])}",
            f"{x.sd * 100:.1f}", _pct(x.min), _pct(x.max), _pct(x.pass_rate, 0),
            *(_pct(x.pass_at_k.get(k), 0) for k in ks), *(_pct(x.pass_hat_k.get(k), 0) for k in ks),
        )
    return t


def comparison_tables(cmp: Comparison, a: str, b: str) -> list[Table]:
    t = Table(title=f"B = {b} vs A = {a} (differences in points, B minus A)")
    for col in ("eval", "pairs", "A", "B", "difference", "95% interval", "pass rate", "runs needed"):
        t.add_column(col, justify="left" if col == "eval" else "right", no_wrap=col == "eval")
    for d in [*cmp.per_eval, *([cmp.overall] if cmp.overall else [])]:
        ci = f"{d.ci[0] * 100:+.1f} to {d.ci[1] * 100:+.1f}" if d.ci else "–"
        if d.excludes_zero:
            ci = f"[bold]{ci}[/]"
        t.add_row(
            "overall" if d.eval_id == "*" else d.eval_id, str(d.pairs), _pct(d.mean_a), _pct(d.mean_b),
            f"{d.delta * 100:+.1f}", ci, f"{_pct(d.pass_rate_a, 0)} → {_pct(d.pass_rate_b, 0)}",
            "–" if d.runs_needed is None else str(d.runs_needed),
        )
    out = [t]
    if cmp.criteria:
        c = Table(title="Per criterion (mean fraction earned)")
        for col in ("criterion", "A", "B", "difference"):
            c.add_column(col, justify="left" if col == "criterion" else "right")
        for cid, (ma, mb, dd) in cmp.criteria.items():
            c.add_row(cid, _pct(ma), _pct(mb), f"{dd * 100:+.1f}")
        out.append(c)
    return out


__all__ = ["comparison_tables", "failure_reason", "jobs_table", "runs_table", "summary_table"]
