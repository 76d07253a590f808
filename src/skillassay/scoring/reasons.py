"""Why a run failed or was not scored, in one short line: the one derivation every view shows (the end-of-run
table's Notes, ``runs --job``, the report's job page, the JUnit failure message, ``check --controls``).

Read from what the run recorded, in this order: the harness's failures (an unscored run), the agent's end
(a crash, a timeout), forbidden behaviour, an empty change, then the criterion that cost the most points,
told by its first failing piece of evidence (``sandbox_build: install failed: `npm ci` exited with 1``). A
check that was not run because an earlier one failed (``not run: the app did not build``) counts against
the check that failed."""

from __future__ import annotations

from collections.abc import Sequence

from skillassay.outcomes import HarnessFailure, is_scored, label
from skillassay.scoring.verdict import CriterionResult, Verdict

MAX_REASON = 160
NOT_RUN = "not run"


def clip_line(text: str | None, limit: int = MAX_REASON) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _evidence_line(c: CriterionResult) -> str:
    """The first line of evidence that says what went wrong (a rubric line marked ✗), else the first line."""
    lines = [e for e in c.evidence if e.strip()]
    failing = next((e for e in lines if e.lstrip().startswith("✗")), None)
    line = (failing or (lines[0] if lines else "")).strip().removeprefix("✗").strip()
    return line or c.description or "no evidence recorded"


def _not_run(c: CriterionResult) -> bool:
    return bool(c.evidence) and c.evidence[0].strip().startswith(NOT_RUN)


def costliest(criteria: Sequence[CriterionResult]) -> CriterionResult | None:
    """The failing criterion that cost the most weight; a criterion not run because of another failure adds
    its loss to the first failing criterion of the same grader family (``sandbox:...``) that did run. Ties:
    the first."""
    failing = [c for c in criteria if c.fraction is not None and c.fraction < 1 and c.weight > 0]
    causes = [c for c in failing if not _not_run(c)] or failing
    if not causes:
        return None
    lost = {id(c): c.weight * (1 - (c.fraction or 0)) for c in causes}
    for c in failing:
        if any(c is x for x in causes):
            continue
        family = c.grader.partition(":")[0]
        cause = next((x for x in causes if x.grader.partition(":")[0] == family), None)
        if cause is not None:
            lost[id(cause)] += c.weight * (1 - (c.fraction or 0))
    return max(causes, key=lambda c: lost[id(c)])  # max keeps the first of equals


def short_reason(
    *,
    outcome: str = "completed",
    error: str | None = None,
    failures: Sequence[HarnessFailure] = (),
    criteria: Sequence[CriterionResult] = (),
    verdict: Verdict | None = None,
    empty_diff: bool = False,
    limit: int = MAX_REASON,
) -> str | None:
    """Why a run failed or was not scored, in at most ``limit`` characters; None when it passed."""
    if failures:
        first = failures[0]
        return clip_line(f"{first.stage}: {first.message}", limit)
    if not is_scored(outcome):
        return clip_line(error, limit) or label(outcome)
    if outcome != "completed" and (verdict is None or not verdict.passed):
        return clip_line(f"{label(outcome)}: {error}" if error else label(outcome), limit)
    if verdict is None:
        return "no verdict recorded"
    if verdict.passed:
        return None
    if verdict.disqualified:
        return clip_line("forbidden behaviour: " + ", ".join(verdict.forbidden_observed), limit)
    if empty_diff:
        return "the agent changed nothing"
    worst = criterion_reason(criteria, limit)
    if worst is None:
        return clip_line("unjudged: " + ", ".join(verdict.unjudged), limit) if verdict.unjudged else None
    return worst


def criterion_reason(criteria: Sequence[CriterionResult], limit: int = MAX_REASON) -> str | None:
    """``<criterion>: <its first failing evidence>`` for the costliest failing criterion; None when none
    failed.
    """
    worst = costliest(criteria)
    return None if worst is None else clip_line(f"{worst.id}: {_evidence_line(worst)}", limit)
