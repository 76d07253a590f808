"""The trigger kind: an ordinary run without graders; its decision is read from the transcript."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillassay.definitions.models import EvalDefinition
from skillassay.errors import Problem
from skillassay.kinds.base import (
    EvalKind,
    GradeOutcome,
    GradeRequest,
    JobAsk,
    JobComparison,
    JobSettings,
    JobSummary,
    SuiteListing,
)
from skillassay.kinds.trigger import decision
from skillassay.store.records import RunRecord
from skillassay.triggers import TriggerBudget


class TriggerKind(EvalKind):
    name = "trigger"
    format = "trigger"

    def problems(self, source: Path, suite_dir: Path) -> list[Problem]:
        """Every problem of a trigger suite file (``definitions.inspect_trigger``)."""
        from skillassay.kinds.trigger.definitions import inspect_trigger

        return inspect_trigger(source, suite_dir)[1]

    def prompts(self, source: Path, suite_dir: Path) -> list[EvalDefinition]:
        """The suite's prompts, each an eval of this kind."""
        from skillassay.kinds.trigger.definitions import load_trigger

        return list(load_trigger(source, suite_dir).prompts)

    def suite_files(self, definition: EvalDefinition) -> list[Path]:
        return [Path(definition.source)]  # the suite's file: its prompts

    def reload(self, definition: EvalDefinition, suite: Path, suite_here: Path) -> EvalDefinition:
        """One prompt of a suite: nothing to reload (the suite names its skill, which travels as the job's
        skill); its files are moved to the copy."""
        moved = {}
        for name in ("source", "suite_dir", "fixture_dir", "app_dir"):
            path = Path(getattr(definition, name)).resolve()
            if path.is_relative_to(suite):
                moved[name] = suite_here / path.relative_to(suite)
        return definition.model_copy(update=moved)

    def app_dir(self, definition: EvalDefinition, base: Path) -> Path:
        return decision.app_dir(definition, base)

    def default_runs(self, definition: EvalDefinition) -> int:
        return definition.trigger.runs if definition.trigger is not None else 1  # the suite's runs per prompt

    def agent_budget(self, definition: EvalDefinition) -> TriggerBudget | None:
        return definition.trigger.budget if definition.trigger is not None else None

    def grades_change(self, definition: EvalDefinition) -> bool:
        return False  # its decision is read from the transcript; an empty change is no failure

    def canary_skip(self, definition: EvalDefinition) -> str | None:
        return "a trigger prompt has no golden"

    def brings_skill(self, suite: Path) -> bool:
        from skillassay.kinds.trigger.definitions import is_trigger_source

        return is_trigger_source(suite)  # the suite names its skill

    def job_settings(self, evals: list[EvalDefinition], asked: JobAsk) -> JobSettings | str:
        """A trigger job runs one trigger suite with its skill (or --skill, e.g. another version of it),
        natively installed, with an agent whose transcript shows its tool calls; --runs defaults to the
        suite's."""
        refused = _refusal(evals, asked)
        if refused is not None:
            return refused
        spec = evals[0].trigger
        assert spec is not None
        return JobSettings(skill=(asked.skill or spec.skill_dir).resolve(), runs=asked.runs or spec.runs)

    def grade(self, request: GradeRequest) -> GradeOutcome:
        """The decision (``decision.decide``): the transcript's skill use against the prompt's expectation.
        The workspace is left as it is (the run keeps it when asked)."""
        outcome, criteria, verdict = decision.decide(request.definition, request.skill_use, request.stopped)
        return GradeOutcome(trigger=outcome, criteria=criteria, verdict=verdict)

    # --- job summaries and reports (issue 25, item 1: how a kind summarises and reports) ---
    summarises_jobs = True
    job_noun = "a trigger suite"

    def owns_runs(self, runs: Sequence[RunRecord]) -> bool:
        return any(r.trigger is not None for r in runs)

    def job_summary(self, runs: Sequence[RunRecord]) -> JobSummary:
        from skillassay.kinds.trigger.scoring import summarize_triggers, trigger_points
        from skillassay.kinds.trigger.tables import TriggerJobSummary

        return TriggerJobSummary(summarize_triggers(trigger_points(runs)))

    def compare_jobs(
        self, a_runs: Sequence[RunRecord], b_runs: Sequence[RunRecord], a: str, b: str
    ) -> JobComparison:
        from skillassay.kinds.trigger.tables import TriggerJobComparison, compare_trigger_runs

        return TriggerJobComparison(compare_trigger_runs(a_runs, b_runs, a, b))

    def failed_criterion(self, run: RunRecord) -> str | None:
        """A trigger run has one criterion: the decision."""
        t = run.trigger
        if t is None:
            return None
        text = "missed: the skill was not used" if t.should_trigger else "false trigger: the skill was used"
        return text + f" ({t.category} prompt)"

    # --- listing (issue 25, item 1: ``list`` asks the kinds for their suites) ---
    def lists_only(self, path: Path) -> bool:
        return self.brings_skill(path)  # a suite's file, or the trigger-evals folder: nothing else in it

    def suite_listing(self, path: Path) -> SuiteListing:
        from skillassay.kinds.trigger.definitions import load_triggers
        from skillassay.kinds.trigger.listing import TriggerSuiteListing

        return TriggerSuiteListing(load_triggers(path))

    # --- report templates (issue 25, item 1: a kind brings its own markup to the report's pages) ---
    template_package = "skillassay.kinds.trigger"
    report_template = "report.html"  # the job's recall, precision, F1; two versions compared prompt by prompt


def _refusal(evals: list[EvalDefinition], asked: JobAsk) -> str | None:
    """Why a job of ``evals`` asked so cannot measure triggering (None: it can)."""
    from skillassay.agents import agent_class

    suites = sorted({e.trigger.suite_id for e in evals if e.trigger})
    if len(suites) > 1:
        return (
            f"a trigger job runs one trigger suite; {asked.suite} holds {', '.join(suites)}: "
            "name one suite file"
        )
    if not all(e.trigger for e in evals):
        return "trigger suites run on their own: name the suite file"
    if asked.baseline:
        return (
            "--baseline: a trigger suite measures whether the skill is picked up, which needs the "
            "skill; compare two versions of it with two jobs (--skill) and `skillassay compare`"
        )
    if asked.skill_mode != "native":
        return (
            "--skill-mode system-prompt: a skill given as the system prompt cannot be picked up or "
            "left alone; trigger suites install it where the agent discovers it (native)"
        )
    if not agent_class(asked.agent).reports_skill_use:
        return (
            f"--agent {asked.agent}: its transcript does not show tool calls, so whether it used "
            "the skill cannot be read; trigger suites need claude-code or codex"
        )
    return None
