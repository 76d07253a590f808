"""A plan eval: the generic definition with the Seam layers' inputs (the plan's three files as written)."""

from __future__ import annotations

from skillassay.definitions.app import RunSteps
from skillassay.definitions.models import EvalDefinition
from skillassay.seam.config import PlanEvalConfig
from skillassay.seam.plan import AnswerKey, Rubric


class SeamEval(EvalDefinition):
    answer_key: AnswerKey | None = None
    rubric: Rubric | None = None
    config: PlanEvalConfig | None = None

    @property
    def has_sandbox(self) -> bool:
        return self.config is not None

    @property
    def run_steps(self) -> RunSteps | None:
        return self.config.run if self.config is not None else None


def seam_eval(definition: EvalDefinition) -> SeamEval:
    """``definition`` as the plan eval it is (the Seam kind grades no other)."""
    if not isinstance(definition, SeamEval):
        raise TypeError(f"{definition.id}: not a plan eval (format {definition.format!r})")
    return definition
