"""Kinds of eval as plug-ins (``kinds.base``): the native agent evals (``kinds.native``), the trigger suites
(``kinds.trigger``) and, from its wing, the plan's Seam evals (``skillassay.seam.kind``)."""

from skillassay.kinds.base import (
    GROUP,
    EvalKind,
    GradeOutcome,
    GradeRequest,
    JobAsk,
    JobSettings,
    Layers,
    failure,
    kind_of,
    load_kind,
    refresh,
    registered,
)

__all__ = [
    "GROUP",
    "EvalKind",
    "GradeOutcome",
    "GradeRequest",
    "JobAsk",
    "JobSettings",
    "Layers",
    "failure",
    "kind_of",
    "load_kind",
    "refresh",
    "registered",
]
