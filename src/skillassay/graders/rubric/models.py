"""What the rubric layer returns: the plan's shape (``plan_json``) plus the evidence behind every score."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Finding(BaseModel):
    """One piece of evidence: what was found (``ok``) or missed, and where."""

    ok: bool
    message: str
    location: str | None = None  # "path:line" in the modified app


class CategoryResult(BaseModel):
    score: float  # 0..1, floored to 2 decimals
    weighted: float  # score x the category's weight, rounded to 2 decimals
    check: str
    evidence: list[Finding] = Field(default_factory=list)


class RubricResult(BaseModel):
    total: float  # 0..100 (the sum of the weighted points), rounded to 2 decimals
    categories: dict[str, CategoryResult]
    changed_files: list[str] = Field(default_factory=list)
    paths_taken: list[str] = Field(default_factory=list)  # Seam paths whose signature call the change makes

    def plan_json(self) -> dict[str, Any]:
        """Exactly the plan's output: ``{"total", "categories": {name: {"score", "weighted"}}}``."""
        return {
            "total": self.total,
            "categories": {n: {"score": c.score, "weighted": c.weighted} for n, c in self.categories.items()},
        }
