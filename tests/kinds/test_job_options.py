"""A job asks the kinds of its evals what they need of it (``EvalKind.job_settings``): another package's kind
refuses a job it cannot run, and the refusal reaches the user as a one-line error, exit 2, nothing recorded.
The job itself names no kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution
from typer.testing import CliRunner

from skillassay import kinds
from skillassay.cli.main import app

MODULE = '''
from pathlib import Path

from skillassay.definitions.formats import DefinitionFormat
from skillassay.definitions.models import EvalDefinition
from skillassay.kinds.base import EvalKind, GradeOutcome, JobSettings


class PairFormat(DefinitionFormat):
    """A ``*.pair`` file is one eval (its text: the prompt)."""

    name = "pair"
    where = "<id>.pair"
    named_as = "a .pair file"

    def named(self, path):
        return (path, path.parent) if path.suffix == ".pair" else None

    def in_suite(self, suite):
        return sorted(suite.glob("*.pair"))

    def inspect(self, source, suite_dir):
        app = suite_dir / "app"
        app.mkdir(exist_ok=True)
        d = EvalDefinition(
            id=source.stem, title=source.stem, format="native", source=source, suite_dir=suite_dir,
            fixture_dir=suite_dir, app_dir=app, prompt=source.read_text(), stack="python", language="python",
        )
        return d.model_copy(update={"format": "pair"}), []  # a format the model does not list


pair_format = PairFormat()


class PairKind(EvalKind):
    """Runs come in pairs: a job asked for an odd number of runs is refused."""

    name = "pair"
    format = "pair"

    def reload(self, definition, suite, suite_here):
        return definition

    def brings_skill(self, suite):
        return suite.suffix == ".pair"  # a pair's skill is the file beside it

    def job_settings(self, evals, asked):
        if asked.baseline:
            return f"--baseline: {evals[0].id} brings its own skill (skill {asked.skill})"
        if asked.runs is not None and asked.runs % 2:
            return f"--runs {asked.runs}: {asked.agent} runs of {evals[0].id} come in pairs"
        return JobSettings(skill=asked.skill, runs=asked.runs or 2)

    def grade(self, request):
        return GradeOutcome()
'''

ENTRY_POINTS = """
[skillassay.kinds]
pair = pair_kind:PairKind

[skillassay.definitions]
pair = pair_kind:pair_format
"""


@pytest.fixture
def pair(tmp_path: Path, monkeypatch):
    site = write_distribution(tmp_path / "site", "pair-kind", {"pair_kind.py": MODULE}, ENTRY_POINTS)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "twins.pair").write_text("say hello twice\n")
    with installed(site, monkeypatch, kinds.refresh):
        yield suite / "twins.pair"


def test_a_kinds_refusal_of_the_job_is_the_users_error(pair: Path, tmp_path: Path):
    results = tmp_path / "results"
    out = CliRunner().invoke(
        app, ["run", str(pair), "--agent", "noop", "--runs", "3", "--results", str(results)]
    )
    assert out.exit_code == 2, out.output
    assert "error: --runs 3: noop runs of twins come in pairs" in out.output
    assert [p.name for p in results.iterdir() if p.is_dir()] == []  # no job recorded


def test_a_kind_whose_suite_brings_its_skill_decides_about_baseline(pair: Path, tmp_path: Path):
    out = CliRunner().invoke(
        app, ["run", str(pair), "--agent", "noop", "--baseline", "--results", str(tmp_path / "results")]
    )
    # not "--baseline ... give --skill too": the kind said its suite brings the skill, and refused itself
    assert out.exit_code == 2, out.output
    assert "error: --baseline: twins brings its own skill (skill None)" in out.output
