"""The reason a run failed or was not scored, shown wherever people look first: the end-of-run table's Notes,
`runs --job`, the report's job page, the JUnit failure message and `check --controls`; one derivation for
all."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.orchestrator.summary import summarise, table
from skillassay.outcomes import HarnessFailure
from skillassay.report.ci import junit_xml
from skillassay.report.runs import run_reason
from skillassay.report.site import build_site
from skillassay.scoring.reasons import short_reason
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.files import write_run_file

INSTALL = "install failed: `pip install -r requirements.txt` exited with 1"
JOB = "20261201-000000-ab12"


def _golden_that_did_not_install() -> list[CriterionResult]:
    """The Seam suite's criteria of a golden whose app could not install: full rubric marks, sandbox 0."""
    crit = [
        CriterionResult(
            id="api_calls",
            weight=40,
            fraction=1.0,
            grader="rubric:calls",
            evidence=["✓ createAccessCode called"],
        )
    ]
    crit.append(
        CriterionResult(
            id="sandbox_build", weight=6, fraction=0.0, grader="sandbox:build", evidence=[INSTALL]
        )
    )
    crit += [
        CriterionResult(
            id=f"sandbox_{n}",
            weight=18,
            fraction=0.0,
            grader=f"sandbox:{n}",
            evidence=["not run: the app did not build"],
        )
        for n in ("create", "update", "cancel")
    ]
    return crit


def _tree(root: Path):
    job, runs = make_job(root, job_id=JOB, evals=("flask-py", "express-ts"), runs=1, artifacts=False)
    crit = _golden_that_did_not_install()
    failed = runs[0].model_copy(
        update={
            "criteria": crit,
            "verdict": decide(crit),
            "grades": {"rubric_total": 100.0, "sandbox_total": 0.0, "combined": 40.0},
        }
    )
    unscored = runs[1].model_copy(
        update={
            "outcome": "harness_error",
            "error": "grading failed",
            "harness_failures": [
                HarnessFailure(stage="sandbox", message="registry.npmjs.org: unreachable\nmore")
            ],
        }
    )
    for r in (failed, unscored):
        write_run_file(root, r)
    return job, [failed, unscored]


def test_the_check_that_failed_is_the_reason_not_the_checks_it_stopped() -> None:
    crit = _golden_that_did_not_install()
    # create/update/cancel lost more points, but only because the build failed: the build is the cause
    assert short_reason(criteria=crit, verdict=decide(crit)) == f"sandbox_build: {INSTALL}"
    rubric = [
        CriterionResult(
            id="api_calls",
            weight=40,
            fraction=0.5,
            grader="rubric:calls",
            evidence=["✓ found the client", "✗ no createAccessCode call (app.py:12)"],
        )
    ]
    assert short_reason(criteria=rubric, verdict=decide(rubric)) == (
        "api_calls: no createAccessCode call (app.py:12)"
    )
    long = short_reason(
        failures=[HarnessFailure(stage="sandbox", message="x" * 500)], outcome="harness_error"
    )
    assert long is not None and len(long) <= 160


def test_every_view_shows_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "results"
    job, (failed, unscored) = _tree(root)
    assert run_reason(failed) == f"sandbox_build: {INSTALL}"
    assert run_reason(unscored) == "sandbox: registry.npmjs.org: unreachable"

    junit = ET.fromstring(junit_xml(job, [failed, unscored]))
    message = junit.find(".//failure").get("message")
    assert "below the threshold" in message and INSTALL in message
    assert "registry.npmjs.org: unreachable" in junit.find(".//error").get("message")

    con = Console(width=250, record=True)
    con.print(table(summarise([failed, unscored], []), "Job"))
    notes = con.export_text()
    assert INSTALL in notes and "registry.npmjs.org: unreachable" in notes

    out = CliRunner().invoke(
        app, ["runs", "--job", JOB, "--results", str(root), "--reindex"], env={"COLUMNS": "250"}
    )
    assert out.exit_code == 0, out.output
    assert INSTALL in out.output and "registry.npmjs.org: unreachable" in out.output

    build_site(root, tmp_path / "site", job_ids=[JOB], definitions=[])
    page = (tmp_path / "site" / "jobs" / JOB / "index.html").read_text(encoding="utf-8")
    assert "install failed: `pip install -r requirements.txt` exited with 1" in page.replace("&#96;", "`")


def test_check_controls_says_why_a_control_missed(tmp_path: Path, evals_dir: Path) -> None:
    """A golden that is no solution (the pristine app): the mismatch names the rubric's first failing
    evidence.
    """
    from skillassay.definitions import load_suite
    from skillassay.orchestrator.controls import run_controls

    suite = tmp_path / "suite"
    shutil.copytree(
        evals_dir / "fixtures" / "flask-py",
        suite / "fixtures" / "flask-py",
        ignore=shutil.ignore_patterns(".venv", "__pycache__", "node_modules"),
    )
    shutil.copy(evals_dir / "rubric.json", suite / "rubric.json")
    fixture = suite / "fixtures" / "flask-py"
    shutil.rmtree(fixture / "test_golden")
    shutil.copytree(fixture / "app", fixture / "test_golden")
    (d,) = load_suite(suite)
    golden = next(o for o in run_controls(d, layers="rubric") if o.control == "golden")
    assert not golden.matches
    why = [m for m in golden.mismatches if m.startswith("why: ")]
    assert len(why) == 1 and ": " in why[0][5:] and "✗" not in why[0], golden.mismatches


def test_a_controls_mismatch_names_the_check_of_its_layer() -> None:
    """`sandbox total: expected 100, got 70` and why: the sandbox check that failed, even when the rubric
    lost more.
    """
    from skillassay.definitions.models import ControlExpectation
    from skillassay.orchestrator.controls import _why, compare
    from skillassay.orchestrator.grading import GradeOutcome

    crit = [
        CriterionResult(
            id="api_calls", weight=40, fraction=0.5, grader="rubric:calls", evidence=["✗ one call missing"]
        ),
        CriterionResult(id="sandbox_build", weight=6, fraction=1.0, grader="sandbox:build", evidence=["ok"]),
        CriterionResult(
            id="sandbox_cancel",
            weight=18,
            fraction=0.0,
            grader="sandbox:cancel",
            evidence=["access code still on the device after the cancel"],
        ),
    ]
    got = GradeOutcome(
        criteria=crit, verdict=decide(crit), grades={"sandbox_total": 70.0, "rubric_total": 50.0}
    )
    bad = compare(ControlExpectation(description="golden", sandbox_total=100), got)
    assert bad == ["sandbox total: expected 100, got 70.0"]
    assert _why(bad, got) == "sandbox_cancel: access code still on the device after the cancel"
    # the run's view
    assert short_reason(criteria=crit, verdict=decide(crit)) == "api_calls: one call missing"
