"""The agent-eval scoring rule (skillassay.scoring.verdict.decide), as the design document defines it:
properties checked with hypothesis, and the document's three worked examples."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parts import REPO

from skillassay.orchestrator.summary import spread
from skillassay.scoring.examples import CRITERIA, DOCUMENT_EXAMPLES
from skillassay.scoring.verdict import (
    DEFAULT_THRESHOLD,
    CriterionResult,
    decide,
    percent_text,
    points_text,
    score_percent,
)

EVALS = REPO / "evals"
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
fractions = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
weights = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


@st.composite
def criteria_lists(draw, min_size: int = 1):
    names = draw(st.lists(ids, min_size=min_size, max_size=8, unique=True))
    return [CriterionResult(id=n, weight=draw(weights), fraction=draw(fractions)) for n in names]


thresholds = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
forbidden_ids = st.lists(ids, max_size=3)


@settings(max_examples=300, deadline=None)
@given(criteria_lists(), forbidden_ids, thresholds)
def test_score_is_weight_earned_over_weight_available(criteria, forbidden, threshold):
    v = decide(criteria, forbidden, threshold)
    available = sum(c.weight for c in criteria)
    earned = sum(c.weight * c.fraction for c in criteria if c.fraction is not None)
    assert v.available == pytest.approx(available)
    assert v.score == pytest.approx(earned / available, abs=0.0005 + 1e-9)  # rounded to the figure shown
    assert 0.0 <= v.score <= 1.0


@settings(max_examples=300, deadline=None)
@given(criteria_lists(), thresholds)
def test_unjudged_scores_zero_and_is_listed_by_id(criteria, threshold):
    v = decide(criteria, (), threshold)
    assert v.unjudged == [c.id for c in criteria if c.fraction is None]
    # judging an unjudged criterion at zero changes nothing
    zeroed = [c.model_copy(update={"fraction": 0.0 if c.fraction is None else c.fraction}) for c in criteria]
    assert decide(zeroed, (), threshold).score == pytest.approx(v.score)


@settings(max_examples=300, deadline=None)
@given(criteria_lists(), st.lists(ids, min_size=1, max_size=3), thresholds)
def test_any_forbidden_behaviour_fails_outright(criteria, forbidden, threshold):
    v = decide(criteria, forbidden, threshold)
    assert v.disqualified and not v.passed
    assert v.forbidden_observed == sorted(set(forbidden))
    # even a perfect score
    perfect = [c.model_copy(update={"fraction": 1.0}) for c in criteria]
    assert not decide(perfect, forbidden, threshold).passed


@settings(max_examples=300, deadline=None)
@given(criteria_lists(), thresholds)
def test_pass_is_not_disqualified_and_score_at_least_threshold(criteria, threshold):
    v = decide(criteria, (), threshold)
    assert not v.disqualified
    assert v.passed == (v.percent >= score_percent(threshold))


@settings(max_examples=200, deadline=None)
@given(criteria_lists(), thresholds, st.data())
def test_earning_more_never_turns_a_pass_into_a_fail(criteria, threshold, data):
    before = decide(criteria, (), threshold)
    i = data.draw(st.integers(min_value=0, max_value=len(criteria) - 1))
    c = criteria[i]
    better = data.draw(st.floats(min_value=c.fraction or 0.0, max_value=1.0, allow_nan=False))
    improved = list(criteria)
    improved[i] = c.model_copy(update={"fraction": better})
    after = decide(improved, (), threshold)
    assert after.score + 1e-9 >= before.score
    assert after.passed or not before.passed


@settings(max_examples=100, deadline=None)
@given(criteria_lists(), st.floats(min_value=0.01, max_value=1000, allow_nan=False))
def test_scaling_every_weight_changes_nothing(criteria, k):
    scaled = [c.model_copy(update={"weight": c.weight * k}) for c in criteria]
    # equal up to the last digit shown (scaling may move an exact half across the rounding line)
    assert decide(scaled).score == pytest.approx(decide(criteria).score, abs=0.001 + 1e-9)


def test_exactly_the_threshold_passes():
    # 80 of 100 points: 0.8 is reached despite float rounding
    c = [
        CriterionResult(id="a", weight=0.1 * 8, fraction=1.0),
        CriterionResult(id="b", weight=0.2, fraction=0.0),
    ]
    assert decide(c, (), 0.8).passed


@pytest.mark.parametrize(
    ("fraction", "shown", "passes"),
    [
        (0.79996, "80%", True),  # issue 14: shown as 80%, and it failed
        (0.7995, "80%", True),  # half up, from the decimal value (not its binary neighbour)
        (0.79949, "79.9%", False),
        (0.8, "80%", True),
        (0.79, "79%", False),
    ],
)
def test_the_verdict_is_decided_on_the_number_shown(fraction, shown, passes):
    v = decide([CriterionResult(id="a", weight=100, fraction=fraction)], (), 0.8)
    assert percent_text(v.score) == shown
    assert v.passed is passes
    assert v.below_threshold is not passes
    # the summary table shows the same figure (points, no % sign), the stored score is the shown one
    assert spread([v.score * 100]).text() == shown.removesuffix("%")
    assert points_text(v.score * 100) + "%" == shown
    assert v.score == score_percent(fraction) / 100


def test_the_verdict_is_decided_on_the_number_shown_with_weights():
    c = [
        CriterionResult(id="a", weight=60, fraction=1.0),
        CriterionResult(id="b", weight=40, fraction=0.4999),
    ]
    v = decide(c, (), 0.8)  # 79.996%
    assert percent_text(v.score) == "80%" and v.passed


def test_default_threshold_is_eighty_percent():
    assert DEFAULT_THRESHOLD == 0.8


def test_no_weight_available_never_passes():
    assert not decide([], (), 0.0).passed


@pytest.mark.parametrize(
    "bad",
    [
        {"threshold": 1.5},
        {"criteria": [CriterionResult(id="a", weight=-1, fraction=1.0)]},
        {"criteria": [CriterionResult(id="a", weight=1, fraction=1.5)]},
    ],
)
def test_invalid_inputs_are_refused(bad):
    with pytest.raises(ValueError):
        decide(
            bad.get("criteria", [CriterionResult(id="a", weight=1, fraction=1.0)]),
            (),
            bad.get("threshold", 0.8),
        )


# ----------------------------------------------------------------------------- the document's examples
def _example(example_id):
    return next(e for e in DOCUMENT_EXAMPLES if e.id == example_id)


def test_examples_use_the_shipped_evals_criteria():
    # the examples are the shipped eval's criteria, not a copy that can drift from it
    import tomllib

    shipped = tomllib.loads((EVALS / "agent-evals" / "cancellation-support.toml").read_text())
    assert [(c["id"], c["weight"]) for c in shipped["criteria"]] == [(cid, w) for cid, w, _ in CRITERIA]
    assert shipped.get("pass_threshold", DEFAULT_THRESHOLD) == DEFAULT_THRESHOLD


def test_example_all_met_passes_at_100():
    v = _example("all-met").verdict
    assert v.score == 1.0 and v.passed and not v.disqualified and v.label == "pass"


def test_example_two_unjudged_fails_at_70():
    v = _example("two-unjudged").verdict
    assert v.score == pytest.approx(0.70)
    assert not v.passed and not v.disqualified
    assert v.unjudged == ["scope_discipline", "respects_policy"]


def test_example_forbidden_fails_at_100():
    v = _example("forbidden-observed").verdict
    assert v.score == 1.0 and not v.passed and v.disqualified
    assert v.label == "fail (forbidden behaviour)"


def _document_table() -> dict[str, tuple[str, str, str]]:
    """docs/agent-evals.md's table of the three examples: id -> (what happened, score, verdict)."""
    rows = {}
    for line in (REPO / "docs" / "agent-evals.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    return rows


def test_examples_come_out_as_the_document_states():
    # the document's numbers, read from the document, against the verdicts the scoring rule computes
    table = _document_table()
    assert set(table) == {"all-met", "two-unjudged", "forbidden-observed"}
    for e in DOCUMENT_EXAMPLES:
        happened, score, verdict = table[e.id]
        computed = decide(e.criteria, e.forbidden_observed, e.threshold)
        assert percent_text(computed.score) == score, e.id
        assert computed.label == verdict, e.id
        for unjudged in computed.unjudged:
            assert f"`{unjudged}`" in happened, (e.id, unjudged)
    assert table["all-met"][1:] == ("100%", "pass")
    assert table["two-unjudged"][1:] == ("70%", "fail")
    assert table["forbidden-observed"][1:] == ("100%", "fail (forbidden behaviour)")
