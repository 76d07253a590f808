"""Eval kinds are plug-ins: another package's kind, declared as an entry point, is found by ``kind_of`` and
grades a run; a package cannot take over a kind skillassay ships; the shipped three are found the same way."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution
from pydantic import ValidationError

from skillassay import kinds, plugins
from skillassay.definitions.models import EvalDefinition
from skillassay.orchestrator.grading import grade
from skillassay.store import db
from skillassay.store.records import RUN_SCHEMA_VERSION, RunRecord

MODULE = '''
from skillassay.kinds.base import EvalKind, GradeOutcome
from skillassay.scoring.verdict import CriterionResult, decide


class ToyKind(EvalKind):
    """Passes a run whose workspace holds a file that says "toy"."""

    name = "toy"
    format = "toy"

    def reload(self, definition, suite, suite_here):
        return definition

    def grade(self, request):
        hits = sorted(p.name for p in request.modified_dir.iterdir() if "toy" in p.read_text())
        c = CriterionResult(id="says_toy", weight=1.0, fraction=1.0 if hits else 0.0, grader="toy",
                            evidence=hits or ["no file says toy"])
        return GradeOutcome(criteria=[c], verdict=decide([c], threshold=1.0), grades={"toy_files": len(hits)})


class FakeSeam(ToyKind):
    format = "plan-json"
'''

ENTRY_POINTS = """
[skillassay.kinds]
toy = toy_kind:ToyKind
seam = toy_kind:FakeSeam
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch):
    site = write_distribution(tmp_path / "site", "toy-kind", {"toy_kind.py": MODULE}, ENTRY_POINTS)
    with installed(site, monkeypatch, kinds.refresh):
        yield site


def definition(tmp_path: Path, fmt: str) -> EvalDefinition:
    app = tmp_path / "app"
    app.mkdir(exist_ok=True)
    d = EvalDefinition(
        id="toy-eval",
        title="toy",
        format="native",
        source=tmp_path / "toy.toml",
        suite_dir=tmp_path,
        fixture_dir=tmp_path,
        app_dir=app,
        prompt="say toy",
        stack="python",
        language="python",
    )
    return d.model_copy(update={"format": fmt})


def test_the_shipped_kinds_are_entry_points():
    assert plugins.names(kinds.GROUP)[:3] == ["agent", "seam", "trigger"]
    assert {n: kinds.load_kind(n).format for n in ("agent", "seam", "trigger")} == {
        "agent": "native",
        "seam": "plan-json",
        "trigger": "trigger",
    }
    assert all(plugins.shipped(kinds.GROUP, n) for n in ("agent", "seam", "trigger"))


def test_another_packages_kind_is_found_and_grades_a_run(toy, tmp_path: Path):
    d = definition(tmp_path, "toy")
    assert type(kinds.kind_of(d)).__name__ == "ToyKind"
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("nothing here\n")
    failed = grade(d, work, tmp_path / "run", "r1")
    assert failed.verdict is not None and not failed.verdict.passed
    (work / "b.txt").write_text("a toy\n")
    passed = grade(d, work, tmp_path / "run", "r2")
    assert passed.verdict is not None and passed.verdict.passed and passed.grades == {"toy_files": 1}
    assert passed.criteria[0].evidence == ["b.txt"]


def test_a_shipped_kind_cannot_be_taken_over(toy, tmp_path: Path):
    assert type(kinds.kind_of(definition(tmp_path, "plan-json"))).__name__ == "SeamKind"
    assert plugins.conflicts(kinds.GROUP) == [
        "skillassay.kinds: 'seam' of toy-kind ignored (skillassay ships that name)"
    ]


def test_a_format_no_kind_grades_is_named(tmp_path: Path):
    with pytest.raises(plugins.PluginError, match="no eval kind for format 'toy'"):
        kinds.kind_of(definition(tmp_path, "toy"))


OLD_RUN = {  # a run.json of schema 3: the Seam figures at the top level
    "schema_version": 3,
    "job_id": "j1",
    "eval_id": "e1",
    "run_index": 1,
    "run_dir": "j1/e1/run_1",
    "agent": "reference",
    "outcome": "completed",
    "started_at": "2026-11-29T22:45:12Z",
    "finished_at": "2026-11-29T22:46:12Z",
    "rubric_total": 90.0,
    "sandbox_total": 70.0,
    "combined": 78.0,
    "api_path": "access_codes",
    "api_path_correct": False,
    "emulator_spec_version": "seam-1",
    "grading_version": 2,
}


def test_an_old_run_record_reads_its_seam_figures_into_grades(tmp_path: Path):
    r = RunRecord.model_validate(OLD_RUN)
    assert r.schema_version == RUN_SCHEMA_VERSION == 4 and r.grading_version == 2
    assert r.grades == {
        "rubric_total": 90.0,
        "sandbox_total": 70.0,
        "combined": 78.0,
        "api_path": "access_codes",
        "api_path_correct": False,
        "emulator_spec_version": "seam-1",
    }
    assert r.figure("combined") == 78.0 and r.figure("api_path_correct") is None
    # the index keeps its columns, filled from the payload
    store = db.open(tmp_path)
    store.record_run(r)
    [back] = store.runs(job_id="j1")
    assert back.grades == r.grades
    row = (
        sqlite3.connect(tmp_path / db.DB_NAME)
        .execute("SELECT rubric_total, sandbox_total, combined FROM runs")
        .fetchone()
    )
    assert row == (90.0, 70.0, 78.0)


def _fields(tmp_path: Path) -> dict:
    return dict(
        id="toy-eval",
        title="toy",
        source=tmp_path / "toy.toml",
        suite_dir=tmp_path,
        fixture_dir=tmp_path,
        app_dir=tmp_path,
        prompt="say toy",
        stack="python",
        language="python",
    )


def test_a_definitions_format_is_a_registered_one(toy, tmp_path: Path):
    """EvalDefinition.format: a format a loader or a kind is registered for (here the toy kind's), else the
    error a Literal of them gives."""
    assert EvalDefinition(format="toy", **_fields(tmp_path)).format == "toy"
    with pytest.raises(ValidationError) as err:
        EvalDefinition(format="nope", **_fields(tmp_path))
    (e,) = err.value.errors()
    assert (e["type"], e["loc"]) == ("literal_error", ("format",))
    assert e["msg"] == "Input should be 'plan-json', 'native', 'trigger' or 'toy'"


def test_a_format_nothing_is_registered_for_is_refused(tmp_path: Path):
    with pytest.raises(ValidationError) as err:
        EvalDefinition(format="toy", **_fields(tmp_path))
    assert err.value.errors()[0]["msg"] == "Input should be 'plan-json', 'native' or 'trigger'"
