"""Pure scoring functions: the combined score of the Seam layers and the verdict of agent evals."""

from skillassay.scoring.combined import RUBRIC_SHARE, SANDBOX_SHARE, combined_score
from skillassay.scoring.verdict import DEFAULT_THRESHOLD, CriterionResult, Verdict, decide

__all__ = [
    "DEFAULT_THRESHOLD",
    "RUBRIC_SHARE",
    "SANDBOX_SHARE",
    "CriterionResult",
    "Verdict",
    "combined_score",
    "decide",
]
