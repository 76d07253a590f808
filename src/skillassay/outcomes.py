"""How a run ended: one taxonomy for every part of skillassay (the store, the trial, the summary, compare, the
CI files, the report). Written out in docs/results.md.

Blame exactly: what the agent did is scored, whatever it did (crash, time out, delete its workspace); what the
provider or the harness failed to do is never the agent's score, and is run again by ``run --resume``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Outcome = Literal[
    "completed", "agent_error", "timed_out", "provider_error", "harness_error", "invalid_definition"
]

# in the order tables list them
OUTCOMES: tuple[Outcome, ...] = (
    "completed",
    "agent_error",
    "timed_out",
    "provider_error",
    "harness_error",
    "invalid_definition",
)
# the agent's doing: graded, and counted in every figure
SCORED: frozenset[str] = frozenset({"completed", "agent_error", "timed_out"})
# not the agent's doing: left out of every mean, pass rate, comparison and chart, and counted apart
UNSCORED: frozenset[str] = frozenset({"provider_error", "harness_error", "invalid_definition"})
# what `run --resume` runs again (with the runs that have no record at all); an invalid definition fails again
# until it is fixed, so it is not rerun by itself
RERUN: frozenset[str] = frozenset({"provider_error", "harness_error"})

# Names older results used, read as the taxonomy's: an infrastructure error was the harness's (or the
# provider's) failure; a crash is the agent's error; an empty diff is a completed run that changed nothing
# (its verdict fails).
LEGACY: dict[str, Outcome] = {
    "infrastructure_error": "harness_error",
    "crashed": "agent_error",
    "empty_diff": "completed",
}

MEANING: dict[str, str] = {
    "completed": "the agent finished; graded",
    "agent_error": "the agent crashed, exited non-zero or was killed by a signal; graded (its failure)",
    "timed_out": "the agent ran out of time and was killed; graded (what it left is scored)",
    "provider_error": "the model provider failed (429, 5xx, overloaded, connection) after retries; not "
    "scored, rerun",
    "harness_error": "a grader, gate runner, judge call or the harness itself failed; not scored, rerun",
    "invalid_definition": "the eval's definition could not be used; not scored, fix it and rerun",
}


# A kind's figure (``grades``) counting the gaps in an emulated service that a scored run met where no correct
# solution needed them (the Seam kind: ``seam.behaviour.gaps``): such a run keeps its score, and counts in
# the arms' unscored-share guard like an unscored one (``scoring.stats``), so landing a failure on a gap on
# purpose buys nothing.
SERVICE_GAP_FIGURE = "service_gaps"
SERVICE_GAP = "service_gap"  # its name among the guard's outcomes


def is_scored(outcome: str) -> bool:
    return LEGACY.get(outcome, outcome) in SCORED


def label(outcome: str) -> str:
    """``agent_error`` -> ``agent error``."""
    return LEGACY.get(outcome, outcome).replace("_", " ")


class HarnessFailure(BaseModel):
    """One thing the harness failed to do for a run: which part (``grader:<criterion>``,
    ``detector:<behaviour>``, ``gate:<id>``, ``judge:<criterion>``, ``rubric``, ``sandbox``, ``workspace``,
    ``write``, ``harness``) and why. Any one makes the run a ``harness_error``: never zero points, never an
    unflagged forbidden behaviour."""

    stage: str
    message: str
    traceback: str | None = None

    def __str__(self) -> str:
        return f"{self.stage}: {self.message}"


class AgentExit(BaseModel):
    """How the agent's process ended, kept in run.json: an exit code, or the signal that killed it."""

    exit_code: int | None = None
    signal: int | None = None
    signal_name: str | None = None
    timed_out: bool = False
