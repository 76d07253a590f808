"""Trigger suites (evals/trigger-evals/<id>.toml): loading, every problem named by file and field, check/list,
the committed schema, and the shipped suite."""

import json
import textwrap
import tomllib
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.definitions import load_suite
from skillassay.definitions.check import check_path
from skillassay.errors import DefinitionError
from skillassay.kinds.trigger.definitions import NO_FIXTURE, json_schema, load_trigger

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "evals" / "trigger-evals" / "seam-lock-access.toml"
runner = CliRunner()

GOOD = """
id = "demo"
title = "demo"
skill = "../../skill"
runs = 2
fixture = "tiny"
[budget]
max_turns = 5
[[prompts]]
id = "explicit-one"
category = "explicit"
should_trigger = true
prompt = "Use the demo-skill."
[[prompts]]
id = "negative-one"
category = "negative"
should_trigger = false
fixture = ""
prompt = "Summarise the repository."
"""


@pytest.fixture
def suite(tmp_path) -> Path:
    (tmp_path / "skill").mkdir()
    (tmp_path / "skill" / "SKILL.md").write_text("---\nname: demo-skill\ndescription: Greets.\n---\n# Demo\n")
    (tmp_path / "suite" / "fixtures" / "tiny" / "app").mkdir(parents=True)
    (tmp_path / "suite" / "trigger-evals").mkdir()
    return tmp_path / "suite"


def write(suite: Path, text: str, name: str = "demo") -> Path:
    path = suite / "trigger-evals" / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path) -> dict[str, str]:
    return {p.pointer: p.message for p in check_path(path) if p.severity == "error"}


def test_a_suite_loads_as_one_eval_per_prompt(suite):
    s = load_trigger(write(suite, GOOD), suite)
    assert (s.id, s.skill_name, s.runs, s.budget.max_turns) == ("demo", "demo-skill", 2, 5)
    one, two = s.prompts
    assert (one.id, one.format, one.trigger.category, one.trigger.should_trigger) == (
        "demo.explicit-one",
        "trigger",
        "explicit",
        True,
    )
    assert one.app_dir == suite / "fixtures" / "tiny" / "app" and one.trigger.fixture == "tiny"
    # "" overrides the suite's fixture: an empty repository; nothing can be copied from the sentinel
    assert two.trigger.fixture is None and two.app_dir == NO_FIXTURE and not two.app_dir.is_dir()
    assert one.trigger.skill_dir == (suite.parent / "skill").resolve()


def test_trigger_suites_run_only_when_named(suite):
    write(suite, GOOD)
    (suite / "agent-evals").mkdir()
    with pytest.raises(DefinitionError):  # a folder with nothing but a trigger suite has no evals to run
        load_suite(suite)
    assert [e.id for e in load_suite(suite / "trigger-evals" / "demo.toml")] == [
        "demo.explicit-one",
        "demo.negative-one",
    ]
    assert len(load_suite(suite / "trigger-evals")) == 2


def test_every_problem_named_by_file_and_field(suite):
    path = write(
        suite,
        """
        id = "other"
        title = "t"
        skill = "../../missing"
        runs = 0
        fixture = "nope"
        surprise = 1
        [budget]
        max_turns = 0
        [[prompts]]
        id = "Bad Id"
        category = "vague"
        should_trigger = true
        prompt = "x"
        [[prompts]]
        id = "n1"
        category = "negative"
        should_trigger = true
        prompt = "y"
        [[prompts]]
        id = "n1"
        category = "explicit"
        should_trigger = false
        fixture = "../escape"
        prompt = ""
    """,
    )
    found = problems(path)
    assert found["/id"].startswith("must match the file name")
    assert "no SKILL.md" in found["/skill"]
    assert "/runs" in found and "/budget/max_turns" in found
    assert found["/surprise"] == "unknown field (not part of this format)"
    assert "no fixture folder fixtures/nope/" in found["/fixture"]
    assert "/prompts/0/id" in found
    assert found["/prompts/0/category"].startswith(
        "unknown category 'vague'; expected one of: explicit, implicit"
    )
    assert "expected false" in found["/prompts/1/should_trigger"]
    assert found["/prompts/2/id"] == "prompt id 'n1' used twice"
    assert "expected true" in found["/prompts/2/should_trigger"]
    assert "not a fixture name" in found["/prompts/2/fixture"]
    assert "/prompts/2/prompt" in found
    assert all(p.file == path for p in check_path(path))


def test_warnings_for_a_one_sided_suite_and_a_named_skill_in_an_implicit_prompt(suite):
    path = write(
        suite,
        GOOD.replace(
            'category = "negative"\nshould_trigger = false', 'category = "implicit"\nshould_trigger = true'
        ).replace("Summarise the repository.", "Do what demo-skill does."),
    )
    warnings = {p.pointer: p.message for p in check_path(path) if p.severity == "warning"}
    assert "precision means little" in warnings["/prompts"]
    assert "names the skill" in warnings["/prompts/1/prompt"]
    load_trigger(path, suite)  # warnings never stop a run


def test_check_and_list_through_the_cli(suite):
    path = write(suite, GOOD)
    assert runner.invoke(app, ["check", str(path)]).exit_code == 0
    out = runner.invoke(app, ["list", str(path), "--json"])
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.stdout)
    assert row["format"] == "trigger" and row["skill"] == "demo-skill"
    assert [p["id"] for p in row["prompts"]] == ["demo.explicit-one", "demo.negative-one"]
    assert row["categories"] == {"explicit": 1, "implicit": 0, "contextual": 0, "negative": 1}
    write(suite, GOOD.replace('category = "explicit"', 'category = "obvious"'))
    bad = runner.invoke(app, ["check", str(path)])
    assert bad.exit_code == 2 and "demo.toml at /prompts/0/category" in bad.output
    assert runner.invoke(app, ["list", str(path)]).exit_code == 2


def test_committed_schema_matches_the_model_and_accepts_the_shipped_suite():
    committed = json.loads((REPO / "docs" / "schema" / "trigger-eval.schema.json").read_text())
    assert committed == json.loads(json.dumps(json_schema())), (
        "docs/schema/trigger-eval.schema.json is stale: regenerate it (see "
        "skillassay.kinds.trigger.definitions)"
    )
    data = tomllib.loads(SHIPPED.read_text())
    jsonschema.validate(data, committed)
    data["prompts"][0]["category"] = "obvious"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, committed)


def test_the_shipped_suite_for_seam_lock_access():
    s = load_trigger(SHIPPED, REPO / "evals")
    assert (
        s.skill_name == "seam-lock-access"
        and s.skill_dir == REPO / "examples" / "skills" / "seam-lock-access"
    )
    cats = s.categories()
    assert len(s.prompts) >= 12 and all(
        cats[c] >= 2 for c in ("explicit", "implicit", "contextual", "negative")
    )
    assert all(p.trigger.should_trigger == (p.trigger.category != "negative") for p in s.prompts)
    assert s.budget.max_turns and s.budget.stop_on_trigger
    assert not [p for p in check_path(SHIPPED) if p.severity == "error"]
    # the evals folder still runs its evals only; check and list see the suite too
    assert not any(e.trigger for e in load_suite(REPO / "evals"))
    listed = json.loads(runner.invoke(app, ["list", str(REPO / "evals"), "--json"]).stdout)
    assert "seam-lock-access" in [r["id"] for r in listed if r["format"] == "trigger"]
