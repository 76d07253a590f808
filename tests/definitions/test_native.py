"""The native agent-eval format: the shipped definition loads; each bad input is reported with its file and
field (JSON pointer), every problem at once; the committed JSON schema matches the model and accepts the
shipped file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from skillassay.definitions.agent_eval import Criterion, ForbiddenBehaviour, QualityGate, json_schema
from skillassay.definitions.native import load_native
from skillassay.definitions.suite import load_suite
from skillassay.errors import DefinitionError

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "evals" / "agent-evals" / "cancellation-support.toml"

MINIMAL = """
id = "{id}"
title = "A small eval"
prompt = "Add the thing."
fixture = "tiny"

[[criteria]]
id = "does_it"
description = "The change is made"
weight = 1
grader = "diff"
[criteria.options]
owning_module = "app.py"
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "fixtures" / "tiny" / "app").mkdir(parents=True)
    (tmp_path / "fixtures" / "tiny" / "app" / "app.py").write_text("x = 1\n")
    (tmp_path / "agent-evals").mkdir()
    return tmp_path


def write(suite: Path, text: str, name: str = "tiny-eval") -> Path:
    path = suite / "agent-evals" / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path, suite: Path) -> dict[str, str]:
    with pytest.raises(DefinitionError) as info:
        load_native(path, suite)
    for p in info.value.problems:
        assert p.file == path, p  # every problem names the file
    return {p.pointer: p.message for p in info.value.problems}


# ----------------------------------------------------------------------------- good files
def test_shipped_definition_loads():
    d = load_native(SHIPPED, REPO / "evals")
    assert d.format == "native" and d.id == "cancellation-support" and d.status == "experimental"
    assert [(c.id, c.weight) for c in d.criteria] == [
        ("cancels_via_service", 25),
        ("respects_transitions", 25),
        ("adds_meaningful_tests", 20),
        ("scope_discipline", 15),
        ("respects_policy", 15),
    ]
    assert all(isinstance(c, Criterion) for c in d.criteria)
    assert len(d.forbidden_behaviour) == 5 and all(
        isinstance(f, ForbiddenBehaviour) for f in d.forbidden_behaviour
    )
    assert [g.id for g in d.quality_requirements] == ["build", "test"]
    assert all(isinstance(g, QualityGate) for g in d.quality_requirements)
    assert d.pass_threshold == 0.8
    assert d.app_dir == REPO / "evals" / "fixtures" / "order-service" / "app"
    assert d.golden_dir is not None and d.golden_dir.name == "test_golden"
    assert sorted(c.name for c in d.controls) == [
        "cancels_any_status",
        "claims_without_running",
        "deletes_failing_test",
        "refactors_unrelated_code",
        "writes_database_directly",
    ]
    assert d.expected_behaviour and d.required_concepts and d.notes
    assert "cancel" in d.prompt


def test_suite_discovery_finds_the_native_eval():
    ids = [d.id for d in load_suite(REPO / "evals")]
    assert "cancellation-support" in ids


def test_minimal_file_gets_defaults(suite):
    d = load_native(write(suite, MINIMAL.format(id="tiny-eval")), suite)
    assert d.pass_threshold == 0.8 and d.status == "experimental" and d.language == "python"
    assert d.criteria[0].options == {"owning_module": "app.py"}  # only what was written
    assert d.forbidden_behaviour == [] and d.quality_requirements == [] and d.controls == []


# ----------------------------------------------------------------------------- bad files
def test_toml_syntax_error_names_the_file(suite):
    path = write(suite, 'id = "tiny-eval"\ntitle = \n')
    found = problems(path, suite)
    assert "invalid TOML" in found[""]


def test_missing_file(tmp_path):
    with pytest.raises(DefinitionError, match="file is missing"):
        load_native(tmp_path / "nope.toml", tmp_path)


def test_every_problem_is_reported_at_once(suite):
    text = "pass_threshold = 1.5\nsurprise = true\n" + MINIMAL.format(id="other-id").replace(
        'fixture = "tiny"', 'fixture = "missing"'
    ).replace('title = "A small eval"\n', "")
    found = problems(write(suite, text), suite)
    assert found["/title"] == "required field is missing"
    assert "less than or equal to 1" in found["/pass_threshold"]
    assert found["/surprise"] == "unknown field (not part of this format)"
    assert "must match the file name" in found["/id"]
    assert "no fixture folder fixtures/missing/" in found["/fixture"]


@pytest.mark.parametrize(
    "change, pointer, message",
    [
        (("weight = 1", "weight = 0"), "/criteria/0/weight", "greater than 0"),
        (("weight = 1", 'weight = "heavy"'), "/criteria/0/weight", "valid number"),
        (('grader = "diff"', 'grader = "vibes"'), "/criteria/0/grader", "unknown grader 'vibes'"),
        (('grader = "diff"\n', ""), "/criteria/0/grader", "required field is missing"),
        (
            ('owning_module = "app.py"', 'owning_modul = "app.py"'),
            "/criteria/0/options/owning_modul",
            "unknown field",
        ),
        (('id = "does_it"', 'id = "Does It"'), "/criteria/0/id", "should match pattern"),
        (('prompt = "Add the thing."', 'prompt = ""'), "/prompt", "at least 1 character"),
        (
            ('title = "A small eval"', 'title = "A small eval"\nstatus = "beta"'),
            "/status",
            "'experimental' or 'stable'",
        ),
    ],
)
def test_bad_field_is_reported_at_its_pointer(suite, change, pointer, message):
    old, new = change
    text = MINIMAL.format(id="tiny-eval")
    assert old in text
    found = problems(write(suite, text.replace(old, new, 1)), suite)
    assert pointer in found, found
    assert message in found[pointer]


def test_no_criteria(suite):
    text = MINIMAL.format(id="tiny-eval").split("[[criteria]]")[0]
    assert "/criteria" in problems(write(suite, text), suite)


def test_cross_field_checks(suite):
    text = (
        MINIMAL.format(id="tiny-eval").replace('grader = "diff"', 'grader = "diff"\ngates = ["build"]')
        + """
[[criteria]]
id = "does_it"
description = "again"
weight = 1
grader = "hidden_tests"

[[forbidden_behaviour]]
id = "bad"
description = "bad"
detector = "telepathy"

[[forbidden_behaviour]]
id = "cmds"
description = "commands"
detector = "forbidden_commands"

[[quality_requirements]]
id = "test"
command = "pytest"
requires = ["lint"]
"""
    )
    found = problems(write(suite, text), suite)
    assert "no quality requirement 'build'" in found["/criteria/0/gates/0"]
    assert "used twice" in found["/criteria/1/id"]
    assert "no hidden tests folder tiny-eval/hidden_tests/" in found["/criteria/1/options/path"]
    assert "unknown detector 'telepathy'" in found["/forbidden_behaviour/0/detector"]
    assert found["/forbidden_behaviour/1/options"] == "required field is missing"
    assert "no gate 'lint'" in found["/quality_requirements/0/requires/0"]


def test_bad_control_expectation_is_reported(suite):
    controls = suite / "fixtures" / "tiny" / "test_controls"
    (controls / "broken").mkdir(parents=True)
    (controls / "broken.expected.json").write_text(json.dumps({"description": "x", "verdict": "maybe"}))
    with pytest.raises(DefinitionError) as info:
        load_native(write(suite, MINIMAL.format(id="tiny-eval")), suite)
    (p,) = info.value.problems
    assert p.file == controls / "broken.expected.json" and p.pointer == "/verdict"


# ----------------------------------------------------------------------------- the schema
def test_committed_schema_matches_the_model():
    committed = json.loads((REPO / "docs" / "schema" / "agent-eval.schema.json").read_text())
    assert committed == json.loads(json.dumps(json_schema())), (
        "docs/schema/agent-eval.schema.json is stale: regenerate it (see skillassay.definitions.agent_eval)"
    )


def test_schema_accepts_the_shipped_file_and_rejects_a_bad_one():
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = tomllib.loads(SHIPPED.read_text())
    jsonschema.validate(data, schema)
    data["criteria"][0]["weight"] = -3
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_max_change_size_takes_bytes_or_a_unit_and_refuses_nonsense(suite: Path) -> None:
    good = load_native(write(suite, 'max_change_size = "50MB"\n' + MINIMAL.format(id="tiny-eval")), suite)
    assert good.max_change_size == 50_000_000
    assert load_native(write(suite, MINIMAL.format(id="tiny-eval")), suite).max_change_size is None
    for bad in ('"lots"', "0"):
        found = problems(write(suite, f"max_change_size = {bad}\n" + MINIMAL.format(id="tiny-eval")), suite)
        assert "/max_change_size" in found, found
