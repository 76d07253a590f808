"""The shipped fixtures: each golden scores 100, each negative control what its .expected.json says.

Fixtures are discovered at run time, so the test covers every fixture present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter
from rubric_helpers import REPO

from skillassay.definitions.models import AnswerKey, ControlExpectation, Rubric
from skillassay.graders.rubric import grade

EVALS = REPO / "evals"
FIXTURES = EVALS / "fixtures"

# Goldens that cannot score 100 because of the fixture, not the grader (see the reason).
KNOWN_FIXTURE_ISSUES: dict[str, str] = {}  # fixture -> why its golden may not score 100 (none now)


def _ready(fixture: Path) -> bool:
    return all((fixture / f).exists() for f in ("answer_key.json", "eval_config.json", "app"))


def _fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and _ready(p)) if FIXTURES.is_dir() else []


def _goldens():
    out = []
    for fixture in _fixtures():
        if (fixture / "test_golden").is_dir():
            marks = []
            if fixture.name in KNOWN_FIXTURE_ISSUES:
                marks.append(pytest.mark.xfail(reason=KNOWN_FIXTURE_ISSUES[fixture.name], strict=False))
            out.append(pytest.param(fixture, id=fixture.name, marks=marks))
    return out


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


@pytest.mark.parametrize("fixture", [pytest.param(f, id=f.name) for f in _fixtures() if (f / "test_golden").is_dir()])
def test_grading_is_deterministic(fixture: Path):
    first = _grade(fixture, fixture / "test_golden").to_json()
    second = _grade(fixture, fixture / "test_golden").to_json()
    assert first == second
