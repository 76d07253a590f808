"""A job's summary and reports are its kind's: another package's kind that summarises jobs its own way
contributes the terminal table, the JSON summary, its figure column and the reason a run failed; the generic
code names no kind."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution
from typer.testing import CliRunner

from skillassay import kinds, plugins
from skillassay.cli.main import app
from skillassay.report.runs import failure_reason
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.files import run_dir_rel, write_job_file, write_run_file
from skillassay.store.records import JobRecord, RunRecord

MODULE = """
from rich.table import Table

from skillassay.kinds.base import EvalKind, FigureColumn, GradeOutcome, Headline, JobSummary


class TallySummary(JobSummary):
    key = "tally"

    def __init__(self, runs):
        self.count = sum(int(r.grades.get("tally", 0)) for r in runs)

    def to_dict(self):
        return {"count": self.count}

    def tables(self, title):
        t = Table(title=f"{title}: tallied", title_justify="left")
        t.add_column("tally, counted over every run of the job")
        t.add_row(f"counted {self.count}")
        return [t]

    def headline(self):
        return Headline(name="tally", value=float(self.count))

    @property
    def figures(self):
        return self


class TallyKind(EvalKind):
    name = "tally"
    format = "tally"
    summarises_jobs = True
    job_noun = "a tally"
    figure_columns = (FigureColumn(key="tally", grade="tally", header="Tallied"),)

    def reload(self, definition, suite, suite_here):
        return definition

    def grade(self, request):
        return GradeOutcome()

    def owns_runs(self, runs):
        return any("tally" in r.grades for r in runs)

    def job_summary(self, runs):
        return TallySummary(runs)

    def failed_criterion(self, run):
        return f"tallied only {run.grades['tally']}" if "tally" in run.grades else None
"""


@pytest.fixture
def tally(tmp_path: Path, monkeypatch):
    site = write_distribution(
        tmp_path / "site",
        "tally-kind",
        {"tally_kind.py": MODULE},
        "[skillassay.kinds]\ntally = tally_kind:TallyKind\n",
    )
    with installed(site, monkeypatch, kinds.refresh):
        yield site


def write_job(results: Path, tallies: list[int]) -> list[RunRecord]:
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    job = JobRecord(job_id="jt", created_at=t0, suite="evals", agent="command", status="finished")
    runs = []
    for i, n in enumerate(tallies, 1):
        crit = [CriterionResult(id="tally", weight=1, fraction=0.0, grader="tally")]
        run = RunRecord(
            job_id="jt",
            eval_id="count",
            run_index=i,
            run_dir=run_dir_rel("jt", "count", i),
            agent="command",
            outcome="completed",
            started_at=t0,
            finished_at=t0,
            criteria=crit,
            verdict=decide(crit, threshold=1.0),
            grades={"tally": n},
        )
        job.planned.append(("count", i, "skill"))
        write_run_file(results, run)
        runs.append(run)
    write_job_file(results, job)
    return runs


def test_the_jobs_kind_gives_its_summary_json_and_reasons(tally, tmp_path: Path):
    results = tmp_path / "results"
    runs = write_job(results, [2, 3])
    assert kinds.job_kind(runs) is kinds.load_kind("tally")
    assert kinds.job_kind([r.model_copy(update={"grades": {}}) for r in runs]) is None
    shown = CliRunner().invoke(app, ["report", "jt", "--results", str(results)], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert "Job jt: tallied" in shown.output and "counted 5" in shown.output
    as_json = CliRunner().invoke(app, ["report", "jt", "--results", str(results), "--json", "-"])
    got = json.loads(as_json.output)
    assert got["tally"] == {"count": 5} and [r["tally"] for r in got["runs"]] == [2, 3]
    assert "combined" in got["runs"][0]  # the Seam kind's columns stay: every registered kind's are shown
    listed = CliRunner().invoke(
        app, ["runs", "--job", "jt", "--results", str(results)], env={"COLUMNS": "200"}
    )
    assert "tallied" in listed.output and "combined" in listed.output
    assert failure_reason(runs[0]) == "tallied only 2"


COLUMN_MODULE = """
from skillassay.kinds.base import EvalColumn, EvalKind, GradeOutcome


class TallyColumn(EvalColumn):
    header = "Tallies"
    fields = {"tally_sum": "runs", "tally_runs": "passed"}

    def values(self, definition, runs):
        got = [int(r.grades["tally"]) for r in runs if "tally" in r.grades]
        return {"tally_sum": sum(got) if got else None, "tally_runs": len(got) if got else None}

    def cell(self, values, graded):
        if values.get("tally_sum") is None:
            return "-"
        return f"{values['tally_sum']} over {values['tally_runs']}/{graded}"


class ColumnKind(EvalKind):
    name = "columned"
    format = "columned"
    eval_columns = (TallyColumn(),)

    def reload(self, definition, suite, suite_here):
        return definition

    def grade(self, request):
        return GradeOutcome()

    def unjudged_notes(self, ids):
        tallies = [i for i in ids if i.startswith("tally_")]
        return [i for i in ids if i not in tallies] + (["the tally layer"] if tallies else [])
"""


@pytest.fixture
def columned(tmp_path: Path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    (root / "column_kind.py").write_text(COLUMN_MODULE)
    info = root / "column_kind-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: column-kind\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skillassay.kinds]\ncolumned = column_kind:ColumnKind\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(root))
    plugins.refresh()
    kinds.refresh()
    yield root
    plugins.refresh()
    kinds.refresh()


def test_a_kinds_per_eval_column_and_unjudged_notes_are_in_the_generic_summary(columned, tmp_path: Path):
    from rich.console import Console

    from skillassay.orchestrator.summary import summarise, table

    runs = write_job(tmp_path / "results", [2, 3])
    for run in runs:
        assert run.verdict is not None
        run.verdict.unjudged = ["tally_a", "tally_b", "gate_c"]
    other = runs[0].model_copy(update={"eval_id": "other", "grades": {}})
    summaries = summarise([*runs, other], [])
    got = [s.model_dump(mode="json") for s in summaries]
    assert [list(g)[list(g).index("runs") + 1] for g in got] == ["tally_sum", "tally_sum"]
    assert [list(g)[list(g).index("passed") + 1] for g in got] == ["tally_runs", "tally_runs"]
    assert [(g["tally_sum"], g["tally_runs"]) for g in got] == [(5, 2), (None, None)]
    console = Console(width=250, record=True)
    console.print(table(summaries, "Job jt", width=250))
    text = console.export_text()
    assert "Tallies" in text and "5 over 2/2" in text
    assert "unjudged: gate_c, the tally layer" in text
    narrow = Console(width=60, record=True)
    narrow.print(table(summaries, "Job jt", width=60))
    assert "Tallies" not in narrow.export_text()  # left out after the cost when the table does not fit
