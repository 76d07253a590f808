"""CLI commands: results (``runs``, ``compare``, ``report``, ``serve``).

Exit codes: 0 ok; 1 a verdict or threshold failed where the user asked to be told (``--fail-on-verdict``,
``--min-pass-rate``, ``compare --fail-if-worse``); 2 bad input (unknown job, no results, unreadable files); 3
``compare`` gave no verdict (grading versions mixed, or the arms' unscored shares too far apart)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from skillassay.errors import SkillassayError
from skillassay.store.files import DEFAULT_RESULTS_ROOT

if TYPE_CHECKING:
    from skillassay.kinds.base import JobComparison
    from skillassay.scoring.stats import Comparison, Refusal

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py

RESULTS_OPT = typer.Option(DEFAULT_RESULTS_ROOT, "--results", help="The results root (holds skillassay.db).")
REPORT_URL_OPT = typer.Option(
    None,
    "--report-url",
    help="With --markdown: where the HTML report is published (its pages are linked below this base).",
)


def _console(stderr: bool = False) -> Console:
    # wide when not on a terminal (CI logs, `> file`), so table rows do not wrap at 80 columns
    from skillassay.report.tables import console

    return console(stderr=stderr)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _open(results: Path):
    from skillassay import store

    if not results.is_dir():
        raise _fail(f"{results}: no such results folder (pass --results DIR)")
    return store.open(results)


MAX_KNOWN = 10


def _no_such_job(st, job_id: str) -> str:
    """``results: no job 'nope'; known: <the newest ten>`` (and a close match first, for a typo)."""
    from skillassay.cli.usage import did_you_mean

    known = [j.job_id for j in st.jobs()]
    if not known:
        return f"{st.root}: no job {job_id!r}; no job is recorded there"
    newest = sorted(known, reverse=True)
    older = len(known) - MAX_KNOWN
    shown = ", ".join(newest[:MAX_KNOWN]) + (f" and {older} older" if older > 0 else "")
    return f"{st.root}: no job {job_id!r}{did_you_mean(job_id, known)}; known: {shown}"


def _runs_of(st, spec: str):
    """``JOB`` (its skill runs) or ``JOB:baseline`` / ``JOB:skill``."""
    job_id, _, variant = spec.partition(":")
    variant = variant or "skill"
    if variant not in ("skill", "baseline"):
        raise _fail(f"{spec}: expected JOB, JOB:skill or JOB:baseline")
    if st.job(job_id) is None:
        raise _fail(_no_such_job(st, job_id))
    runs = st.runs(job_id=job_id, variant=variant)
    if not runs:
        raise _fail(f"{spec}: the job has no {variant} runs recorded")
    return runs


@commands.command("runs")
def runs_cmd(
    results: Path = RESULTS_OPT,
    job: str | None = typer.Option(None, "--job", help="List this job's runs instead of the jobs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    reindex: bool = typer.Option(False, "--reindex", help="Rebuild the index from the run files first."),
) -> None:
    """List jobs (id, date, agent, skill, evals, runs done/planned, status), or one job's runs."""
    with _open(results) as st:
        if reindex:
            rep = st.rebuild_index()
            for s in rep.skipped:
                typer.echo(f"skipped: {s}", err=True)
        if job is None:
            progress = st.progress()
            if as_json:
                typer.echo(
                    json.dumps(
                        [
                            {
                                "job": json.loads(p.job.model_dump_json()),
                                "planned": p.planned,
                                "done": p.done,
                                "unscored": p.unscored,
                                "outcomes": p.outcomes,
                                "passed": p.passed,
                                "evals": p.evals,
                            }
                            for p in progress
                        ],
                        indent=2,
                    )
                )
                return
            from skillassay.report.tables import jobs_table

            if not progress:
                typer.echo(f"No jobs in {results}.")
                return
            con = _console()
            con.print(jobs_table(progress, width=con.width))
            return
        if st.job(job) is None:
            raise _fail(_no_such_job(st, job))
        runs = st.runs(job_id=job)
        if as_json:
            typer.echo(json.dumps([json.loads(r.model_dump_json()) for r in runs], indent=2))
            return
        from skillassay.report.tables import outcome_line, runs_table

        con = _console()
        con.print(runs_table(job, runs, st.job(job), width=con.width))
        line = outcome_line(runs)
        if line:
            typer.echo(line)
        missing = st.missing_runs(job)
        if missing:
            typer.echo(
                f"{len(missing)} planned run(s) missing or not scored (provider or harness errors): "
                "`skillassay run --resume` runs them again."
            )


# compare's exit code when it refuses a verdict (distinct from --fail-if-worse's 1 and bad input's 2)
NO_VERDICT = 3


@commands.command("compare")
def compare_cmd(
    a: str = typer.Argument(..., help="JOB (its skill runs) or JOB:baseline (the reference)."),
    b: str = typer.Argument(..., help="JOB (its skill runs) or JOB:baseline (compared against A)."),
    results: Path = RESULTS_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
    fail_if_worse: bool = typer.Option(
        False, "--fail-if-worse", help="Exit 1 when B is worse than A with a 95% interval that excludes zero."
    ),
    markdown: bool = typer.Option(
        False,
        "--markdown",
        help="Print Markdown (a PR comment, $GITHUB_STEP_SUMMARY) instead of tables.",
    ),
    report_url: str | None = REPORT_URL_OPT,
    max_unscored_gap: float = typer.Option(
        0.1,
        "--max-unscored-gap",
        min=0.0,
        max=1.0,
        help="Give no verdict (exit 3) when the arms' shares of unscored runs differ by more than this "
        "(0..1).",
    ),
) -> None:
    """Compare B with A, run for run (paired by eval and run number): deltas, a bootstrap interval clustered
    by eval, and whether the difference can be told from noise. `compare JOB:baseline JOB` measures a
    skill. Also how often each used the skill, and the pass rate when it did and when it did not. Two jobs
    of one trigger suite (e.g. two descriptions of a skill) are compared prompt by prompt: recall,
    precision, F1 and the prompts that flipped. Each arm's unscored runs (provider, harness, definition
    errors) are counted by outcome.

    No verdict (exit 3, a `no verdict:` line saying why) when the scored runs were graded with more than one
    grading version (`skillassay regrade JOB` brings a job up to date), or when the arms' unscored shares
    differ by more than --max-unscored-gap: an arm whose failures went unscored would look better than it is.

    --markdown prints the comparison as Markdown (a pull request's comment, `>> $GITHUB_STEP_SUMMARY`):
    the paired difference with its interval, the verdict, each arm's cost, and a link to the report's page
    below --report-url. The exit codes are the same.

    Exit codes: 0 compared; 1 --fail-if-worse and B is worse; 2 bad input; 3 no verdict."""
    from skillassay.kinds.base import job_kind
    from skillassay.scoring.cost import runs_cost
    from skillassay.scoring.skill_use import skill_use_of
    from skillassay.scoring.stats import compare, refusal_of

    if markdown and as_json:
        raise _fail("--markdown and --json both print to stdout: choose one")
    with _open(results) as st:
        runs_a, runs_b = _runs_of(st, a), _runs_of(st, b)
    kind_a, kind_b = job_kind(runs_a), job_kind(runs_b)
    if kind_a is not kind_b:
        own, kind = (a, kind_a) if kind_a is not None else (b, kind_b)
        raise _fail(f"{own} is {kind.job_noun if kind else ''}'s job and the other is not: nothing to pair")
    own_cmp = kind_a.compare_jobs(runs_a, runs_b, a, b) if kind_a is not None else None
    if own_cmp is not None:
        empty = own_cmp.nothing_in_common(a, b)
        if empty is not None:
            raise _fail(f"nothing to compare: {empty}")
        refusal = refusal_of(runs_a, runs_b, a, b, max_unscored_gap)
        if markdown:
            from skillassay.report.markdown import own_comparison_markdown

            typer.echo(own_comparison_markdown(own_cmp, a, b, refusal.reason if refusal else None), nl=False)
        _compare_own(own_cmp, a, b, as_json, fail_if_worse and refusal is None, refusal, quiet=markdown)
        if refusal is not None:
            typer.echo(f"no verdict: {refusal.reason}", err=True)
            raise typer.Exit(NO_VERDICT)
        return
    if not {(r.eval_id, r.run_index) for r in runs_a} & {(r.eval_id, r.run_index) for r in runs_b}:
        evals_a, evals_b = sorted({r.eval_id for r in runs_a}), sorted({r.eval_id for r in runs_b})
        raise _fail(
            f"nothing to compare: {a} and {b} have no runs of the same eval and run number "
            f"({a}: {', '.join(evals_a)}; {b}: {', '.join(evals_b)})"
        )
    cmp = compare(runs_a, runs_b, a_label=a, b_label=b, max_unscored_gap=max_unscored_gap)
    use_a, use_b = skill_use_of(runs_a), skill_use_of(runs_b)
    # what each side's model calls cost, and what a pass cost (every run paid for counts, graded or not)
    cost_a, cost_b = runs_cost(runs_a), runs_cost(runs_b)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "a": a,
                    "b": b,
                    **cmp.to_dict(),
                    "cost": {"a": cost_a.model_dump(), "b": cost_b.model_dump()},
                    "skill_use": {
                        "a": use_a.to_dict() if use_a else None,
                        "b": use_b.to_dict() if use_b else None,
                    },
                },
                indent=2,
            )
        )
    elif markdown:
        from skillassay.report.markdown import comparison_markdown

        typer.echo(comparison_markdown(cmp, a, b, runs_a, runs_b, report_url), nl=False)
    else:
        from skillassay.report.tables import comparison_tables, cost_table

        con = _console()
        if cmp.refusal is None:  # refused: the deltas are not shown, only why (--json still has the figures)
            for t in comparison_tables(cmp, a, b):
                con.print(t)
        if cmp.unscored_a or cmp.unscored_b:
            con.print(_unscored_table(cmp, a, b))
        if cost_a.priced_runs or cost_b.priced_runs:
            con.print(cost_table({f"A = {a}": cost_a, f"B = {b}": cost_b}))
        if cmp.refusal is None:
            con.print(cmp.verdict, markup=False)
        if cmp.warning and cmp.refusal is None:
            con.print(f"Warning: {cmp.warning}", style="yellow", markup=False)
        for g in cmp.eval_gaps:
            con.print(
                f"Warning: {g.eval_id}: unscored {g.a.text()} in {a}, {g.b.text()} in {b}: its figures "
                "leave out more of one arm's runs than the other's.",
                style="yellow",
                markup=False,
            )
        for label, use in ((a, use_a), (b, use_b)):
            if use is not None:
                con.print(use.sentence(label), markup=False)
    if cmp.refusal is not None:
        typer.echo(f"no verdict: {cmp.refusal.reason}", err=True)
        raise typer.Exit(NO_VERDICT)
    if fail_if_worse and cmp.significant and cmp.overall and cmp.overall.delta < 0:
        raise typer.Exit(1)


def _unscored_table(cmp: Comparison, a: str, b: str) -> Table:
    """Each arm's runs and those not scored, by outcome; then each eval whose arms' shares differ too much."""
    from skillassay.outcomes import OUTCOMES, UNSCORED, label

    gap = f"{cmp.max_unscored_gap * 100:g}"
    t = Table(title=f"Runs not scored (left out of every figure; at most {gap} points apart between arms)")
    outcomes = [o for o in OUTCOMES if o in UNSCORED]
    for col in ("arm", "eval", "runs", "not scored", "share", *map(label, outcomes)):
        t.add_column(col, justify="left" if col in ("arm", "eval") else "right", no_wrap=col == "arm")
    for side, where, share in cmp.unscored_rows():
        t.add_row(
            f"A = {a}" if side == "a" else f"B = {b}",
            where,
            str(share.runs),
            str(share.count),
            f"{share.share * 100:.0f}%",
            *(str(share.unscored.get(o, 0)) for o in outcomes),
        )
    return t


def _compare_own(
    cmp: JobComparison,
    a: str,
    b: str,
    as_json: bool,
    fail_if_worse: bool,
    refusal: Refusal | None = None,
    quiet: bool = False,
) -> None:
    """Two jobs compared their kind's own way (two descriptions of a skill on one trigger suite)."""
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "a": a,
                    "b": b,
                    cmp.key: cmp.to_dict(),
                    "no_verdict": refusal.to_dict() if refusal else None,
                },
                indent=2,
            )
        )
    elif refusal is not None or quiet:
        pass  # the reason is printed as the `no verdict:` line; quiet: the Markdown is printed
    else:
        con = _console()
        for t in cmp.tables(a, b):
            con.print(t)
        con.print(cmp.verdict, markup=False)
    if fail_if_worse and cmp.worse():
        raise typer.Exit(1)


@commands.command("report")
def report_cmd(
    jobs: list[str] = typer.Argument(
        None, help="Job ids (default: every job for --html, the latest for the rest)."
    ),
    html: Path | None = typer.Option(None, "--html", help="Write the static web report into this folder."),
    junit: Path | None = typer.Option(None, "--junit", help="Write JUnit XML (one testcase per eval x run)."),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write the job's summary and runs as JSON into this file (`-`: to stdout)."
    ),
    markdown: bool = typer.Option(
        False,
        "--markdown",
        help="Print the job's summary as Markdown (a PR comment, $GITHUB_STEP_SUMMARY) instead of tables.",
    ),
    report_url: str | None = REPORT_URL_OPT,
    results: Path = RESULTS_OPT,
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite folder for the Evals page (default: the job's)."
    ),
    fail_on_verdict: bool = typer.Option(
        False, "--fail-on-verdict", help="Exit 1 if any run's verdict failed."
    ),
    min_pass_rate: float | None = typer.Option(
        None,
        "--min-pass-rate",
        min=0.0,
        max=1.0,
        help="Exit 1 if the overall pass rate (0..1) is below this.",
    ),
) -> None:
    """Report on jobs: a summary in the terminal, and/or a static site (--html), JUnit XML, JSON, or
    Markdown (--markdown: verdicts, the skill's paired difference from the baseline with its interval, cost,
    a link to the job's page below --report-url)."""
    from skillassay.kinds.base import job_kind_findings, job_summary_of
    from skillassay.report.ci import job_json, write_json, write_junit
    from skillassay.report.tables import outcome_line, summary_table, unscored_runs
    from skillassay.scoring.skill_use import skill_use_of
    from skillassay.scoring.stats import summarize

    jobs = jobs or []
    # one line per file written; on stderr when stdout carries the JSON
    json_to_stdout = json_out is not None and str(json_out) in ("-", "/dev/stdout")
    if markdown and json_to_stdout:
        raise _fail("--markdown and --json - both print to stdout: write the JSON to a file")
    json_to_stdout = json_to_stdout or markdown

    def note(message: str) -> None:
        typer.echo(message, err=json_to_stdout)

    with _open(results) as st:
        known = {j.job_id: j for j in st.jobs()}
        for j in jobs:
            if j not in known:
                raise _fail(f"{results}: no job {j!r} (known: {', '.join(known) or 'none'})")
        if html is not None:
            from skillassay.report.site import build_site

            try:
                res = build_site(results, html, job_ids=jobs or None, suite=suite)
            except SkillassayError as exc:
                raise _fail(str(exc)) from exc
            note(
                f"wrote the web report ({res.pages} pages, {len(res.jobs)} job(s)) to {html} in "
                f"{res.seconds:.1f} s "
                f"(open {html / 'index.html'}, or `skillassay serve {html}`)"
            )
            if res.definitions_error:
                typer.echo(f"note: {res.definitions_error}", err=True)
        checked = jobs or (
            [max(known.values(), key=lambda j: (j.created_at, j.job_id)).job_id] if known else []
        )
        if (junit or json_out) and len(checked) != 1:
            raise _fail("--junit and --json describe one job: name it" if checked else f"{results}: no jobs")
        exit_code = 0
        for job_id in checked:
            job, runs = known[job_id], st.runs(job_id=job_id)
            if junit:
                write_junit(junit, job, runs)
                note(f"wrote JUnit XML for {len(runs)} runs to {junit}")
            if json_out:
                if json_to_stdout:
                    typer.echo(json.dumps(job_json(job, runs), indent=2))
                else:
                    write_json(json_out, job, runs)
                    note(f"wrote JSON for {len(runs)} runs to {json_out}")
            skill = [r for r in runs if r.variant == "skill"]
            summary = summarize(skill)
            tables = html is None and not junit and not json_out and not markdown
            own = job_summary_of(runs) if tables else None
            if markdown:
                from skillassay.report.markdown import job_markdown

                typer.echo(job_markdown(job, runs, report_url), nl=False)
            if own is not None:
                con = _console()
                for t in own.tables(f"Job {job_id}"):
                    con.print(t)
                line = outcome_line(runs)
                if line:
                    con.print(line, markup=False)
                for line in unscored_runs(runs):
                    con.print(line, markup=False, style="yellow")
            elif tables:
                con = _console()
                con.print(summary_table(f"Job {job_id}", summary, skill, width=con.width))
                line = outcome_line(runs)
                if line:
                    con.print(line, markup=False)
                for line in unscored_runs(runs):
                    con.print(line, markup=False, style="yellow")
                base = [r for r in runs if r.variant == "baseline"]
                if base:
                    from skillassay.scoring.stats import compare

                    cmp = compare(base, skill, a_label="without the skill", b_label="with the skill")
                    con.print(cmp.verdict, markup=False)
                    if cmp.warning:
                        con.print(f"Warning: {cmp.warning}", style="yellow", markup=False)
                use = skill_use_of(runs)
                if use is not None:
                    con.print(use.sentence("Skill use"), markup=False)
                for line in job_kind_findings(st.root, runs):
                    con.print(line, markup=False, highlight=False)
            failed = [r for r in skill if r.scored and not (r.verdict and r.verdict.passed)]
            if fail_on_verdict and failed:
                typer.echo(f"{job_id}: {len(failed)} run(s) failed their verdict.", err=True)
                exit_code = 1
            if min_pass_rate is not None:
                rate = summary.overall.pass_rate if summary.overall else 0.0
                if rate + 1e-9 < min_pass_rate:
                    typer.echo(f"{job_id}: pass rate {rate:.0%} is below {min_pass_rate:.0%}.", err=True)
                    exit_code = 1
        if exit_code:
            raise typer.Exit(exit_code)


@commands.command("export")
def export_cmd(
    job_id: str = typer.Argument(..., help="The job to export."),
    out: Path = typer.Argument(..., help="Folder to write the logs into."),
    fmt: str = typer.Option("inspect", "--format", help="Export format: inspect (Inspect AI eval logs)."),
    results: Path = RESULTS_OPT,
) -> None:
    """Export a job for other tools: Inspect AI eval logs, one per eval and arm (`inspect view OUT`)."""
    if fmt != "inspect":
        raise _fail(f"--format: unknown format {fmt!r}; known: inspect")
    from skillassay.report.inspect_log import InspectMissing, export_inspect

    with _open(results) as st:
        job = st.job(job_id)
        if job is None:
            raise _fail(_no_such_job(st, job_id))
        runs = st.runs(job_id=job_id)
        try:
            written = export_inspect(st.root, job, runs, out)
        except InspectMissing as exc:
            raise _fail(str(exc)) from exc
    for path in written:
        typer.echo(f"wrote {path}")


@commands.command("serve")
def serve_cmd(
    site: Path = typer.Argument(
        None,
        help="A folder written by `skillassay report --html` (default: report, as in "
        "`skillassay report JOB --html report/`; with --live, none needed).",
        show_default=False,
    ),
    port: int = typer.Option(8000, "--port", help="Port on 127.0.0.1 (0 = any free port)."),
    live: bool = typer.Option(
        False,
        "--live",
        help="Also show the jobs under --results as they run, at /live/ (their lanes, phases, finished runs "
        "and cost), refreshing by itself.",
    ),
    results: Path = RESULTS_OPT,
) -> None:
    """Serve a built report (default: the folder `report`) on 127.0.0.1 until interrupted; with --live, the
    running jobs' live view too."""
    from skillassay.report.serve import start

    if site is None and not live:
        site = Path("report")
    if site is not None and not (site / "index.html").is_file():
        raise _fail(f"{site}: no index.html (build it with `skillassay report --html {site}`)")
    if live and not results.is_dir():
        raise _fail(f"--results {results}: no such results folder")
    try:
        server, _ = start(site, port, live=results if live else None)
    except OSError as exc:
        raise _fail(f"cannot listen on 127.0.0.1:{port}: {exc}") from exc
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    if site is not None:
        typer.echo(f"Serving {site} on {url} (Ctrl-C stops)")
    if live:
        typer.echo(f"Live jobs of {results} on {url}live/ (Ctrl-C stops)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
