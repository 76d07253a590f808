"""What the rubric layer returns: the plan's shape (``plan_json``) plus the evidence behind every score.

Plain dataclasses, like the rubric's inputs (``seam/plan.py``), so ``skillassay rubric`` starts without
pydantic; ``to_json()`` is what ``rubric.json`` holds, and pydantic reads it back into these classes
(``TypeAdapter(RubricResult)``) wherever a typed model is wanted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Finding:
    """One piece of evidence: what was found (``ok``) or missed, and where."""

    ok: bool
    message: str
    location: str | None = None  # "path:line" in the modified app


@dataclass
class CategoryResult:
    """One category's grade: its score, its weighted points, the check and the evidence behind them."""

    score: float  # 0..1, floored to 2 decimals
    weighted: float  # score x the category's weight, rounded to 2 decimals
    check: str
    evidence: list[Finding] = field(default_factory=list)


@dataclass
class RubricResult:
    """The rubric's grade of one change: the total, each category's result and the files changed."""

    total: float  # 0..100 (the sum of the weighted points), rounded to 2 decimals
    categories: dict[str, CategoryResult]
    changed_files: list[str] = field(default_factory=list)
    paths_taken: list[str] = field(default_factory=list)  # Seam paths whose signature call the change makes

    def to_json(self) -> dict[str, Any]:
        """The whole result as JSON-ready data (``rubric.json``)."""
        return dataclasses.asdict(self)

    def plan_json(self) -> dict[str, Any]:
        """Exactly the plan's output: ``{"total", "categories": {name: {"score", "weighted"}}}``."""
        return {
            "total": self.total,
            "categories": {n: {"score": c.score, "weighted": c.weighted} for n, c in self.categories.items()},
        }
