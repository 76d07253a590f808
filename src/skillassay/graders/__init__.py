"""Agent-eval graders: quality gates, the change (diff), hidden tests, meaningful tests, the transcript
(policy, claims, database writes, commands), test tampering, and an LLM judge. ``evaluate`` is the one entry
point."""

from skillassay.graders.base import Detection, GateResult, GradeResult
from skillassay.graders.engine import DETECTORS, GRADERS, ForbiddenResult, ProcessResult, evaluate
from skillassay.graders.judge import JudgeConfig

__all__ = [
    "DETECTORS",
    "GRADERS",
    "Detection",
    "ForbiddenResult",
    "GateResult",
    "GradeResult",
    "JudgeConfig",
    "ProcessResult",
    "evaluate",
]
