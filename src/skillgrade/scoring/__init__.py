"""Pure scoring functions: the combined score of the Seam layers and the verdict of agent evals."""

from skillgrade.scoring.combined import RUBRIC_SHARE, SANDBOX_SHARE, combined_score
from skillgrade.scoring.verdict import DEFAULT_THRESHOLD, CriterionResult, Verdict, judge

__all__ = [
    "DEFAULT_THRESHOLD",
    "RUBRIC_SHARE",
    "SANDBOX_SHARE",
    "CriterionResult",
    "Verdict",
    "combined_score",
    "judge",
]
