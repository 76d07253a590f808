"""The result of ``skillassay check --mutants``: per eval, per mutant, per layer, what was expected and what
happened.

Written to ``<results>/mutation.json`` (the latest check) and read by the report's Evals page.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillassay.store import latest

MUTATION_FILE = "mutation.json"

Expect = Literal["catch", "equal", "any"]


class LayerOutcome(BaseModel):
    layer: Literal["rubric", "sandbox", "process"]
    expected: Expect
    golden: float | None = None  # the golden's score on this layer
    mutant: float | None = None  # the mutant's
    caught: bool | None = None  # scored below the golden (None: the layer could not grade it)
    ok: bool = False  # what happened is what ``expected`` asks
    evidence: list[str] = Field(default_factory=list)  # what the layer saw (first lines)


class MutantResult(BaseModel):
    eval_id: str
    mutant_id: str
    cls: str
    title: str
    description: str
    location: str | None = None
    # the mutant's own source, or the eval's schema build
    sandbox_mode: Literal["own", "schema", "none"] = "none"
    layers: dict[str, LayerOutcome] = Field(default_factory=dict)
    caught_by: list[str] = Field(default_factory=list)
    blind_spot: bool = False  # a mutant expected to be caught that no layer caught
    # where the mutant's static rubric and its sandbox trace disagreed (the static reading's blind spots)
    disagreements: list[str] = Field(default_factory=list)
    ok: bool = False  # every layer did what the class expects
    error: str | None = None  # the harness could not grade it (not a blind spot, not a pass)
    seconds: float = 0.0


class EvalMutation(BaseModel):
    eval_id: str
    format: str
    golden: dict[str, float | None] = Field(default_factory=dict)  # layer -> the golden's score
    mutants: list[MutantResult] = Field(default_factory=list)
    not_derived: list[str] = Field(default_factory=list)  # classes this golden gave no mutant for, and why
    error: str | None = None

    @property
    def expected_catches(self) -> list[MutantResult]:
        return [m for m in self.mutants if any(o.expected == "catch" for o in m.layers.values())]

    @property
    def score(self) -> float | None:
        """Mutation score: the share of mutants meant to be caught that some layer caught."""
        wanted = self.expected_catches
        return sum(1 for m in wanted if m.caught_by) / len(wanted) if wanted else None

    @property
    def ok(self) -> bool:
        return self.error is None and all(m.ok for m in self.mutants)


class MutationReport(BaseModel):
    schema_version: int = 1
    created_at: datetime
    suite: str
    jobs: int = 1
    duration_s: float = 0.0
    evals: list[EvalMutation] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.evals)

    def by_eval(self) -> dict[str, EvalMutation]:
        return {e.eval_id: e for e in self.evals}


def write(report: MutationReport, results_root: Path) -> Path:
    return latest.write(report, results_root, MUTATION_FILE)


def read(results_root: Path) -> MutationReport | None:
    """The latest check kept under ``results_root``, or None (none ran, or the file is unreadable)."""
    return latest.read(results_root, MUTATION_FILE, MutationReport)
