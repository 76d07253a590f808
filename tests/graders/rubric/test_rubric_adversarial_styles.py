"""The labelled apps of ``labelled_styles`` (styles the fixtures do not use, for every stack and Seam path):
each rubric category scores what the app really does."""

from __future__ import annotations

import pytest
from labelled_styles import CASES, Case
from rubric_helpers import App, scores


def grade_case(tmp_path, case: Case):
    return App(tmp_path, case.pristine, case.changes).grade(
        case.key, api_path=case.path, endpoints=case.endpoints
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_labelled_case_scores_as_labelled(tmp_path, case: Case):
    result = grade_case(tmp_path, case)
    got = {k: v for k, v in scores(result).items() if k in case.expected}
    assert got == case.expected, [
        (name, [e.message for e in result.categories[name].evidence])
        for name in case.expected
        if got[name] != case.expected[name]
    ]


def test_every_stack_and_seam_path_is_covered():
    assert {c.stack for c in CASES} == {"express", "nextjs", "flask", "fastapi", "rails"}
    assert {c.path for c in CASES} == {"reservation_automations", "access_grants", "access_codes"}
    for stack in ("express", "nextjs", "flask", "fastapi"):
        assert len({c.path for c in CASES if c.stack == stack}) >= 2, stack


def test_evidence_names_the_runner_a_call_is_handed_to(tmp_path):
    case = next(c for c in CASES if c.name == "fastapi_access_grants_depends_class_to_thread")
    result = grade_case(tmp_path, case)
    evidence = [e.message for e in result.categories["api_path_selection"].evidence]
    assert any("`access_grants.create, handed to to_thread`" in m for m in evidence), evidence
