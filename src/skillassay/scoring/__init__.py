"""Pure scoring functions: the combined score of the Seam layers and the verdict of agent evals."""

from skillassay.scoring.combined import RUBRIC_SHARE, SANDBOX_SHARE, combined_score
from skillassay.scoring.verdict import DEFAULT_THRESHOLD, CriterionResult, Verdict, decide

# What a score means, as one integer every run records (run.json ``grading_version``, the index's column of
# that name). Bump it whenever a change makes the same work score differently; `compare` refuses to mix
# versions and `skillassay regrade JOB` brings a job's runs to the current one. Results written before it
# existed read as 1.
#   1: before issue 23
#   2: issue 23: judged from outside the code under test, no abstention (a workspace that breaks a harness
#      step is the agent's failure), bounded graders and detectors
#   3: issue 26: with both Seam layers, the rubric's reachability judgements settled by the run's Seam trace
GRADING_VERSION = 3

__all__ = [
    "DEFAULT_THRESHOLD",
    "GRADING_VERSION",
    "RUBRIC_SHARE",
    "SANDBOX_SHARE",
    "CriterionResult",
    "Verdict",
    "combined_score",
    "decide",
]
