"""The scoring rule of agent evals, as the design document defines it. One pure function, used by the harness and
by the reports (the Evals page computes its examples with it).

- score = weight earned / weight available; a criterion may earn partial credit (a fraction of its weight);
- a criterion no grader could judge scores zero and is listed by id;
- any forbidden behaviour observed fails the eval outright, however high the score;
- pass = not disqualified and score >= threshold (default 80% of the available weight).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

DEFAULT_THRESHOLD = 0.8


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
    score = earned / available if available > 0 else 0.0
    forbidden = sorted(set(forbidden_observed))
    disqualified = bool(forbidden)
    # a small tolerance so 0.8 of the weight passes a 0.8 threshold despite float rounding
    passed = not disqualified and available > 0 and score + 1e-9 >= threshold
    return Verdict(
        score=round(score, 6),
        earned=round(earned, 6),
        available=available,
        threshold=threshold,
        passed=passed,
        disqualified=disqualified,
        unjudged=unjudged,
        forbidden_observed=forbidden,
    )
