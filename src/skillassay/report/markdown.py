"""A job's summary, or two jobs' comparison, as Markdown for a pull request's comment or
``$GITHUB_STEP_SUMMARY`` (``report --markdown``, ``compare --markdown``; docs/ci.md).

Built from the same models as the terminal's tables (``summarize``, ``compare``, the kinds' ``JobSummary`` and
``JobComparison``, ``FigureColumn``) and naming no kind. Every summary passes through the scrubber that every
stored file passes through (``secrets``), whatever it quotes of the runs (their failure reasons, the
evidence those name)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillassay.kinds.base import JobComparison, figure_columns, job_summary_of
from skillassay.outcomes import is_scored
from skillassay.report.runs import failure_reason
from skillassay.scoring.cost import CostSummary, runs_cost
from skillassay.scoring.stats import Comparison, Delta, compare, summarize
from skillassay.secrets import environment_redactor
from skillassay.store.records import JobRecord, RunRecord

MAX_FAILED = 10  # failed runs listed by name; the rest counted


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell (one line, pipes and markup escaped), scrubbed first: an
    escaped secret (``my\\_key``) is a form the scrubber would not know."""
    one = " ".join(environment_redactor().redact(str(text)).split())
    for ch in ("\\", "|", "`", "*", "_", "<", ">", "[", "]"):
        one = one.replace(ch, f"\\{ch}")
    return one


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.1f}"


def _points(x: float) -> str:
    return f"{x * 100:+.1f}"


def _link(report_url: str | None, page: str) -> str | None:
    return f"{report_url.rstrip('/')}/{page}" if report_url else None


def _delta_line(d: Delta, a: str, b: str) -> str:
    interval = (
        f", 95% interval [{_points(d.ci[0])}, {_points(d.ci[1])}]" if d.ci else " (one pair: no interval)"
    )
    rates = f"pass rate {_pct(d.pass_rate_a)}% → {_pct(d.pass_rate_b)}%"
    pairs = f"{d.pairs} paired run{'' if d.pairs == 1 else 's'}"
    return (
        f"**{cell(b)} − {cell(a)}: {_points(d.delta)} points**{interval} over {pairs} "
        f"(mean {_pct(d.mean_a)} → {_pct(d.mean_b)}; {rates})"
    )


def _comparison_lines(cmp: Comparison, a: str, b: str) -> list[str]:
    if cmp.refusal is not None:
        return [f"**No verdict**: {cell(cmp.refusal.reason)}"]
    out = []
    if cmp.overall is not None:
        out.append(_delta_line(cmp.overall, a, b))
    out.append("")
    out.append(f"> {cell(cmp.verdict)}")
    if cmp.warning:
        out += ["", f"⚠️ {cell(cmp.warning)}"]
    if cmp.per_eval:
        out += ["", "| Eval | Pairs | A | B | Δ points | 95% interval |", "|---|--:|--:|--:|--:|---|"]
        for d in cmp.per_eval:
            ci = f"[{_points(d.ci[0])}, {_points(d.ci[1])}]" if d.ci else "–"
            out.append(
                f"| {cell(d.eval_id)} | {d.pairs} | {_pct(d.mean_a)} | {_pct(d.mean_b)} | "
                f"{_points(d.delta)} | {ci} |"
            )
    return out


def _cost_lines(costs: dict[str, CostSummary]) -> list[str]:
    if not any(c.priced_runs for c in costs.values()):
        return []
    out = ["", "| Cost | Runs | Total | Per pass |", "|---|--:|--:|--:|"]
    for label, c in costs.items():
        bound = "" if c.complete else "≥ "
        total = f"{bound}${c.total_usd:.4f}" if c.priced_runs else "–"
        per_pass = f"{bound}${c.per_pass_usd:.4f}" if c.per_pass_usd is not None else "no pass"
        out.append(f"| {cell(label)} | {c.runs} | {total} | {per_pass} |")
    return out


def _eval_table(runs: Sequence[RunRecord]) -> list[str]:
    summary = summarize(runs)
    if summary.overall is None:
        return ["No run was scored."]
    cols = figure_columns()
    head = "| Eval | Runs | Passed | Pass rate | Mean score | 95% interval |" + "".join(
        f" {cell(c.header)} |" for c in cols
    )
    out = [head, "|---|--:|--:|--:|--:|---|" + "--:|" * len(cols)]
    scored = [r for r in runs if is_scored(r.outcome)]
    for s in [*summary.per_eval, summary.overall]:
        of = [r for r in scored if s.eval_id in ("*", r.eval_id)]
        figures = []
        for c in cols:
            vals = [v for v in (r.figure(c.grade) for r in of) if v is not None]
            figures.append(f"{sum(vals) / len(vals):.1f}" if vals else "–")
        name = "**all**" if s.eval_id == "*" else cell(s.eval_id)
        out.append(
            f"| {name} | {s.n} | {s.passes} | {_pct(s.pass_rate)}% | {_pct(s.mean)} | "
            f"[{_pct(s.ci[0])}, {_pct(s.ci[1])}] |" + "".join(f" {f} |" for f in figures)
        )
    if summary.overall.excluded:
        out += ["", f"{summary.overall.excluded} run(s) not scored (provider, harness or definition errors)."]
    return out


def _failed_lines(runs: Sequence[RunRecord]) -> list[str]:
    failed = [(r, why) for r in runs if (why := failure_reason(r)) is not None]
    if not failed:
        return []
    out = ["", "<details><summary>Runs that did not pass</summary>", ""]
    for r, why in failed[:MAX_FAILED]:
        out.append(f"- {cell(r.eval_id)} run {r.run_index} ({r.variant}): {cell(why)}")
    if len(failed) > MAX_FAILED:
        out.append(f"- and {len(failed) - MAX_FAILED} more")
    out += ["", "</details>"]
    return out


def _scrubbed(lines: list[str]) -> str:
    """The lines as one text, scrubbed, ending in a blank line (summaries appended one after another stay
    apart)."""
    return environment_redactor().redact("\n".join(lines).rstrip("\n") + "\n\n")


def _shown(path: str | None) -> str:
    """A job's path as the reader knows it: below the working folder (a CI checkout), relative to it."""
    if not path:
        return "none"
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def job_markdown(job: JobRecord, runs: Sequence[RunRecord], report_url: str | None = None) -> str:
    """The job's verdicts, its skill's paired difference from the baseline (when it ran one), its cost and
    a link to its report page."""
    from skillassay.report.site import job_page

    skill = [r for r in runs if r.variant == "skill"]
    base = [r for r in runs if r.variant == "baseline"]
    lines = [f"### skillassay job `{cell(job.job_id)}`", ""]
    lines.append(
        f"Agent {cell(job.agent)}, suite {cell(_shown(job.suite))}, skill {cell(_shown(job.skill_path))}: "
        f"{len(runs)} of {len(job.planned)} planned runs recorded, status {cell(job.status)}."
    )
    lines.append("")
    own = job_summary_of(runs)
    if own is not None:
        head = own.headline()
        value = "–" if head.value is None else f"{head.value:.1f}"
        lines.append(f"**{cell(head.name)}: {value}**")
    else:
        lines += _eval_table(skill)
    if base and skill:
        lines += ["", "#### With the skill against without it", ""]
        cmp = compare(base, skill, a_label="without the skill", b_label="with the skill")
        lines += _comparison_lines(cmp, "without the skill", "with the skill")
    costs = {"with the skill": runs_cost(skill)} | ({"without the skill": runs_cost(base)} if base else {})
    lines += _cost_lines(costs)
    lines += _failed_lines(runs)
    link = _link(report_url, job_page(job.job_id))
    lines += ["", f"[Full report]({link})" if link else "Full report: `skillassay report --html`."]
    return _scrubbed(lines)


def comparison_markdown(
    cmp: Comparison,
    a: str,
    b: str,
    runs_a: Sequence[RunRecord],
    runs_b: Sequence[RunRecord],
    report_url: str | None = None,
) -> str:
    """B against A: the paired difference with its interval, the verdict, each arm's cost, the report."""
    lines = [f"### skillassay: `{cell(b)}` against `{cell(a)}`", ""]
    lines += _comparison_lines(cmp, a, b)
    lines += _cost_lines({f"A = {a}": runs_cost(runs_a), f"B = {b}": runs_cost(runs_b)})
    link = _link(report_url, comparison_page(a, b))
    lines += ["", f"[Full comparison]({link})" if link else "Full report: `skillassay report --html`."]
    return _scrubbed(lines)


def comparison_page(a: str, b: str) -> str:
    """The report's page that shows A against B: the job's own page when both are arms of one job (its
    baseline against its skill), else the page comparing two jobs' skill runs."""
    from skillassay.report.site import compare_page, job_page

    job_a, job_b = a.partition(":")[0], b.partition(":")[0]
    return job_page(job_a) if job_a == job_b else compare_page(job_a, job_b)


def own_comparison_markdown(cmp: JobComparison, a: str, b: str, refusal: str | None) -> str:
    """Two jobs compared their kind's own way: its verdict sentence (or why there is none)."""
    lines = [f"### skillassay: `{cell(b)}` against `{cell(a)}`", ""]
    lines.append(f"**No verdict**: {cell(refusal)}" if refusal else f"> {cell(cmp.verdict)}")
    if refusal is None and cmp.worse():
        lines += ["", "**B is worse than A beyond noise.**"]
    return _scrubbed(lines)
