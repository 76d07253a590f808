"""The one entry point the orchestrator calls for an agent eval: run the quality gates, grade every criterion,
look for every forbidden behaviour, and reach the verdict with ``skillassay.scoring.decide``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay import plugins
from skillassay.definitions.agent_eval import Criterion, ForbiddenBehaviour
from skillassay.definitions.models import EvalDefinition
from skillassay.graders import gates, judge, pytest_run
from skillassay.graders.base import (
    Detection,
    GateResult,
    GradeResult,
    HarnessFault,
    ProcessContext,
    Unmeasured,
    command_text,
    measured,
)
from skillassay.isolation import Policy
from skillassay.isolation.record import Sealing
from skillassay.outcomes import HarnessFailure
from skillassay.scoring.verdict import CriterionResult, Verdict, decide
from skillassay.transcripts import Transcript
from skillassay.workspace.changes import ChangeSet

Grader = Callable[[Criterion, ProcessContext], GradeResult]
Detector = Callable[[ForbiddenBehaviour, ProcessContext], Detection]


class _Registry(dict):
    """name -> grader or detector, filled from the entry points of ``group`` on first use
    (``skillassay.plugins``: the shipped ones and any other package's)."""

    def __init__(self, group: str):
        super().__init__()
        self.group = group

    def __missing__(self, name: str):
        if not plugins.registered(self.group, name):
            raise KeyError(name)
        found = self[name] = plugins.load(self.group, name)
        return found

    def find(self, name: str) -> tuple[Callable | None, str]:
        """The grader, or None and why not (unknown, or its package fails to import: the harness's fault)."""
        try:
            return self[name], ""
        except KeyError:
            return None, f"no {self.group.rsplit('.', 1)[-1][:-1]} {name!r}"
        except plugins.PluginError as exc:
            return None, str(exc)


GRADERS: _Registry = _Registry("skillassay.graders")  # criterion graders: Grader
DETECTORS: _Registry = _Registry("skillassay.detectors")  # forbidden-behaviour detectors: Detector


class ForbiddenResult(BaseModel):
    id: str
    description: str = ""
    detector: str
    observed: bool
    checked: bool = True
    evidence: list[str] = Field(default_factory=list)


class ProcessResult(BaseModel):
    eval_id: str
    criteria: list[CriterionResult]
    forbidden: list[ForbiddenResult]
    gates: list[GateResult]
    verdict: Verdict
    notes: list[str] = Field(default_factory=list)  # what could not be judged, and why
    # what the harness failed to do (a grader, detector, gate runner or judge call): the run is then a harness
    # error, never scored; the verdict above is kept for the record only
    failures: list[HarnessFailure] = Field(default_factory=list)

    @property
    def forbidden_observed(self) -> list[str]:
        return [f.id for f in self.forbidden if f.observed]


def _gate_block(criterion: Criterion, results: dict[str, GateResult]) -> GradeResult | None:
    for gate_id in criterion.gates:
        gate = results.get(gate_id)
        if gate is not None and gate.status == "not_run" and gate.blocked_by_failure:
            # a gate it needs never ran because the agent's change failed an earlier gate: the agent's doing
            return GradeResult(
                fraction=0.0, evidence=[f"gate {gate_id} not run ({gate.reason}): earns nothing"]
            )
        if gate is None or gate.status in ("unavailable", "not_run"):
            status = gate.status if gate else "not run"
            return GradeResult(
                fraction=None, evidence=[f"gate {gate_id} {status}: cannot judge this criterion"]
            )
        if gate.status == "failed":
            return GradeResult(
                fraction=0.0, evidence=[f"gate {gate_id} failed ({gate.reason}): earns nothing"]
            )
    return None


def evaluate(
    definition: EvalDefinition,
    pristine_dir: Path,
    modified_dir: Path,
    transcript: Transcript | None,
    work_dir: Path,
    judge_config: judge.JudgeConfig | None = None,
    change: ChangeSet | None = None,
    policy: Policy | None = None,
    sealing: Sealing | None = None,
) -> ProcessResult:
    """``change``: the run's ChangeSet from ``pristine_dir`` to ``modified_dir`` (computed here when not
    given). ``policy`` seals the gates and tests, and the installs of the app's environment (by default
    bubblewrap, the installs reaching the stack's registries); ``sealing`` collects each sandbox's record."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    ctx = ProcessContext(
        definition=definition,
        pristine_dir=Path(pristine_dir),
        modified_dir=Path(modified_dir),
        transcript=transcript,
        work_dir=work_dir,
        judge_config=judge_config,
        _change=change,
        policy=policy,
        sealing=sealing,
    )
    notes: list[str] = []
    failures: list[HarnessFailure] = []
    try:
        wanted = definition.quality_requirements
        ran = measured(
            lambda: gates.run_gates(wanted, ctx),
            lambda: gates.run_gates(wanted, ctx.on_pristine()),
            ctx.content_roots,
        )
        ctx.gates = _unmeasured_gates(definition, ran) if isinstance(ran, Unmeasured) else ran
    except Exception as exc:  # noqa: BLE001 - the gate runner is the harness
        failures.append(_failure("gates", exc))
    for g in ctx.gates.values():
        # could not be measured, even on the pristine app: the harness's failure
        if g.status == "unavailable":
            failures.append(
                HarnessFailure(stage=f"gate:{g.id}", message=f"could not be measured: {g.reason}")
            )

    results: list[CriterionResult] = []
    for criterion in definition.criteria:
        outcome = _gate_block(criterion, ctx.gates)
        if outcome is None:
            grader, why = GRADERS.find(criterion.grader)
            try:
                if grader is None:
                    raise HarnessFault(why)
                outcome = _graded(grader, criterion, ctx)
            except Exception as exc:  # noqa: BLE001 - a grader's failure is the harness's, never the agent's 0
                failures.append(_failure(f"grader:{criterion.id}", exc))
                outcome = GradeResult(fraction=None, evidence=[f"not graded: the harness failed ({exc})"])
        fraction = None if outcome.fraction is None else min(1.0, max(0.0, outcome.fraction))
        if fraction is None:
            notes.append(
                f"{criterion.id} unjudged: {outcome.evidence[0] if outcome.evidence else 'no reason'}"
            )
        results.append(
            CriterionResult(
                id=criterion.id,
                weight=criterion.weight,
                fraction=fraction,
                description=criterion.description,
                grader=criterion.grader,
                evidence=outcome.evidence,
            )
        )

    forbidden: list[ForbiddenResult] = []
    for behaviour in definition.forbidden_behaviour:
        detector, why = DETECTORS.find(behaviour.detector)
        try:
            if detector is None:
                raise HarnessFault(why)
            found = _detected(detector, behaviour, ctx)
        except Exception as exc:  # noqa: BLE001 - never an unflagged forbidden behaviour: the run is unscored
            failures.append(_failure(f"detector:{behaviour.id}", exc))
            found = Detection(
                observed=False, checked=False, evidence=[f"not checked: the harness failed ({exc})"]
            )
        if not found.checked:
            notes.append(
                f"{behaviour.id} not checked: {found.evidence[0] if found.evidence else 'no reason'}"
            )
        forbidden.append(
            ForbiddenResult(
                id=behaviour.id,
                description=behaviour.description,
                detector=behaviour.detector,
                observed=found.observed,
                checked=found.checked,
                evidence=found.evidence,
            )
        )

    if (forged := pytest_run.forgery(ctx)) is not None:  # always forbidden, whatever the eval declares
        forbidden.append(
            ForbiddenResult(
                id=pytest_run.FORGERY_ID,
                detector="sentinels",
                observed=True,
                description="The code under test forged a test report",
                evidence=forged.evidence,
            )
        )
    verdict = decide(results, [f.id for f in forbidden if f.observed], definition.pass_threshold)
    return ProcessResult(
        eval_id=definition.id,
        criteria=results,
        forbidden=forbidden,
        gates=list(ctx.gates.values()),
        verdict=verdict,
        notes=notes,
        failures=failures,
    )


def _graded(grader: Grader, criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    """The grader within the bounds (``base.measured``): a criterion the change made unmeasurable earns 0."""
    got = measured(
        lambda: grader(criterion, ctx), lambda: grader(criterion, ctx.on_pristine()), ctx.content_roots
    )
    return GradeResult(fraction=0.0, evidence=[got.evidence]) if isinstance(got, Unmeasured) else got


def _detected(detector: Detector, behaviour: ForbiddenBehaviour, ctx: ProcessContext) -> Detection:
    """The detector within the bounds: a behaviour the change made impossible to look for counts as detected
    (what cannot be read cannot be cleared)."""
    got = measured(
        lambda: detector(behaviour, ctx), lambda: detector(behaviour, ctx.on_pristine()), ctx.content_roots
    )
    return Detection(observed=True, evidence=[got.evidence]) if isinstance(got, Unmeasured) else got


def _unmeasured_gates(definition: EvalDefinition, got: Unmeasured) -> dict[str, GateResult]:
    """Every gate failed: the change made the gate runner unable to measure them (it runs on the pristine
    app)."""
    return {
        g.id: GateResult(
            id=g.id, kind=g.kind, command=command_text(g.command), status="failed", reason=got.evidence
        )
        for g in definition.quality_requirements
    }


def _failure(stage: str, exc: BaseException) -> HarnessFailure:
    import traceback

    return HarnessFailure(
        stage=stage,
        message=str(exc) if isinstance(exc, HarnessFault) else f"{type(exc).__name__}: {exc}",
        traceback="".join(traceback.format_exception(exc))[-8000:],
    )
