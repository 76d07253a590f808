"""Quality gates: the harness runs the eval's build and test commands itself, in a copy of the modified
workspace with a timeout, in the app's own environment (``ProcessContext.app_env``), and records each as
passed, failed, unavailable (its tool could not start: command or module not found, nothing to test) or not
run. The ``gates`` grader turns them into a criterion: the share of the named gates that passed.

A gate that is a plain pytest line runs with the sentinel tests (``sentinels``) and is measured from its
report: a report the code under test forged fails the gate and disqualifies the run
(``pytest_run.forgery``)."""

from __future__ import annotations

from pathlib import Path

from skillassay.definitions.agent_eval import Criterion, GatesOptions, QualityGate
from skillassay.graders.base import (
    CommandOutcome,
    GateResult,
    GradeResult,
    HarnessFault,
    ProcessContext,
    command_text,
    copy_workspace,
    run_command,
    startup_failure,
)
from skillassay.graders.pytest_run import confirm_forgery, effective_outcome, run_pytest
from skillassay.graders.sentinels import pytest_args


def _status(gate: QualityGate, out: CommandOutcome) -> tuple[str, str]:
    if out.timed_out:
        return "failed", f"timed out after {gate.timeout:g}s"
    if out.not_found or out.exit_code == 127:
        return "unavailable", startup_failure(out) or "command not found"
    if out.exit_code in gate.unavailable_exit_codes:
        return "unavailable", f"exit code {out.exit_code} means nothing to measure"
    if out.exit_code == 0:
        return "passed", ""
    if why := startup_failure(out, collection=True):  # its tool never got to measure anything
        return "unavailable", f"{why} (exit code {out.exit_code})"
    return "failed", f"exit code {out.exit_code}"


def run_gates(gates: list[QualityGate], ctx: ProcessContext) -> dict[str, GateResult]:
    """Each gate in a copy of the modified workspace, in the modified app's environment. A gate that cannot be
    measured there is run on a copy of the pristine app too, in the pristine app's environment: if it can
    be measured on the pristine app, the agent's change is what made it unmeasurable (it deleted the tests,
    broke the command, dropped a dependency from the manifest), and the gate failed; if not, the harness
    cannot measure it, and the gate stays ``unavailable`` (a harness error for the run, never the agent's
    zero)."""
    results: dict[str, GateResult] = {}
    if not gates:
        return results
    app = ctx.app_env("modified")  # HarnessFault when even the pristine app's cannot be installed
    if app.error is not None:  # the agent's change broke the install: nothing it needs can pass
        for gate in gates:
            results[gate.id] = GateResult(
                id=gate.id,
                kind=gate.kind,
                command=command_text(gate.command),
                status="failed",
                reason=f"not run: {app.error.splitlines()[0]}",
                output=app.error[-2000:],
            )
        return results
    workdir = copy_workspace(ctx.modified_dir, ctx.work_dir / "gates")
    with ctx.sealed("gates", workdir, app) as box:
        return _run(gates, workdir, box, app, results, ctx)


def _run(
    gates: list[QualityGate], workdir, box, app, results: dict[str, GateResult], ctx: ProcessContext
) -> dict[str, GateResult]:
    pristine: Path | None = None
    for gate in gates:
        text = command_text(gate.command)
        blocked = [r for r in gate.requires if results.get(r) is None or results[r].status != "passed"]
        if blocked:
            results[gate.id] = GateResult(
                id=gate.id,
                kind=gate.kind,
                command=text,
                status="not_run",
                reason=f"needs {', '.join(blocked)} to pass first",
                blocked_by_failure=any(
                    results[r].status == "failed" or results[r].blocked_by_failure
                    for r in blocked
                    if r in results
                ),
            )
            continue
        out, forged, unplaced = _measure(gate, workdir, box, app, ctx)
        status, reason = _status(gate, out)
        if forged:
            status, reason = "failed", "; ".join(forged)
        elif unplaced:
            status, reason = "unavailable", unplaced
        if status == "unavailable":
            try:
                there_app = ctx.app_env("pristine")
            except HarnessFault as exc:
                there, why_there = "unavailable", str(exc).splitlines()[0]
            else:
                if pristine is None:
                    pristine = copy_workspace(ctx.pristine_dir, ctx.work_dir / "gates-pristine")
                with ctx.sealed("gates", pristine, there_app) as pristine_box:
                    there_out, _, there_unplaced = _measure(gate, pristine, pristine_box, there_app)
                there, why_there = (
                    ("unavailable", there_unplaced) if there_unplaced else _status(gate, there_out)
                )
            if there in ("passed", "failed"):
                status, reason = (
                    "failed",
                    (
                        f"{reason} on the modified app, while the pristine app can be measured "
                        f"({there}): the change made it unmeasurable"
                    ),
                )
            else:
                reason = (
                    f"{reason}; on the pristine app too ({why_there}); the app's environment: "
                    f"{app.describe()}"
                )
        results[gate.id] = GateResult(
            id=gate.id,
            kind=gate.kind,
            command=text,
            status=status,
            exit_code=out.exit_code,
            duration_s=round(out.duration_s, 3),
            output=out.output[-2000:],
            reason=reason,
        )
    return results


def _measure(
    gate: QualityGate, workdir: Path, box, app, ctx: ProcessContext | None = None
) -> tuple[CommandOutcome, list[str], str | None]:
    """Run ``gate``: a plain pytest line with the sentinel tests (its outcome as if they were not there),
    anything else as it is. With ``ctx`` (a run of the agent's code), also the evidence of a forged report.
    Last, why the workspace kept the harness from adding its sentinels (the gate is then unmeasurable
    there)."""
    if pytest_args(gate.command) is None:
        return run_command(gate.command, workdir, gate.timeout, gate.env, sandbox=box, app=app), [], None
    report = workdir.parent / f"{workdir.name}-{gate.id}.xml"
    run = run_pytest(gate.command, workdir, gate.timeout, report, sandbox=box, app=app, env=gate.env)
    forged = confirm_forgery(ctx, run, f"gate {gate.id}", gate.command, gate.timeout, gate.env) if ctx else []
    return effective_outcome(run), forged, run.blocked


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = GatesOptions.model_validate(criterion.options)
    ids = opts.gates or list(ctx.gates)
    if not ids:
        return GradeResult(fraction=None, evidence=["no quality gates defined"])
    measured = [ctx.gates[i] for i in ids if i in ctx.gates and ctx.gates[i].status in ("passed", "failed")]
    evidence = [
        f"gate {i}: {ctx.gates[i].status}" + (f" ({ctx.gates[i].reason})" if ctx.gates[i].reason else "")
        if i in ctx.gates
        else f"gate {i}: not run"
        for i in ids
    ]
    if not measured:
        return GradeResult(fraction=None, evidence=[*evidence, "no gate could be measured"])
    return GradeResult(fraction=sum(g.status == "passed" for g in measured) / len(ids), evidence=evidence)
