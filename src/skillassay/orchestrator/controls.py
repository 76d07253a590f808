"""``skillassay check --controls``: grade every golden solution and negative control, and compare with what is
expected of it. A grader that changes what it measures shows up here before it shows up in a comparison.

What each control is and what it must get is its eval's kind's (``EvalKind.control_cases``, ``own_controls``).
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from skillassay import plugins
from skillassay.definitions import load_suite
from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.graders.judge_config import require as require_judge
from skillassay.isolation.run_policy import run_policy
from skillassay.kinds.base import GROUP, ControlOutcome, EvalKind, kind_of, load_kind
from skillassay.orchestrator.grading import GradeOutcome, Layers, grade
from skillassay.scoring.reasons import criterion_reason, short_reason
from skillassay.scoring.verdict import percent_text


def compare(expected: ControlExpectation, got: GradeOutcome) -> list[str]:
    """What ``got`` misses of ``expected``: each kind's own figures (``EvalKind.compare_control``), then the
    verdict."""
    bad: list[str] = [
        m for name in plugins.names(GROUP) for m in load_kind(name).compare_control(expected, got)
    ]
    if expected.verdict is not None:
        actual_verdict = None if got.verdict is None else ("pass" if got.verdict.passed else "fail")
        if actual_verdict != expected.verdict:
            bad.append(f"verdict: expected {expected.verdict}, got {actual_verdict}")
    if expected.disqualified is not None:
        actual_dq = None if got.verdict is None else got.verdict.disqualified
        if actual_dq != expected.disqualified:
            bad.append(f"disqualified: expected {expected.disqualified}, got {actual_dq}")
    return bad


def _why(mismatches: list[str], got: GradeOutcome) -> str | None:
    """The evidence behind the first mismatch: of the layer it names (a sandbox total that is off: the sandbox
    check that failed), else of the run as a whole."""
    layer = mismatches[0].split()[0] if mismatches else ""
    if layer in ("rubric", "sandbox"):
        mine = [c for c in got.criteria if c.grader.startswith(f"{layer}:")]
        found = criterion_reason(mine)
        if found:
            return found
    return short_reason(failures=got.failures, criteria=got.criteria, verdict=got.verdict)


def _describe(kind: EvalKind, got: GradeOutcome) -> str:
    parts = kind.figures(got)
    if got.verdict is not None:
        parts.append(got.verdict.label + f" {percent_text(got.verdict.score)}")
    if got.errors:
        parts.append("errors: " + "; ".join(got.errors))
    return ", ".join(parts) or "-"


def run_controls(
    d: EvalDefinition, *, layers: Layers = "both", emulator=None, judge_config: JudgeConfig | None = None
) -> list[ControlOutcome]:
    kind = kind_of(d)
    own = kind.own_controls(d, judge_config)
    if own is not None:
        return own
    out: list[ControlOutcome] = []
    for case in kind.control_cases(d, layers):
        name, folder, exp = case.name, case.folder, case.expected
        with tempfile.TemporaryDirectory(prefix=f"skillassay-control-{d.id}-") as tmp:
            # sealed as `run` seals a run: the eval's registries reachable, so a cold cache installs
            got = grade(
                d,
                folder,
                Path(tmp),
                f"control-{d.id}-{name}",
                layers=layers,
                emulator=emulator,
                policy=run_policy("bubblewrap", d, Path(tmp)),
            )
        bad = compare(exp, got) + [f"grader error: {e}" for e in got.errors]
        why = _why(bad, got) if bad else None
        if why:  # what the grader saw, not only the number that differs (the failing check's evidence)
            bad.append(f"why: {why}")
        out.append(
            ControlOutcome(
                eval_id=d.id,
                control=name,
                matches=not bad,
                expected=exp.description,
                actual=_describe(kind, got),
                mismatches=bad,
            )
        )
    return out


def run_all_controls(
    path: Path,
    console: Console,
    *,
    layers: Layers = "both",
    judge_config: JudgeConfig | None = None,
    jobs: int = 1,
) -> bool:
    """Grade every eval's golden and controls, ``jobs`` evals at once (the sandbox's waits dominate, not the
    CPU), and print one table in the suite's order."""
    evals = load_suite(path)
    require_judge(evals, judge_config)  # an llm_judge criterion needs one: refused before anything is graded
    emulator = None
    needed = sorted({s for e in evals for s in kind_of(e).services(e, layers)})
    if needed:  # the one emulator the graders share (the Seam kind's)
        from skillassay.services import service_class

        emulator = service_class(needed[0])(async_delay=0.5, automation_delay=0.5).start(
            host="127.0.0.1", port=0
        )

    def one(d: EvalDefinition) -> list[ControlOutcome]:
        console.print(f"[dim]controls of {d.id}...[/dim]")
        return run_controls(d, layers=layers, emulator=emulator, judge_config=judge_config)

    outcomes: list[ControlOutcome] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for got in pool.map(one, evals):  # in the suite's order, whatever finishes first
                outcomes.extend(got)
    finally:
        if emulator is not None:
            emulator.stop()
    t = Table(title="Golden solutions and negative controls", title_justify="left")
    for col in ("eval", "control", "expected", "actual", "ok"):
        t.add_column(col, overflow="fold")
    for o in outcomes:
        t.add_row(
            o.eval_id,
            o.control,
            o.expected,
            o.actual + ("\n" + "\n".join(o.mismatches) if o.mismatches else ""),
            "[green]✓[/green]" if o.matches else "[red]✗[/red]",
        )
    console.print(t)
    return all(o.matches for o in outcomes)
