"""What the trial and the job do differently for a trigger-suite prompt: where its workspace comes from and
its decision (what every skill run records of the skill is ``skillassay.triggers.observed_use``).

A trigger run is an ordinary run (fresh workspace, the agent with the skill installed where its CLI discovers
it, one run folder, run.json written last) without graders: its decision is read from the transcript
(``skillassay.triggers``), and its verdict is whether that decision was the expected one.
"""

from __future__ import annotations

from pathlib import Path

from skillassay.definitions.models import EvalDefinition
from skillassay.errors import SkillassayError
from skillassay.scoring.verdict import CriterionResult, Verdict
from skillassay.scoring.verdict import decide as decide_verdict
from skillassay.store.records import TriggerOutcome
from skillassay.triggers import SkillUse, triggered

CRITERION = "trigger_decision"


def app_dir(definition: EvalDefinition, scratch: Path) -> Path:
    """The folder the workspace is copied from: the fixture's app, or an empty folder (a prompt without a
    fixture starts in an empty repository)."""
    if definition.trigger is not None and definition.trigger.fixture is None:
        empty = scratch / "empty-app"
        empty.mkdir(parents=True, exist_ok=True)
        return empty
    return definition.app_dir


def decide(
    definition: EvalDefinition, use: SkillUse | None, stopped: str | None
) -> tuple[TriggerOutcome, list[CriterionResult], Verdict]:
    """The trigger run's outcome, its one criterion and its verdict (passed: the decision was the expected
    one).
    """
    spec = definition.trigger
    assert spec is not None
    if use is None:
        raise SkillassayError(
            "the agent's transcript does not show its tool calls, so whether it used the skill "
            "cannot be read (trigger evals need claude-code or codex)"
        )
    hit = triggered(use, spec.budget)
    correct = hit == spec.should_trigger
    outcome = TriggerOutcome(
        suite=spec.suite_id,
        prompt=spec.prompt_id,
        category=spec.category,
        should_trigger=spec.should_trigger,
        triggered=hit,
        correct=correct,
        budget=spec.budget,
        stopped=stopped,
    )
    if use.first is not None:
        f = use.first
        where = f"turn {f.turn}" if f.turn is not None else f"tool call {f.call_index + 1}"
        evidence = [f"first use: {f.how} by {f.tool} at {where} ({f.evidence})"]
        if not hit:
            evidence.append("after the budget: not counted")
    else:
        evidence = [f"not used in {use.tool_calls} tool call(s)"]
    expected = "trigger" if spec.should_trigger else "not trigger"
    criterion = CriterionResult(
        id=CRITERION,
        weight=1.0,
        fraction=1.0 if correct else 0.0,
        grader="trigger",
        description=f"the skill should {expected} ({spec.category} prompt)",
        evidence=evidence,
    )
    return outcome, [criterion], decide_verdict([criterion], threshold=1.0)
