"""The plan's combined score: 0.4 x rubric + 0.6 x sandbox (the sandbox is ground truth, so it weighs
more).
"""

from __future__ import annotations

RUBRIC_SHARE = 0.4
SANDBOX_SHARE = 0.6


def combined_score(rubric_total: float | None, sandbox_total: float | None) -> float | None:
    """Both totals are 0-100. With one layer only, the combined score is not defined (None): a run graded by
    one layer is reported by that layer, not by a number that looks like the other."""
    if rubric_total is None or sandbox_total is None:
        return None
    return round(RUBRIC_SHARE * rubric_total + SANDBOX_SHARE * sandbox_total, 2)
