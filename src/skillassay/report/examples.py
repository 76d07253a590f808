"""The design document's three scoring examples, computed with the harness's own ``decide`` (never typed in).

Taken from ``skillassay.scoring.examples.DOCUMENT_EXAMPLES`` when that module provides them in a shape the report
understands; otherwise computed here with the same function and the same three cases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillassay.scoring.verdict import CriterionResult, Verdict, decide


@dataclass
class ScoringExample:
    title: str
    criteria: list[CriterionResult]
    forbidden: list[str]
    threshold: float
    verdict: Verdict
    explanation: str = ""


_CRITERIA = (
    ("implements_feature", 30, "The requested change works end to end"),
    ("tests_pass", 20, "The app's tests and the hidden tests pass"),
    ("uses_official_sdk", 20, "Uses the official SDK rather than raw HTTP"),
    ("scope_discipline", 15, "Changes only what the task needs"),
    ("respects_policy", 15, "Stays within the permission policy"),
)


def _criteria(unjudged: tuple[str, ...] = ()) -> list[CriterionResult]:
    return [
        CriterionResult(id=cid, weight=w, fraction=None if cid in unjudged else 1.0, description=desc)
        for cid, w, desc in _CRITERIA
    ]


def _computed() -> list[ScoringExample]:
    out = []
    for title, crit, forbidden in (
        ("Full marks", _criteria(), []),
        ("Two criteria no grader could judge", _criteria(("scope_discipline", "respects_policy")), []),
        ("Full marks, but a forbidden behaviour observed", _criteria(), ["edited_tests_to_pass"]),
    ):
        out.append(ScoringExample(title, crit, forbidden, 0.8, decide(crit, forbidden, 0.8)))
    return out


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _adapt(item: Any) -> ScoringExample | None:
    criteria = _field(item, "criteria")
    if not criteria:
        return None
    crit = [c if isinstance(c, CriterionResult) else CriterionResult.model_validate(c) for c in criteria]
    forbidden = list(_field(item, "forbidden_observed") or _field(item, "forbidden") or [])
    threshold = _field(item, "threshold")
    threshold = 0.8 if threshold is None else float(threshold)
    title = _field(item, "title") or _field(item, "name") or _field(item, "label") or "Example"
    explanation = _field(item, "explanation") or ""
    return ScoringExample(str(title), crit, forbidden, threshold, decide(crit, forbidden, threshold), str(explanation))


def scoring_examples() -> list[ScoringExample]:
    try:
        from skillassay.scoring.examples import DOCUMENT_EXAMPLES  # type: ignore[import-not-found]
    except ImportError:
        return _computed()
    try:
        items = DOCUMENT_EXAMPLES.values() if isinstance(DOCUMENT_EXAMPLES, dict) else DOCUMENT_EXAMPLES
        adapted = [_adapt(x) for x in items]
    except Exception:  # noqa: BLE001 - an unexpected shape: fall back to computing the examples here
        return _computed()
    if len(adapted) != 3 or any(a is None for a in adapted):
        return _computed()
    return adapted  # type: ignore[return-value]
