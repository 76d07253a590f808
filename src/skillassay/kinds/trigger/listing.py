"""Trigger suites as ``list`` shows them: each suite's skill, runs, budget and prompts (``kinds.base.
SuiteListing``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from skillassay.definitions.models import EvalDefinition, TriggerSpec
from skillassay.errors import SkillassayError
from skillassay.kinds.base import SuiteListing
from skillassay.kinds.trigger.definitions import TriggerSuite

CATEGORY_ORDER = ("explicit", "implicit", "contextual", "negative")


def _trigger(prompt: EvalDefinition) -> TriggerSpec:
    """A trigger suite's prompt's trigger (every prompt of a suite has one)."""
    if prompt.trigger is None:
        raise SkillassayError(f"{prompt.id}: a trigger suite's prompt has no trigger")
    return prompt.trigger


def _budget(suite: TriggerSuite) -> str:
    """The suite's limits in a few words ("turns 10"; "none")."""
    limits = suite.budget.model_dump().items()
    return (
        ", ".join(
            f"{k.removeprefix('max_')} {v}" for k, v in limits if k.startswith("max_") and v is not None
        )
        or "none"
    )


class TriggerSuiteListing(SuiteListing):
    """The trigger suites at a path: one row each, and each one's prompts when listed alone."""

    def __init__(self, suites: list[TriggerSuite]) -> None:
        self.suites = suites

    def rows(self) -> list[dict[str, Any]]:
        return [_row(t) for t in self.suites]

    def tables(self, path: Path, alone: bool) -> list[Table]:
        if not self.suites:
            return []
        return [self._suites_table(path), *(_prompts_table(t) for t in self.suites if alone)]

    def _suites_table(self, path: Path) -> Table:
        table = Table(title=f"{len(self.suites)} trigger suite(s) in {path}")
        for col in (
            "suite",
            "skill",
            "prompts",
            "should trigger",
            " / ".join(CATEGORY_ORDER),
            "runs",
            "budget",
            "status",
        ):
            table.add_column(col, overflow="fold")
        for t in self.suites:
            c = t.categories()
            table.add_row(
                t.id,
                t.skill_name,
                str(len(t.prompts)),
                str(sum(_trigger(p).should_trigger for p in t.prompts)),
                "/".join(str(c[k]) for k in CATEGORY_ORDER),
                str(t.runs),
                _budget(t),
                t.status,
            )
        return table


def _row(t: TriggerSuite) -> dict[str, Any]:
    """A suite's JSON row (``list --json``)."""
    return {
        "id": t.id,
        "title": t.title,
        "format": "trigger",
        "status": t.status,
        "source": str(t.source),
        "skill": t.skill_name,
        "skill_dir": str(t.skill_dir),
        "runs": t.runs,
        "budget": t.budget.model_dump(),
        "categories": t.categories(),
        "prompts": [
            {
                "id": p.id,
                "category": _trigger(p).category,
                "should_trigger": _trigger(p).should_trigger,
                "fixture": _trigger(p).fixture,
            }
            for p in t.prompts
        ],
    }


def _prompts_table(t: TriggerSuite) -> Table:
    """One suite's prompts: category, expectation, workspace."""
    table = Table(title=f"{t.id}: prompts")
    for col in ("eval", "category", "should trigger", "workspace"):
        table.add_column(col, overflow="fold")
    for p in t.prompts:
        table.add_row(
            p.id,
            _trigger(p).category,
            "yes" if _trigger(p).should_trigger else "no",
            _trigger(p).fixture or "(empty repository)",
        )
    return table
