"""The scoring rule of agent evals, as the design document defines it. One pure function, used by the harness
and by the reports (the Evals page computes its examples with it).

- score = weight earned / weight available; a criterion may earn partial credit (a fraction of its weight);
- a criterion no grader could judge scores zero and is listed by id;
- any forbidden behaviour observed fails the eval outright, however high the score;
- pass = not disqualified and score >= threshold (default 80% of the available weight).

One number: the score is rounded once, to the figure every report shows (a percentage with ``SCORE_DECIMALS``
decimals), and the verdict is decided on that figure. A run shown as 80.0% passes an 80% threshold; one shown
as 79.9% fails it. Nothing is decided on digits nobody sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from pydantic import BaseModel, Field

DEFAULT_THRESHOLD = 0.8
SCORE_DECIMALS = 1  # of the percentage: 79.96% is shown, and decided, as 80.0%


def _round(exact: Decimal) -> float:
    return float(exact.quantize(Decimal(1).scaleb(-SCORE_DECIMALS), rounding=ROUND_HALF_UP))


def score_percent(share: float) -> float:
    """The percentage shown for a share of 0..1, rounded half up to SCORE_DECIMALS (from the share's shortest
    decimal form, so 0.79996 and 0.8 - 1e-16 both give 80.0)."""
    return _round(Decimal(repr(float(share))) * 100)


def points_text(points: float | None) -> str:
    """A figure on the 0-100 scale (a score in points, a layer total) as shown: ``80``, ``79.9``, ``–``."""
    if points is None:
        return "–"
    return f"{_round(Decimal(repr(float(points)))):.{SCORE_DECIMALS}f}".removesuffix(".0")


def percent_text(share: float | None) -> str:
    """How a score (a share of 0..1) is written everywhere: ``80%``, ``79.9%``, ``–`` for none."""
    if share is None:
        return "–"
    return f"{score_percent(share):.{SCORE_DECIMALS}f}".removesuffix(".0") + "%"


class CriterionResult(BaseModel):
    id: str
    weight: float
    fraction: float | None  # 0..1 of the weight earned; None = unjudged
    description: str = ""
    grader: str = ""
    evidence: list[str] = Field(default_factory=list)

    @property
    def judged(self) -> bool:
        return self.fraction is not None


class Verdict(BaseModel):
    score: float  # 0..1
    earned: float
    available: float
    threshold: float
    passed: bool
    disqualified: bool
    unjudged: list[str] = Field(default_factory=list)
    forbidden_observed: list[str] = Field(default_factory=list)

    @property
    def percent(self) -> float:
        """The score as shown, and as decided: a percentage rounded to SCORE_DECIMALS."""
        return score_percent(self.score)

    @property
    def below_threshold(self) -> bool:
        return self.percent < score_percent(self.threshold)

    @property
    def label(self) -> str:
        if self.disqualified:
            return "fail (forbidden behaviour)"
        return "pass" if self.passed else "fail"


def decide(
    criteria: Sequence[CriterionResult],
    forbidden_observed: Iterable[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> Verdict:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within 0..1, got {threshold}")
    available = sum(c.weight for c in criteria)
    earned = 0.0
    unjudged: list[str] = []
    for c in criteria:
        if c.weight < 0:
            raise ValueError(f"criterion {c.id!r} has a negative weight")
        if c.fraction is None:
            unjudged.append(c.id)
            continue
        if not 0.0 <= c.fraction <= 1.0:
            raise ValueError(f"criterion {c.id!r} earned {c.fraction}, outside 0..1")
        earned += c.weight * c.fraction
    shown = score_percent(earned / available if available > 0 else 0.0)
    forbidden = sorted(set(forbidden_observed))
    disqualified = bool(forbidden)
    passed = not disqualified and available > 0 and shown >= score_percent(threshold)
    return Verdict(
        score=shown / 100,
        earned=round(earned, 6),
        available=available,
        threshold=threshold,
        passed=passed,
        disqualified=disqualified,
        unjudged=unjudged,
        forbidden_observed=forbidden,
    )
