"""``skillassay check --controls``: grade every golden solution and negative control, and compare with what is
expected of it. A grader that changes what it measures shows up here before it shows up in a comparison.

Seam evals: the golden scores 100 on both layers, the pristine app 10 on the sandbox (it builds, does nothing else),
and each control what its ``<name>.expected.json`` says. Agent evals: each control gets its expected verdict.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from skillassay.definitions import load_suite
from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.graders.judge_config import require as require_judge
from skillassay.orchestrator.grading import GradeOutcome, Layers, check_points, grade
from skillassay.isolation.run_policy import run_policy
from skillassay.scoring.reasons import criterion_reason, short_reason
from skillassay.scoring.verdict import percent_text

TOLERANCE = 0.011  # category scores are rounded to two decimals


class ControlOutcome(BaseModel):
    eval_id: str
    control: str
    matches: bool
    expected: str
    actual: str
    mismatches: list[str] = Field(default_factory=list)


def compare(expected: ControlExpectation, got: GradeOutcome) -> list[str]:
    bad: list[str] = []
    cats = (got.rubric or {}).get("categories", {})
    for name, score in expected.rubric_categories.items():
        actual = cats.get(name, {}).get("score")
        if actual is None or abs(float(actual) - score) > TOLERANCE:
            bad.append(f"rubric {name}: expected {score}, got {actual}")
    total = got.rubric_total
    if expected.rubric_total_max is not None and (total is None or total > expected.rubric_total_max + 1e-9):
        bad.append(f"rubric total: expected at most {expected.rubric_total_max}, got {total}")
    if expected.rubric_total_min is not None and (total is None or total < expected.rubric_total_min - 1e-9):
        bad.append(f"rubric total: expected at least {expected.rubric_total_min}, got {total}")
    checks = check_points(got.sandbox)
    for name, points in expected.sandbox_checks.items():
        actual = checks.get(name)
        if actual is None or abs(float(actual) - points) > 1e-9:
            bad.append(f"sandbox {name}: expected {points:g}, got {actual}")
    if expected.sandbox_total is not None and (got.sandbox_total is None
                                               or abs(got.sandbox_total - expected.sandbox_total) > 1e-9):
        bad.append(f"sandbox total: expected {expected.sandbox_total:g}, got {got.sandbox_total}")
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
    """The evidence behind the first mismatch: of the layer it names (a sandbox total that is off: the sandbox check
    that failed), else of the run as a whole."""
    layer = mismatches[0].split()[0] if mismatches else ""
    if layer in ("rubric", "sandbox"):
        mine = [c for c in got.criteria if c.grader.startswith(f"{layer}:")]
        found = criterion_reason(mine)
        if found:
            return found
    return short_reason(failures=got.failures, criteria=got.criteria, verdict=got.verdict)


def _describe(got: GradeOutcome) -> str:
    parts = []
    if got.rubric_total is not None:
        parts.append(f"rubric {got.rubric_total:g}")
    if got.sandbox_total is not None:
        parts.append(f"sandbox {got.sandbox_total:g}")
    if got.verdict is not None:
        parts.append(got.verdict.label + f" {percent_text(got.verdict.score)}")
    if got.errors:
        parts.append("errors: " + "; ".join(got.errors))
    return ", ".join(parts) or "-"


def seam_cases(d: EvalDefinition, layers: Layers) -> list[tuple[str, Path, ControlExpectation]]:
    cases: list[tuple[str, Path, ControlExpectation]] = []
    want_sandbox = layers in ("sandbox", "both") and d.config is not None
    if d.golden_dir is not None:
        cases.append(("golden", d.golden_dir, ControlExpectation(
            description="the reference solution scores full marks",
            rubric_total_min=100 if layers != "sandbox" else None,
            sandbox_total=100 if want_sandbox else None)))
    if want_sandbox:
        cases.append(("pristine", d.app_dir, ControlExpectation(
            description="the untouched app builds and starts, and does nothing else", sandbox_total=10)))
    for c in d.controls:
        exp = c.expected
        if not want_sandbox:
            exp = exp.model_copy(update={"sandbox_checks": {}, "sandbox_total": None})
        if layers == "sandbox":
            exp = exp.model_copy(update={"rubric_categories": {}, "rubric_total_max": None, "rubric_total_min": None})
        cases.append((c.name, c.dir, exp))
    return cases


def run_controls(d: EvalDefinition, *, layers: Layers = "both", emulator=None,
                 judge_config: JudgeConfig | None = None) -> list[ControlOutcome]:
    if d.format == "native":
        from skillassay.graders.agent_controls import expected_label
        from skillassay.graders.agent_controls import run_controls as run_process_controls

        return [ControlOutcome(eval_id=d.id, control=o.name, matches=o.matches,
                               expected=expected_label(o.expected) + f" ({o.expected.description})",
                               actual=f"{o.actual} {percent_text(o.score)}", mismatches=list(o.mismatches))
                for o in run_process_controls(d, judge_config=judge_config)]
    out: list[ControlOutcome] = []
    for name, folder, exp in seam_cases(d, layers):
        with tempfile.TemporaryDirectory(prefix=f"skillassay-control-{d.id}-") as tmp:
            # sealed as `run` seals a run: the eval's registries reachable, so a cold cache installs
            got = grade(d, folder, Path(tmp), f"control-{d.id}-{name}", layers=layers, emulator=emulator,
                        policy=run_policy("bubblewrap", d, Path(tmp)))
        bad = compare(exp, got) + [f"grader error: {e}" for e in got.errors]
        why = _why(bad, got) if bad else None
        if why:  # what the grader saw, not only the number that differs (the failing check's evidence)
            bad.append(f"why: {why}")
        out.append(ControlOutcome(eval_id=d.id, control=name, matches=not bad, expected=exp.description,
                                  actual=_describe(got), mismatches=bad))
    return out


def run_all_controls(path: Path, console: Console, *, layers: Layers = "both",
                     judge_config: JudgeConfig | None = None, jobs: int = 1) -> bool:
    """Grade every eval's golden and controls, ``jobs`` evals at once (the sandbox's waits dominate, not the CPU),
    and print one table in the suite's order."""
    evals = load_suite(path)
    require_judge(evals, judge_config)  # an llm_judge criterion needs one: refused before anything is graded
    emulator = None
    if layers != "rubric" and any(e.config is not None for e in evals):
        from skillassay.services import service_class

        seam_emulator = service_class("seam")

        emulator = seam_emulator(async_delay=0.5, automation_delay=0.5).start(host="127.0.0.1", port=0)
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
        t.add_row(o.eval_id, o.control, o.expected, o.actual + ("\n" + "\n".join(o.mismatches) if o.mismatches else ""),
                  "[green]✓[/green]" if o.matches else "[red]✗[/red]")
    console.print(t)
    return all(o.matches for o in outcomes)
