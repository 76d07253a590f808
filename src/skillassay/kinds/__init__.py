"""Kinds of eval as plug-ins (``kinds.base``): the native agent evals (``kinds.native``), the trigger suites
(``kinds.trigger``) and, from its wing, the plan's Seam evals (``skillassay.seam.kind``)."""

from skillassay.kinds.base import (
    GROUP,
    EvalKind,
    GradeOutcome,
    GradeRequest,
    Headline,
    JobComparison,
    JobSummary,
    Layers,
    failed_criterion,
    failure,
    job_kind,
    job_summary_of,
    kind_of,
    load_kind,
    refresh,
    summary_kind,
)

__all__ = [
    "GROUP",
    "EvalKind",
    "GradeOutcome",
    "GradeRequest",
    "Headline",
    "JobComparison",
    "JobSummary",
    "Layers",
    "failed_criterion",
    "failure",
    "job_kind",
    "job_summary_of",
    "kind_of",
    "load_kind",
    "refresh",
    "summary_kind",
]
