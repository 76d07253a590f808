"""``skillassay check --mutants``: run the mutation check over a suite, print it, keep it for the report."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from skillassay.definitions import load_suite
from skillassay.graders.judge_config import JudgeConfig
from skillassay.orchestrator.mutants.run import run_mutation
from skillassay.store import mutants as store


def _layer_cell(outcome) -> str:
    if outcome is None:
        return "-"
    score = "" if outcome.mutant is None else f" {outcome.golden:g}→{outcome.mutant:g}"
    if outcome.caught is None:
        verdict = "not graded"
    elif outcome.expected == "equal":
        verdict = "equal" if outcome.ok else "marked down"
    else:
        verdict = "caught" if outcome.caught else "missed"
    mark = "[green]✓[/green]" if outcome.ok else "[red]✗[/red]"
    return f"{mark} {verdict}{score}"


def check_mutants(
    path: Path, *, jobs: int, results: Path, console: Console, judge_config: JudgeConfig | None = None
) -> bool:
    definitions = [d for d in load_suite(path) if d.golden_dir is not None]
    report = run_mutation(
        definitions,
        suite=str(path),
        jobs=jobs,
        judge_config=judge_config,
        progress=lambda line: console.print(f"[dim]{line}[/dim]", highlight=False),
    )
    written = store.write(report, results)
    for e in report.evals:
        title = f"{e.eval_id}: mutation score " + (f"{e.score:.0%}" if e.score is not None else "-")
        t = Table(title=title, title_justify="left")
        layers = sorted({layer for m in e.mutants for layer in m.layers})
        for col in ("mutant", *layers, "result"):
            t.add_column(col, overflow="fold")
        for m in e.mutants:
            verdict = (
                ("[red]harness error[/red]: " + m.error)
                if m.error
                else (
                    "[red]BLIND SPOT[/red]"
                    if m.blind_spot
                    else ("[green]as expected[/green]" if m.ok else "[red]not as expected[/red]")
                )
            )
            t.add_row(
                f"{m.mutant_id}\n[dim]{m.description}[/dim]",
                *[_layer_cell(m.layers.get(x)) for x in layers],
                verdict,
            )
        console.print(t)
        if e.error:
            console.print(f"[red]error[/red] {e.eval_id}: {e.error}")
        for m in e.mutants:
            for line in m.disagreements:
                what = escape(f"{e.eval_id} `{m.mutant_id}`: {line}")
                console.print(f"[yellow]static/trace disagreement[/yellow] {what}", highlight=False)
        for note in e.not_derived:
            console.print(f"[yellow]not derived[/yellow] {e.eval_id}: {note}", highlight=False)
    blind = [(e.eval_id, m.mutant_id) for e in report.evals for m in e.mutants if m.blind_spot]
    wrong = [
        (e.eval_id, m.mutant_id) for e in report.evals for m in e.mutants if not m.ok and not m.blind_spot
    ]
    for eval_id, mutant_id in blind:
        console.print(f"[red]blind spot[/red] {eval_id}: no layer caught `{mutant_id}`")
    for eval_id, mutant_id in wrong:
        console.print(f"[red]not as expected[/red] {eval_id}: `{mutant_id}`")
    total = sum(len(e.mutants) for e in report.evals)
    console.print(
        f"{'[green]ok[/green]' if report.ok else '[red]failed[/red]'} {total} mutant(s) of "
        f"{len(report.evals)} eval(s) in {report.duration_s:g} s (--jobs {jobs}); written to {written}"
    )
    return report.ok
