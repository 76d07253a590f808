"""``list`` and the report's pages ask the kinds: another package's kind lists its own suites (its JSON rows
and tables, alone when the path holds only its suites) and brings its own template to the job's page, the
comparison page and the Evals page's word for its evals; the generic code names no kind."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution
from typer.testing import CliRunner

from skillassay import kinds
from skillassay.cli.main import app
from skillassay.definitions.models import EvalDefinition
from skillassay.report.site import build_site
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.files import run_dir_rel, write_job_file, write_run_file
from skillassay.store.records import JobRecord, RunRecord

MODULE = """
from rich.table import Table

from skillassay.kinds.base import EvalKind, GradeOutcome, Headline, JobComparison, JobSummary, SuiteListing


class TallySummary(JobSummary):
    key = "tally"

    def __init__(self, runs):
        self.count = sum(int(r.grades.get("tally", 0)) for r in runs)

    def to_dict(self):
        return {"count": self.count}

    def tables(self, title):
        return []

    def headline(self):
        return Headline(name="tally", value=float(self.count))

    @property
    def figures(self):
        return self


class TallyComparison(JobComparison):
    key = "tally"
    verdict = "tallies compared"

    def __init__(self, a_runs, b_runs):
        self.change = TallySummary(b_runs).count - TallySummary(a_runs).count

    def to_dict(self):
        return {"change": self.change}

    def tables(self, a, b):
        return []

    def nothing_in_common(self, a, b):
        return None

    def worse(self):
        return self.change < 0

    @property
    def figures(self):
        return self


class TallyListing(SuiteListing):
    def __init__(self, files):
        self.files = files

    def rows(self):
        return [{"id": f.stem, "format": "census", "count": len(f.read_text().split())} for f in self.files]

    def tables(self, path, alone):
        table = Table(title=f"{len(self.files)} tally" + (" alone" if alone else ""))
        table.add_column("tally")
        for f in self.files:
            table.add_row(f.stem)
        return [table] if self.files else []


class CensusKind(EvalKind):
    name = "census"
    format = "census"
    summarises_jobs = True
    template_package = "census_kind"
    report_template = "tally.html"
    eval_label = "tally count"

    def reload(self, definition, suite, suite_here):
        return definition

    def grade(self, request):
        return GradeOutcome()

    def owns_runs(self, runs):
        return any("tally" in r.grades for r in runs)

    def job_summary(self, runs):
        return TallySummary(runs)

    def compare_jobs(self, a_runs, b_runs, a, b):
        return TallyComparison(a_runs, b_runs)

    def lists_only(self, path):
        return path.suffix == ".tally"

    def suite_listing(self, path):
        files = [path] if path.suffix == ".tally" else sorted(path.glob("*.tally")) if path.is_dir() else []
        return TallyListing(files)
"""

TEMPLATE = """
{% macro job_kind() %}tallies, counted over the job{% endmacro %}
{% macro job_summary(t) %}<h2 id="tally">Tallied {{ t.count }}</h2>{% endmacro %}
{% macro job_comparison(t, cmp, a_label, b_label) %}
<h2>Tally {{ a_label }} to {{ b_label }}: {{ t.change }}</h2>
{% endmacro %}
"""


@pytest.fixture
def tally(tmp_path: Path, monkeypatch):
    site = write_distribution(
        tmp_path / "site-packages",
        "census-kind",
        {"census_kind/__init__.py": MODULE, "census_kind/templates/tally.html": TEMPLATE},
        "[skillassay.kinds]\ncensus = census_kind:CensusKind\n",
    )
    with installed(site, monkeypatch, kinds.refresh):
        yield site


def write_job(results: Path, job_id: str, tallies: list[int]) -> None:
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    job = JobRecord(job_id=job_id, created_at=t0, suite="evals", agent="command", status="finished")
    for i, n in enumerate(tallies, 1):
        crit = [CriterionResult(id="tally", weight=1, fraction=1.0, grader="tally")]
        run = {
            "job_id": job_id,
            "eval_id": "count",
            "run_index": i,
            "agent": "command",
            "outcome": "completed",
        }
        write_run_file(
            results,
            RunRecord(
                **run,
                run_dir=run_dir_rel(job_id, "count", i),
                started_at=t0,
                finished_at=t0,
                criteria=crit,
                verdict=decide(crit),
                grades={"tally": n},
            ),
        )
        job.planned.append(("count", i, "skill"))
    write_job_file(results, job)


def test_a_kind_lists_its_own_suites(tally, tmp_path: Path):
    suite = tmp_path / "tallies"
    suite.mkdir()
    (suite / "sheep.tally").write_text("one two three\n")
    listed = CliRunner().invoke(app, ["list", str(suite / "sheep.tally"), "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output) == [{"id": "sheep", "format": "census", "count": 3}]
    shown = CliRunner().invoke(app, ["list", str(suite / "sheep.tally")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "alone" in shown.output and "sheep" in shown.output  # the kind's table, told it is alone
    assert "eval(s) in" not in shown.output  # only the kind's suites: no evals table


def test_a_kind_brings_its_own_template_to_the_report(tally, tmp_path: Path):
    results = tmp_path / "results"
    write_job(results, "ja", [2, 3])
    write_job(results, "jb", [4])
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    source = tmp_path / "count.tally"
    source.write_text("one\n")
    count = EvalDefinition(
        id="count",
        title="Count",
        format="census",
        prompt="count",
        stack="python",
        source=source,
        suite_dir=tmp_path,
        fixture_dir=app_dir,
        app_dir=app_dir,
        language="python",
    )
    out = tmp_path / "out"
    build_site(results, out, job_ids=["ja", "jb"], definitions=[count])
    job_page = (out / "jobs" / "ja" / "index.html").read_text()
    assert "<dt>kind</dt><dd>tallies, counted over the job</dd>" in job_page
    assert '<h2 id="tally">Tallied 5</h2>' in job_page
    assert "Tally ja to jb: -1" in (out / "compare" / "ja--jb.html").read_text()
    assert "· tally count</span>" in (out / "index.html").read_text()


OWN_PARTS = """
{% macro run_figures(run) %}<dt>tallied</dt><dd>{{ run.grades.get('tally') }} sheep</dd>{% endmacro %}
{% macro eval_facts(d) %}<dt>counted by</dt><dd>{{ d.id }} shepherd</dd>{% endmacro %}
{% macro eval_details(d) %}<p>Every sheep counts once.</p>{% endmacro %}
"""


def test_a_kind_brings_its_own_run_figures_and_eval_details(tally, tmp_path: Path, monkeypatch):
    """The run page and the Evals page ask every kind's template for its parts; a kind without them (the
    trigger kind) or without a template (agent evals) adds nothing."""
    (tmp_path / "site-packages" / "census_kind" / "templates" / "tally.html").write_text(TEMPLATE + OWN_PARTS)
    results = tmp_path / "results"
    write_job(results, "ja", [2, 3])
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (tmp_path / "count.tally").write_text("one\n")
    common = {"prompt": "count", "stack": "python", "suite_dir": tmp_path, "language": "python"}
    count = EvalDefinition(
        id="count",
        title="Count",
        format="census",
        source=tmp_path / "count.tally",
        fixture_dir=app_dir,
        app_dir=app_dir,
        **common,
    )
    out = tmp_path / "out"
    build_site(results, out, definitions=[count])
    assert "<dt>tallied</dt><dd>3 sheep</dd>" in (out / "jobs" / "ja" / "count" / "run_2.html").read_text()
    evals = (out / "index.html").read_text()
    assert "<dt>counted by</dt><dd>count shepherd</dd><dt>threshold</dt>" in evals
    assert "<p>Every sheep counts once.</p>" in evals and "No criteria declared." not in evals


def test_the_generic_pages_name_no_seam_figure():
    """The Seam kind's markup (its API path, layer tables) lives in its own template; the generic pages take
    the figures' columns from the kinds."""
    from skillassay.report import site
    from skillassay.seam.kind import SeamKind

    templates = Path(site.__file__).parent / "templates"
    for page in ("run.html", "job.html", "evals.html"):
        text = (templates / page).read_text()
        assert not [k for k in ("api_path", "rubric_total", "sandbox_total", "has_sandbox") if k in text], (
            page
        )
    assert SeamKind.template_package == "skillassay.seam" and SeamKind().template_name() == "seam/report.html"
