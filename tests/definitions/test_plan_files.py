"""The plan's answer_key.json and rubric.json as dataclasses: ``exact`` (read without pydantic, for a fast
rubric) never accepts what pydantic rejects, and never reads a value differently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from skillassay.definitions.jsonfile import validate
from skillassay.seam.plan import AnswerKey, Rubric, exact

EVALS = Path(__file__).resolve().parents[2] / "evals"

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=4)
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
KEY_FIELDS = [
    "expected_files_modified",
    "expected_new_files_allowed",
    "expected_calls",
    "expected_placements",
    "required_parameters",
    "expected_package_additions",
    "unknown",
]
key_like = st.dictionaries(
    st.sampled_from(KEY_FIELDS),
    st.one_of(
        values,
        st.lists(st.text(max_size=3), max_size=3),
        st.dictionaries(st.text(max_size=3), st.lists(st.text(max_size=3), max_size=2), max_size=2),
    ),
    max_size=4,
)
category = st.fixed_dictionaries(
    {
        "name": st.one_of(st.text(max_size=3), st.integers()),
        "weight": st.one_of(st.integers(0, 100), st.floats(0, 100), st.text(max_size=3), st.booleans()),
        "check": st.text(max_size=3),
    },
    optional={"extra": st.integers()},
)
rubric_like = st.one_of(st.fixed_dictionaries({"categories": st.lists(category, max_size=3)}), values)


def _agree(cls: type, data: object) -> None:
    fast = exact(cls, data)
    try:
        slow = TypeAdapter(cls).validate_python(data)
    except ValidationError:
        assert fast is None, data
        return
    assert fast is None or fast == slow, data


@settings(max_examples=300, deadline=None)
@given(key_like)
def test_exact_answer_keys_agree_with_pydantic(data):
    _agree(AnswerKey, data)


@settings(max_examples=300, deadline=None)
@given(rubric_like)
def test_exact_rubrics_agree_with_pydantic(data):
    _agree(Rubric, data)


@pytest.mark.parametrize(
    "path",
    [*sorted(EVALS.glob("fixtures/*/answer_key.json")), EVALS / "rubric.json"],
    ids=lambda p: p.parent.name,
)
def test_shipped_files_are_read_without_pydantic(path: Path):
    cls = Rubric if path.name == "rubric.json" else AnswerKey
    data = json.loads(path.read_text())
    assert exact(cls, data) == TypeAdapter(cls).validate_python(data)


def test_errors_name_the_field(tmp_path: Path):
    problems: list = []
    path = tmp_path / "answer_key.json"
    assert validate(AnswerKey, {"expected_calls": {"create": "x"}, "bogus": 1}, path, problems) is None
    assert {(p.pointer, p.message) for p in problems} == {
        ("/expected_calls/create", "Input should be a valid list"),
        ("/bogus", "unknown field (not part of this format)"),
    }
    problems.clear()
    assert validate(Rubric, {}, tmp_path / "rubric.json", problems) is None
    assert [(p.pointer, p.message) for p in problems] == [("/categories", "required field is missing")]
