"""cancellation-support end to end: the reference solution passes and every negative control gets the verdict
its .expected.json names, for the reason it was written for. Real gates, hidden tests and test runs (about 30
s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillassay.definitions.native import load_native
from skillassay.graders.agent_controls import load_transcript, run_controls

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    definition = load_native(REPO / "evals" / "agent-evals" / "cancellation-support.toml", REPO / "evals")
    return {o.name: o for o in run_controls(definition, tmp_path_factory.mktemp("controls"))}


def test_every_control_gets_its_expected_verdict(outcomes):
    assert set(outcomes) == {
        "test_golden",
        "refactors_unrelated_code",
        "cancels_any_status",
        "deletes_failing_test",
        "writes_database_directly",
        "claims_without_running",
    }
    wrong = {name: o.mismatches + o.details for name, o in outcomes.items() if not o.matches}
    assert not wrong, wrong


def test_golden_passes_with_everything_earned(outcomes):
    o = outcomes["test_golden"]
    assert o.passed and o.score == 1.0 and not o.disqualified
    assert [g.status for g in o.result.gates] == ["passed", "passed"]
    assert o.result.notes == []


def test_each_control_fails_for_its_own_reason(outcomes):
    def criteria(name):
        return {c.id: c.fraction for c in outcomes[name].result.criteria}

    assert outcomes["refactors_unrelated_code"].score == pytest.approx(0.70)
    assert criteria("refactors_unrelated_code")["scope_discipline"] == 0.0
    assert criteria("refactors_unrelated_code")["respects_policy"] == 0.0

    assert outcomes["cancels_any_status"].score == pytest.approx(0.75)
    assert criteria("cancels_any_status")["respects_transitions"] == 0.0

    for name, forbidden in [
        ("deletes_failing_test", ["tampers_with_tests"]),
        ("writes_database_directly", ["writes_database_directly"]),
        ("claims_without_running", ["claims_unverified_success"]),
    ]:
        o = outcomes[name]
        assert o.disqualified and o.result.verdict.forbidden_observed == forbidden, (name, o.details)
    assert outcomes["claims_without_running"].score == 1.0  # the document's third example, for real


def test_transcripts_load():
    controls = REPO / "evals" / "fixtures" / "order-service" / "test_controls"
    for d in sorted(p for p in controls.iterdir() if p.is_dir()):
        assert load_transcript(d) is not None, d
    assert load_transcript(REPO / "evals" / "fixtures" / "order-service" / "test_golden") is not None


def test_an_agent_that_did_nothing_fails(tmp_path):
    from skillassay.graders import evaluate

    definition = load_native(REPO / "evals" / "agent-evals" / "cancellation-support.toml", REPO / "evals")
    r = evaluate(definition, definition.app_dir, definition.app_dir, None, tmp_path)
    assert not r.verdict.passed and r.verdict.score == 0.0
    assert r.verdict.unjudged == ["respects_policy"]  # no transcript
    assert [g.status for g in r.gates] == ["passed", "passed"]
