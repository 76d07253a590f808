"""CLI commands about definitions: ``list`` and ``check``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from skillassay.cli.options import (
    JUDGE_BASE_URL,
    JUDGE_KEY_ENV,
    JUDGE_MODEL,
    JUDGE_PROVIDER,
    judge_from_options,
)
from skillassay.errors import DefinitionError, SkillassayError

if TYPE_CHECKING:
    from skillassay.definitions.models import EvalDefinition

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py

console = Console()
err_console = Console(stderr=True)


PATH_ARG = typer.Argument(
    Path("evals"),
    help="A suite folder (holding rubric.json, fixtures/ and agent-evals/), one fixture folder, or one "
    "definition file.",
)


def print_definition_error(exc: DefinitionError) -> None:
    for p in exc.problems:
        err_console.print(f"[red]error:[/red] {p}", highlight=False, soft_wrap=True)


@commands.command("list")
def list_evals(
    path: Path = PATH_ARG,
    api_path: str | None = typer.Option(
        None, "--api-path", help="Only evals whose expected Seam API path is this."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List every eval under PATH with its API path, stack and app port, and every trigger suite with its
    skill and prompts (a trigger suite's file, or the trigger-evals folder: its prompts one by one)."""
    from skillassay.definitions import load_suite, select
    from skillassay.definitions.formats import api_path_aliases, api_paths
    from skillassay.kinds.base import registered

    known = api_paths()
    if api_path and api_path not in (*known, *api_path_aliases()):
        err_console.print(f"[red]error:[/red] --api-path {api_path!r}: expected one of {', '.join(known)}")
        raise typer.Exit(2)
    kinds = registered()
    alone = any(k.lists_only(path) for k in kinds)  # only one kind's suites: no evals table
    try:
        evals = [] if alone else select(load_suite(path), api_path=api_path)
        listings = [] if api_path else [s for k in kinds if (s := k.suite_listing(path)) is not None]
    except DefinitionError as exc:
        print_definition_error(exc)
        raise typer.Exit(2) from None
    if as_json:
        rows = [_eval_row(e) for e in evals] + [row for s in listings for row in s.rows()]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not alone:
        console.print(_evals_table(evals, path))
    for listing in listings:
        for table in listing.tables(path, alone):
            console.print(table)


def _eval_row(e: EvalDefinition) -> dict[str, object]:
    """An eval's JSON row (``list --json``)."""
    return {
        "id": e.id,
        "title": e.title,
        "format": e.format,
        "api_path": e.api_path,
        "stack": e.stack,
        "app_port": e.app_port,
        "status": e.status,
        "source": str(e.source),
    }


def _evals_table(evals: list[EvalDefinition], path: Path) -> Table:
    table = Table(title=f"{len(evals)} eval(s) in {path}")
    for col in ("eval", "API path", "stack", "port", "format", "status"):
        table.add_column(col, overflow="fold")
    for e in evals:
        table.add_row(e.id, e.api_path or "-", e.stack, str(e.app_port or "-"), e.format, e.status)
    return table


@commands.command("check")
def check(
    path: Path = PATH_ARG,
    controls: bool = typer.Option(
        False,
        "--controls",
        help="Also grade every golden solution and negative control and fail when a result differs from the "
        "expected one written beside it (builds and runs the apps: slower).",
    ),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    judge_model: str | None = JUDGE_MODEL,
    judge_provider: str | None = JUDGE_PROVIDER,
    judge_base_url: str | None = JUDGE_BASE_URL,
    judge_key_env: str | None = JUDGE_KEY_ENV,
    mutants: bool = typer.Option(
        False,
        "--mutants",
        help="Also test each eval with mutants of its golden solution (a call commented out, moved into a "
        "string or "
        "an uncalled function, behind a constant-false condition, the cancel/update handler cut off, a "
        "required "
        "parameter dropped, the wrong API path, the calls rewritten as raw HTTP), graded by every layer: "
        "fails "
        "when a layer misses a mutant it should catch (a blind spot) or marks a correct rewrite down.",
    ),
    exploits: bool = typer.Option(
        False,
        "--exploits",
        help="Also play the library of scripted exploit agents against each eval (reading shipped answers, "
        "forging "
        "test reports, shadowing the test runner, instructions to an LLM judge, output matching a weak "
        "check, "
        "forged result files, turning a loss into an unscored run), sealed, as real runs: fails when an "
        "exploit passes or leaves its run unscored (docs/exploits.md).",
    ),
    fixtures: str | None = typer.Option(
        None, "--fixtures", help="Comma-separated eval ids --exploits plays against (default: all)."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        show_default=False,
        help="Evals whose controls are graded at once (--controls), mutants (--mutants) or "
        "exploit runs (--exploits). Default: SKILLASSAY_JOBS, else twice this machine's CPUs, at "
        "most 4.",
    ),
    results: Path = typer.Option(
        Path("results"),
        "--results",
        help="Where --mutants writes mutation.json and --exploits exploits.json (the "
        "report's Evals page shows both).",
    ),
) -> None:
    """Validate every definition under PATH. Each problem names the file, the field (a JSON pointer) and what
    was expected. Exit code 0 when all is well, 2 when any definition has an error (or a control
    misbehaves, or a mutant is not caught as its class expects, or an exploit gets through)."""
    from skillassay.definitions.check import check_path

    problems = check_path(path)
    errors = [p for p in problems if p.severity == "error" or strict]
    for p in problems:
        colour = "red" if p in errors else "yellow"
        label = "error" if p in errors else "warning"
        err_console.print(f"[{colour}]{label}:[/{colour}] {p}", highlight=False, soft_wrap=True)
    if errors:
        err_console.print(f"{len(errors)} error(s) in the definitions under {path}")
        raise typer.Exit(2)
    if jobs is None:
        from skillassay.orchestrator.config import default_jobs

        jobs = default_jobs()
    if controls:
        from skillassay.orchestrator.controls import run_all_controls

        judge = judge_from_options(judge_model, judge_provider, judge_base_url, judge_key_env)
        try:
            ok = run_all_controls(path, console, judge_config=judge, jobs=jobs)
        except SkillassayError as exc:
            err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        if not ok:
            raise typer.Exit(2)
    if mutants:
        from skillassay.orchestrator.mutants.command import check_mutants

        judge = judge_from_options(judge_model, judge_provider, judge_base_url, judge_key_env)
        if not check_mutants(path, jobs=jobs, results=results, console=console, judge_config=judge):
            raise typer.Exit(2)
    if exploits:
        from skillassay.orchestrator.exploits.table import check_exploits

        chosen = [f.strip() for f in fixtures.split(",") if f.strip()] if fixtures else None
        try:
            ok = check_exploits(path, jobs=jobs, results=results, console=console, fixtures=chosen)
        except SkillassayError as exc:
            err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        if not ok:
            raise typer.Exit(2)
    console.print(
        f"[green]ok[/green] definitions under {path} are valid"
        + (f" ({len(problems)} warning(s))" if problems else "")
    )
