"""Grading one finished run: the eval's kind (``skillassay.kinds``) turns the layers it has into criteria and
a verdict.

Used by ``skillassay run`` right after the agent stops and by ``skillassay regrade`` on stored workspaces, so
a regrade scores exactly as a run would.
"""

from __future__ import annotations

from pathlib import Path

from skillassay.definitions.models import EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation.base import Policy
from skillassay.kinds import GradeOutcome, GradeRequest, Layers, kind_of
from skillassay.kinds.base import SealingRecorder
from skillassay.services import Service
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillUse
from skillassay.workspace.changes import ChangeSet

__all__ = ["GradeOutcome", "Layers", "grade"]


def grade(
    definition: EvalDefinition,
    modified_dir: Path,
    run_dir: Path,
    run_id: str,
    *,
    layers: Layers = "both",
    seam: str = "emulator",
    backend: str = "host",
    emulator: Service | None = None,
    transcript: Transcript | None = None,
    judge_config: JudgeConfig | None = None,
    change: ChangeSet | None = None,
    policy: Policy | None = None,
    sealing: SealingRecorder | None = None,
    sandbox_waits: dict[str, float] | None = None,
    skill_use: SkillUse | None = None,
    stopped: str | None = None,
) -> GradeOutcome:
    """Grade one run by its kind. ``change`` is the run's ChangeSet (fixture app -> ``modified_dir``),
    computed once by the workspace and handed to every grader; computed by the kind when the caller has
    none (a regrade). ``policy`` seals the app and the graders' commands; each sandbox they open is added
    to ``sealing`` for the run's records. ``sandbox_waits``: the sandbox's early-stop settings
    (``quiet_after``, ``fail_grace``) when not its defaults."""
    request = GradeRequest(
        definition=definition,
        modified_dir=Path(modified_dir),
        run_dir=Path(run_dir),
        run_id=run_id,
        layers=layers,
        seam=seam,
        backend=backend,
        emulator=emulator,
        transcript=transcript,
        judge_config=judge_config,
        change=change,
        policy=policy,
        sealing=sealing,
        sandbox_waits=sandbox_waits or {},
        skill_use=skill_use,
        stopped=stopped,
    )
    return kind_of(definition).grade(request)
