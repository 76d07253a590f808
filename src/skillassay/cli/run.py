"""``skillassay run``: the main job. Run an agent (with a skill) on every eval, grade, keep everything,
summarise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import typer
from rich.console import Console
from rich.markup import escape

from skillassay.cli.options import (
    JUDGE_BASE_URL,
    JUDGE_KEY_ENV,
    JUDGE_MODEL,
    JUDGE_PROVIDER,
    judge_from_options,
)
from skillassay.errors import DefinitionError, SkillassayError

if TYPE_CHECKING:
    from skillassay.graders.judge_config import JudgeOverrides
    from skillassay.kinds.base import JobSummary
    from skillassay.orchestrator.job import JobOptions, JobResult


def _judge_overrides(
    model: str | None, provider: str | None, base_url: str | None, key_env: str | None
) -> JudgeOverrides:
    """The judge options given, laid over a job's own judge (``--resume``, ``regrade``)."""
    given = {"model": model, "provider": provider, "base_url": base_url, "api_key_env": key_env}
    return cast("JudgeOverrides", {k: v for k, v in given.items() if v})


commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


def _console(stderr: bool = False) -> Console:
    """The terminal's width on a terminal; off one, $COLUMNS when set, else a wide console (tables wrapped at
    80 columns are unreadable in CI logs)."""
    probe = Console(stderr=stderr)
    if probe.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return probe
    return Console(stderr=stderr, width=max(160, probe.width))


console = _console()
err = _console(stderr=True)


def _env_pairs(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        if "=" not in v:
            raise typer.BadParameter(f"{v!r}: expected KEY=VALUE", param_hint="--agent-env")
        k, val = v.split("=", 1)
        out[k] = val
    return out


def usage_line(u) -> str:
    """The job's model use in one line: calls, tokens, cost (a lower bound when a model had no price)."""
    cost = (
        f"${u.cost_usd:.4f}"
        if not u.unpriced_models
        else (f"at least ${u.cost_usd:.4f} (no price for {', '.join(u.unpriced_models)}: see --pricing)")
    )
    errors = f"; {u.provider_error_count} provider error(s)" if u.provider_error_count else ""
    return (
        f"Model: {u.requests} call(s), {u.input_tokens} in / {u.output_tokens} out / "
        f"{u.cache_read_input_tokens} cache-read / {u.cache_creation_input_tokens} cache-write tokens, "
        f"{cost}{errors}"
    )


RUN_EXAMPLES = """Examples:

  skillassay run evals --agent reference                         (the pipeline's own check: golden solutions)

  skillassay run evals --agent claude-code --skill my-skill --runs 5 --baseline --jobs 2

  skillassay run evals --agent claude-code --skill my-skill --runs 10 --executor ray --ray-address head:6379

  skillassay run evals --agent codex --fixtures express-ts,flask-py --layers rubric

  skillassay run evals --agent command --command "my-agent --cwd {workspace} {prompt}"

  skillassay run evals/trigger-evals/seam-lock-access.toml --agent claude-code   (does the skill trigger?)

  skillassay run --resume 20261129-231415-3902                   (finish an interrupted job)
"""


@commands.command("run", epilog=RUN_EXAMPLES)
def run(
    path: Path = typer.Argument(
        Path("evals"), help="The suite folder (or one fixture folder / definition file / trigger suite file)."
    ),
    agent: str = typer.Option(
        "reference",
        "--agent",
        "-a",
        help="claude-code, codex, command, reference (applies the golden solution) or noop.",
    ),
    skill: Path | None = typer.Option(
        None, "--skill", help="The skill folder (holding SKILL.md) given to the agent."
    ),
    skill_mode: str = typer.Option(
        "native",
        "--skill-mode",
        help="native: installed where the agent discovers personal skills; "
        "system-prompt: SKILL.md passed as the system prompt (the plan's way).",
    ),
    fixtures: str | None = typer.Option(
        None,
        "--fixtures",
        help="Comma-separated eval ids to run (fixture names and agent-eval ids, "
        "e.g. express-ts,cancellation-support; default: all). See skillassay list.",
    ),
    api_path: str | None = typer.Option(
        None, "--api-path", help="Only evals whose expected API path is this (a filter, not an override)."
    ),
    layers: str = typer.Option("both", "--layers", help="rubric, sandbox or both (Seam evals)."),
    runs: int | None = typer.Option(
        None, "--runs", "-n", min=1, help="Runs per eval (default 1; a trigger suite's own runs per prompt)."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        show_default=False,
        help="Runs executed in parallel, each fully isolated (local executor; on Ray the cluster's "
        "CPUs decide). Default: SKILLASSAY_JOBS, else twice this machine's CPUs, at most 4.",
    ),
    executor: str | None = typer.Option(
        None,
        "--executor",
        help="Where runs execute: local (this machine, the default) or ray (a Ray "
        "cluster; needs skillassay[ray]). --resume keeps the job's own.",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="--executor ray: the cluster to join (its head, e.g. head:6379); "
        "default RAY_ADDRESS, else a new local cluster.",
    ),
    timeout: float = typer.Option(
        600.0, "--timeout", min=1.0, help="Seconds before the agent is killed (whole process group)."
    ),
    results: Path = typer.Option(Path("results"), "--results", help="Where results are kept."),
    seam: str = typer.Option(
        "emulator", "--seam", help="emulator (embedded, no key) or live (needs SEAM_API_KEY)."
    ),
    backend: str = typer.Option(
        "host", "--backend", help="How apps run for the sandbox layer: host or docker."
    ),
    isolation: str = typer.Option(
        "bubblewrap",
        "--isolation",
        help="How the agent, the app and the graders' commands are sealed: bubblewrap, "
        "or none (nothing sealed; for machines that cannot; recorded).",
    ),
    allow_host: list[str] = typer.Option(
        [],
        "--allow-host",
        help="A host (or host:port, or *.domain) the agent and the app's install "
        "may reach beyond the stack's registries; repeatable; recorded.",
    ),
    mount: list[Path] = typer.Option(
        [],
        "--mount",
        help="A folder or file the agent may read (read-only) beyond its workspace, "
        "home, CLI and runtimes; repeatable; recorded.",
    ),
    baseline: bool = typer.Option(
        False, "--baseline", help="Also run every eval without the skill, paired run for run."
    ),
    resume: str | None = typer.Option(
        None,
        "--resume",
        help="A job id: rerun only its missing runs and its unscored ones (provider and harness errors).",
    ),
    model: str | None = typer.Option(None, "--model", help="Passed through to the agent CLI."),
    command: str | None = typer.Option(
        None, "--command", help="For --agent command: a command line with {prompt} and {workspace}."
    ),
    agent_env: list[str] = typer.Option(
        [],
        "--agent-env",
        help="KEY=VALUE added to the agent's environment "
        "(repeatable). Provider keys given here go to skillassay's model proxy, never "
        "to the agent. Values are never stored.",
    ),
    model_upstream: str | None = typer.Option(
        None,
        "--model-upstream",
        help="Send the agent's model calls (through skillassay's model proxy) "
        "here instead of the providers: a model server or gateway URL.",
    ),
    pricing: Path | None = typer.Option(
        None,
        "--pricing",
        help="A TOML price table extending/overriding the shipped one (see docs/agents.md).",
    ),
    max_cost: float | None = typer.Option(
        None,
        "--max-cost",
        min=0.0,
        help="USD: start no new run once the job has spent this (runs under way "
        "finish; --resume starts the rest).",
    ),
    retries: int = typer.Option(
        2,
        "--retries",
        min=0,
        help="Times a run the model provider failed (429, 5xx, overloaded, no answer) is "
        "tried again from scratch, with exponential backoff.",
    ),
    retry_delay: float = typer.Option(
        10.0,
        "--retry-delay",
        min=0.0,
        help="Seconds before the first retry (doubled each time, with jitter).",
    ),
    max_change_size: str | None = typer.Option(
        None,
        "--max-change-size",
        help="The most a run's change may weigh, e.g. 50MB (default: the "
        "eval's max_change_size, or 20MB). Beyond it the largest files "
        "are left out, listed in run.json, and the run is graded on the "
        "rest.",
    ),
    fail_under: float | None = typer.Option(
        None,
        "--fail-under",
        help="Exit 1 when an eval's mean combined score (or verdict score, 0-100) "
        "falls below this (a trigger suite: when its F1, 0-100, does).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON (for machines)."),
    canary_runs: int | None = typer.Option(
        None,
        "--canary-runs",
        min=0,
        help="Golden runs of each eval's canary on a cache miss (the golden graded "
        "here before its eval's runs are scored; default 3, or "
        "SKILLASSAY_CANARY_RUNS); 0: none (recorded as a warning).",
    ),
    judge_model: str | None = JUDGE_MODEL,
    judge_provider: str | None = JUDGE_PROVIDER,
    judge_base_url: str | None = JUDGE_BASE_URL,
    judge_key_env: str | None = JUDGE_KEY_ENV,
) -> None:
    """Run an agent on every eval of a suite, grade each run, keep every result and print a summary.

    Results go to RESULTS/<job>/<eval>/run_<n>/ (diff.patch, transcripts, rubric.json, sandbox.json, app logs,
    run.json) and into RESULTS/skillassay.db. Exit codes: 0 done, 1 --fail-under not met, 2 bad input."""
    given = dict(locals())
    executor = _check_choices(layers, seam, backend, skill_mode, executor, ray_address)
    _check_sealing(isolation, mount, allow_host, suite=None if resume else path, results=results)
    _check_agent(agent, None if resume else _env_pairs(agent_env), command, model_upstream)
    opts = _job_options({**given, "executor": executor})
    judge = _judge_overrides(judge_model, judge_provider, judge_base_url, judge_key_env)
    result = _run_the_job(opts, resume, judge, as_json)
    _print_result(result, results, as_json, fail_under)


def _check_choices(
    layers: str, seam: str, backend: str, skill_mode: str, executor: str | None, ray_address: str | None
) -> str | None:
    """The options that take one of a few values; the executor (--ray-address means ray)."""
    if layers not in ("rubric", "sandbox", "both"):
        raise typer.BadParameter("expected rubric, sandbox or both", param_hint="--layers")
    if seam not in ("emulator", "live"):
        raise typer.BadParameter("expected emulator or live", param_hint="--seam")
    if backend not in ("host", "docker"):
        raise typer.BadParameter("expected host or docker", param_hint="--backend")
    if skill_mode not in ("native", "system-prompt"):
        raise typer.BadParameter("expected native or system-prompt", param_hint="--skill-mode")
    from skillassay.orchestrator.executors import available_executors

    if executor is not None and executor not in available_executors():
        raise typer.BadParameter(
            f"expected one of: {', '.join(available_executors())}", param_hint="--executor"
        )
    if ray_address is not None:
        if (executor or "ray") != "ray":
            raise typer.BadParameter("only with --executor ray", param_hint="--ray-address")
        executor = "ray"
    return executor


def _check_sealing(
    isolation: str, mount: list[Path], allow_host: list[str], suite: Path | None, results: Path
) -> None:
    """The isolation exists and works here, and what it grants beyond the run is allowed (exit 2 if not)."""
    from skillassay.isolation import available_isolations, get_isolation

    if isolation not in available_isolations():
        raise typer.BadParameter(f"expected {' or '.join(available_isolations())}", param_hint="--isolation")
    for m in mount:
        if not m.exists():
            raise typer.BadParameter(f"{m}: no such file or folder", param_hint="--mount")
    from skillassay.isolation.run_policy import grant_problem

    if problem := grant_problem(mount, allow_host, suite=suite, results=results):
        _refuse(problem)
    sealer = get_isolation(isolation)
    if problem := sealer.problem():
        _refuse(f"{problem}; or run with --isolation none (nothing sealed)")
    if not sealer.sealed:
        from skillassay.isolation.none import WARNING

        err.print(f"[yellow]warning:[/yellow] {WARNING}", highlight=False, soft_wrap=True)


def _check_agent(
    agent: str, agent_env: dict[str, str] | None, command: str | None, model_upstream: str | None
) -> None:
    """The agent exists; with ``agent_env`` (a new job, not --resume), it can run here and reach its model."""
    from skillassay.agents import available_agents, get_agent

    if agent not in available_agents():
        from skillassay.cli.usage import did_you_mean

        raise typer.BadParameter(
            f"unknown agent {agent!r}{did_you_mean(agent, available_agents())}; available: "
            f"{', '.join(available_agents())}",
            param_hint="--agent",
        )
    if agent_env is None:
        return
    from skillassay.orchestrator.model_access import model_preflight

    the_agent = get_agent(agent)
    problem = the_agent.preflight({**os.environ, **agent_env}, command) or model_preflight(
        the_agent.model_api, agent, agent_env, model_upstream
    )
    if problem:
        _refuse(problem)


def _refuse(problem: str) -> NoReturn:
    err.print(f"[red]error:[/red] {problem}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


# run's parameters that are not the job's options, and those named or given otherwise than its options
_NOT_OPTIONS = {
    "resume",
    "fail_under",
    "as_json",
    "judge_model",
    "judge_provider",
    "judge_base_url",
    "judge_key_env",
}
_PARSED = {"path", "fixtures", "allow_host", "mount", "agent_env", "max_change_size"}
# left to the job (or, with --resume, to the job's own)
_IF_GIVEN = {"executor", "ray_address", "canary_runs", "jobs"}


def _job_options(given: dict[str, Any]) -> JobOptions:
    """The job's options from ``run``'s parameters: those named as options pass as they are (a few only when
    given), the others are parsed or renamed here."""
    from skillassay.orchestrator.job import JobOptions

    same = {
        k: v
        for k, v in given.items()
        if k not in _NOT_OPTIONS | _PARSED and (v is not None or k not in _IF_GIVEN)
    }
    assert set(same) <= set(JobOptions.model_fields), set(same) - set(JobOptions.model_fields)
    fixtures = given["fixtures"]
    judge = (
        None
        if given["resume"]
        else judge_from_options(
            given["judge_model"], given["judge_provider"], given["judge_base_url"], given["judge_key_env"]
        )
    )
    return JobOptions.model_validate(
        {
            **same,
            "suite": given["path"],
            "fixtures": [f.strip() for f in fixtures.split(",") if f.strip()] if fixtures else [],
            "allow_hosts": given["allow_host"],
            "mounts": [m.absolute() for m in given["mount"]],
            "agent_env": _env_pairs(given["agent_env"]),
            "max_change_size": _byte_size(given["max_change_size"], "--max-change-size"),
            "judge": judge,
        }
    )


class _Progress:
    """The progress bar of a job, and what the job told of itself (its id once it is recorded)."""

    def __init__(self, resume: str | None, agent: str, total: int | None, as_json: bool):
        from skillassay.cli.progress import RunProgress

        self.resume, self.agent, self.as_json = resume, agent, as_json
        self.started: list[str] = []
        self.bar = RunProgress(err, agent, total, disable=as_json)

    def on_event(self, kind, record, exc, job_id=None, run=None, phase=None) -> None:
        if kind == "job":  # the bar appears once the job is recorded: a refused job prints only its error
            self.started.append(job_id)
            if not self.as_json:
                err.print(f"job {job_id}: {'resuming' if self.resume else self.agent}", highlight=False)
            self.bar.start("resuming" if self.resume else self.agent)
        elif (
            kind == "phase" and run is not None and run.job_id == (self.started[0] if self.started else None)
        ):
            self.bar.phase(run, phase)
        elif kind == "done" and record is not None:
            self._finished(record)
        elif kind == "error":
            from skillassay.report.runs import first_line

            self.bar.finished(None, f"[red]{escape(first_line(str(exc), 200))}[/red]")

    def _finished(self, record) -> None:
        from skillassay.kinds.base import headline_figure
        from skillassay.phases import RunKey

        score = headline_figure(record)
        if score is None:
            score = record.verdict.percent if record.verdict else None
        key = RunKey(record.job_id, record.eval_id, record.variant, record.run_index)
        self.bar.finished(
            key,
            f"{key.label()}: {record.outcome.replace('_', ' ')}"
            + (f", {score:g}" if score is not None else ""),
        )


def _planned_runs(opts: JobOptions) -> int:
    """How many runs a new job plans (for the progress bar)."""
    from skillassay.definitions import load_suite, select
    from skillassay.kinds import kind_of

    evals = select(load_suite(opts.suite, opts.fixtures or None), opts.fixtures or None, opts.api_path)
    per_eval = opts.runs or (kind_of(evals[0]).default_runs(evals[0]) if evals else 1)
    return len(evals) * per_eval * (2 if opts.baseline else 1)


def _run_the_job(opts: JobOptions, resume: str | None, judge: JudgeOverrides, as_json: bool) -> JobResult:
    """The job, with its progress bar; bad input is exit 2, Ctrl-C exit 130 (saying how to go on)."""
    from skillassay.orchestrator.job import run_job

    progress: _Progress | None = None
    try:
        # --resume: the job's own suite and missing runs decide (PATH is not read)
        progress = _Progress(resume, opts.agent, None if resume else _planned_runs(opts), as_json)
        try:
            return run_job(opts, resume=resume, on_event=progress.on_event, judge_overrides=judge)
        finally:
            progress.bar.stop()
    except DefinitionError as exc:
        for p in exc.problems:
            err.print(f"[red]error:[/red] {p}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except SkillassayError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        _interrupted(progress.started if progress is not None else [], resume, opts.results)


def _interrupted(started: list[str], resume: str | None, results: Path) -> NoReturn:
    if not started and not resume:
        err.print("[yellow]interrupted[/yellow] before the job started: nothing was recorded")
        raise typer.Exit(130) from None
    job_id = started[0] if started else resume
    where = "" if results == Path("results") else f" --results {results}"
    err.print(
        f"[yellow]interrupted[/yellow]: finished runs are kept; continue with "
        f"[bold]skillassay run --resume {job_id}{where}[/bold]"
    )
    raise typer.Exit(130) from None


def _print_result(result: JobResult, results: Path, as_json: bool, fail_under: float | None) -> None:
    """The job's summary (a table, or JSON); exit 1 when an eval falls below --fail-under."""
    from skillassay.kinds.base import summary_kind
    from skillassay.orchestrator.summary import summarise

    evals = result.definitions
    agent = result.job.agent  # --resume: the job's, whatever --agent says
    job_dir = results / result.job.job_id
    own = summary_kind(evals)
    own_summary = own.job_summary(result.records) if own is not None else None
    if own_summary is not None:
        _own_result(own_summary, result, job_dir, agent, as_json, fail_under)
        return
    summaries = summarise(result.records, evals)
    if as_json:
        typer.echo(json.dumps(_summary_json(result, job_dir, summaries), indent=2))
    else:
        _print_summary(result, summaries, results)
    if fail_under is not None:
        low = [
            s for s in summaries if s.variant == "skill" and (s.headline is None or s.headline < fail_under)
        ]
        if low:
            err.print(f"[red]below --fail-under {fail_under:g}[/red]: " + ", ".join(s.eval_id for s in low))
            raise typer.Exit(1)


def _summary_json(result: JobResult, job_dir: Path, summaries: list) -> dict[str, Any]:
    return {
        "job_id": result.job.job_id,
        "results_dir": str(job_dir),
        "status": result.job.status,
        "stop_reason": result.job.stop_reason,
        "warnings": result.job.warnings,
        "canaries": {k: v.model_dump(mode="json") for k, v in result.job.canaries.items()},
        "model_usage": result.job.model_usage.model_dump(mode="json") if result.job.model_usage else None,
        "evals": [s.model_dump(mode="json") for s in summaries],
        "runs": [json.loads(r.model_dump_json()) for r in result.records],
    }


def _print_summary(result: JobResult, summaries: list, results: Path) -> None:
    from skillassay.orchestrator.summary import table

    job_dir = results / result.job.job_id
    console.print(
        table(
            summaries,
            f"Job {result.job.job_id}: {result.job.agent}"
            + (f" with {result.job.skill_path}" if result.job.skill_path else "")
            + f" ({result.job.status})",
            width=console.width,
        )
    )
    where = "" if results == Path("results") else f" --results {results}"
    if result.job.model_usage is not None:
        console.print(usage_line(result.job.model_usage), highlight=False)
    for warning in result.job.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False, soft_wrap=True)
    if result.job.stop_reason:
        console.print(f"[yellow]stopped[/yellow]: {result.job.stop_reason}", highlight=False)
    from skillassay.kinds.base import job_kind_findings

    for line in job_kind_findings(results, result.records):  # the Seam kind: static/trace disagreements
        console.print(line, markup=False, highlight=False)
    console.print(
        f"Results: {job_dir}  (skillassay runs --job {result.job.job_id}{where}; "
        f"skillassay report {result.job.job_id}{where} --html report/)"
    )


def _own_result(
    summary: JobSummary, result: JobResult, job_dir: Path, agent: str, as_json: bool, fail_under: float | None
) -> None:
    """A job summarised its kind's own way (a trigger suite's: recall, precision and F1 per category, and each
    prompt's decisions)."""
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "job_id": result.job.job_id,
                    "results_dir": str(job_dir),
                    "status": result.job.status,
                    summary.key: summary.to_dict(),
                    "runs": [json.loads(r.model_dump_json()) for r in result.records],
                },
                indent=2,
            )
        )
    else:
        for t in summary.tables(
            f"Job {result.job.job_id}: {agent} with {result.job.skill_path} ({result.job.status})"
        ):
            console.print(t)
        errors = [r for r in result.records if not r.scored]
        if errors:
            err.print(
                f"[yellow]{len(errors)} run(s) not scored[/yellow] ({errors[0].outcome.replace('_', ' ')}: "
                "not "
                f"counted; `skillassay run --resume {result.job.job_id}` reruns provider and harness "
                "errors): "
                f"{errors[0].error}",
                highlight=False,
                soft_wrap=True,
            )
        console.print(f"Results: {job_dir}  (skillassay report {result.job.job_id} --html report/)")
    head = summary.headline()
    if fail_under is not None and (head.value is None or head.value < fail_under):
        err.print(
            f"[red]below --fail-under {fail_under:g}[/red]: {head.name} "
            f"{'–' if head.value is None else f'{head.value:.1f}'}"
        )
        raise typer.Exit(1)


@commands.command("regrade")
def regrade(
    job: str = typer.Argument(..., help="The job id (see skillassay runs)."),
    results: Path = typer.Option(Path("results"), "--results", help="Where results are kept."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Definitions to grade against (default: the job's)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the changes as JSON."),
    judge_model: str | None = JUDGE_MODEL,
    judge_provider: str | None = JUDGE_PROVIDER,
    judge_base_url: str | None = JUDGE_BASE_URL,
    judge_key_env: str | None = JUDGE_KEY_ENV,
) -> None:
    """Re-score a job's stored workspaces and transcripts with the current graders (no agent runs) and print
    what changed. Each run's previous record is kept as run.prev.json (an older one as run.prev-<n>.json).
    Only scored runs are regraded; a run the harness fails to regrade keeps its record."""
    from rich.table import Table

    from skillassay.orchestrator.regrade import regrade_job

    try:
        result = regrade_job(
            job,
            results,
            suite=suite,
            dry_run=dry_run,
            judge_overrides=_judge_overrides(judge_model, judge_provider, judge_base_url, judge_key_env),
        )
    except DefinitionError as exc:
        for p in exc.problems:
            err.print(f"[red]error:[/red] {p}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except SkillassayError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    for s in result.skipped:
        err.print(f"[yellow]skipped[/yellow] {s}")
    if not result.changes:
        console.print(f"Regraded {result.regraded} run(s) of {job}: nothing changed.")
        return
    t = Table(
        title=f"Regraded {result.regraded} run(s) of {job}: {len(result.changes)} change(s)"
        + (" (dry run)" if dry_run else ""),
        title_justify="left",
    )
    for col in ("eval", "run", "what", "before", "after"):
        t.add_column(col)
    for c in result.changes:
        t.add_row(
            c.eval_id + (" (baseline)" if c.variant == "baseline" else ""),
            str(c.run_index),
            c.field,
            str(c.before),
            str(c.after),
        )
    console.print(t)


def _byte_size(text: str | None, option: str) -> int | None:
    """A size given as bytes or with a unit ("20MB", "500KiB")."""
    if text is None:
        return None
    from pydantic import TypeAdapter, ValidationError

    from skillassay.definitions.agent_eval import ChangeSize

    try:
        return int(TypeAdapter(ChangeSize).validate_python(text.strip()))
    except ValidationError:
        raise typer.BadParameter(
            f"{text!r} is not a size above zero (e.g. 20MB, 500KiB, 1048576)", param_hint=option
        ) from None
