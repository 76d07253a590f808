"""The shipped fixtures: each golden scores 100, each negative control what its .expected.json says.

Fixtures are discovered at run time, so the test covers every fixture present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter
from rubric_helpers import REPO

from skillassay.definitions.models import ControlExpectation
from skillassay.seam.plan import AnswerKey, Rubric
from skillassay.seam.rubric import grade

EVALS = REPO / "evals"
FIXTURES = EVALS / "fixtures"

PLAN_FILES = ("eval_config.json", "answer_key.json", "Dockerfile", "app", "test_golden", "test_controls")


def _plan_fixture_dirs() -> list[Path]:
    """Every folder with an eval_config.json is a plan-format fixture: the rubric grades each one."""
    return sorted(p.parent for p in FIXTURES.glob("*/eval_config.json"))


def _fixtures() -> list[Path]:
    return _plan_fixture_dirs()


def _goldens():
    return [pytest.param(f, id=f.name) for f in _fixtures()]


def test_every_fixture_folder_is_complete_or_used_by_an_agent_eval():
    # a fixture that loses a file is a failure here, never a fixture silently left out of the tests below
    assert _plan_fixture_dirs(), f"no plan fixture under {FIXTURES}"
    for fixture in _plan_fixture_dirs():
        missing = [f for f in PLAN_FILES if not (fixture / f).exists()]
        assert not missing, f"{fixture.name}: missing {missing}"
        assert list((fixture / "test_controls").glob("*.expected.json")), (
            f"{fixture.name}: no negative control"
        )
    from skillassay.definitions import load_suite

    used = {d.fixture_dir.resolve() for d in load_suite(EVALS)}
    others = [p.name for p in FIXTURES.iterdir() if p.is_dir() and p.resolve() not in used]
    assert not others, f"fixture folders neither in the plan's format nor used by an agent eval: {others}"


def _controls():
    out = []
    for fixture in _fixtures():
        for expected in sorted((fixture / "test_controls").glob("*.expected.json")):
            control = expected.with_name(expected.name.removesuffix(".expected.json"))
            if control.is_dir():
                out.append(pytest.param(fixture, control, expected, id=f"{fixture.name}/{control.name}"))
    return out


def _grade(fixture: Path, modified: Path):
    key = TypeAdapter(AnswerKey).validate_json((fixture / "answer_key.json").read_text())
    api_path = json.loads((fixture / "eval_config.json").read_text())["expected_api_path"]
    rubric = TypeAdapter(Rubric).validate_json((EVALS / "rubric.json").read_text())
    return grade(fixture / "app", modified, key, rubric, api_path)


@pytest.mark.parametrize("fixture", _goldens())
def test_golden_scores_100(fixture: Path):
    result = _grade(fixture, fixture / "test_golden")
    missed = [f"{n}: {e.message}" for n, c in result.categories.items() for e in c.evidence if not e.ok]
    assert result.total == 100.0, "\n".join(missed)


@pytest.mark.parametrize(("fixture", "control", "expected_file"), _controls())
def test_control_scores_as_expected(fixture: Path, control: Path, expected_file: Path):
    expected = ControlExpectation.model_validate_json(expected_file.read_text())
    result = _grade(fixture, control)
    got = {name: result.categories[name].score for name in expected.rubric_categories}
    assert got == expected.rubric_categories, json.dumps(result.to_json(), indent=1)
    if expected.rubric_total_max is not None:
        assert result.total <= expected.rubric_total_max
    if expected.rubric_total_min is not None:
        assert result.total >= expected.rubric_total_min


@pytest.mark.parametrize("fixture", _goldens())
def test_grading_is_deterministic(fixture: Path):
    first = _grade(fixture, fixture / "test_golden").to_json()
    second = _grade(fixture, fixture / "test_golden").to_json()
    assert first == second
