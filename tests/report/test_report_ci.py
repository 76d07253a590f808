"""JUnit and JSON outputs, and the results CLI (runs, compare, report, serve): output and exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from report_data import JOB, OTHER
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.report.ci import job_json, junit_xml

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_junit_one_testcase_per_eval_and_run(results_tree):
    runs = results_tree.runs
    runs[0] = runs[0].model_copy(update={"outcome": "harness_error", "error": "docker \x1b[31mdied\x07"})
    from skillassay.store.records import JobRecord

    job = JobRecord.model_validate_json((results_tree.root / JOB / "job.json").read_text())
    root = ET.fromstring(junit_xml(job, runs))
    cases = root.findall(".//testcase")
    assert len(cases) == len(runs) == 12
    assert {c.get("classname") for c in cases} == {"express-ts", "flask-py"}
    failures = [c for c in cases if c.find("failure") is not None]
    expected = [r for r in runs[1:] if not r.verdict.passed]
    assert len(failures) == len(expected) == int(root.get("failures"))
    assert all("below the threshold" in f.find("failure").get("message") for f in failures)
    errors = [c for c in cases if c.find("error") is not None]
    assert len(errors) == 1 and "docker" in errors[0].find("error").get("message")
    assert "\x1b" not in errors[0].find("error").get("message")


def test_json_summary(results_tree):
    from skillassay.store.records import JobRecord

    job = JobRecord.model_validate_json((results_tree.root / JOB / "job.json").read_text())
    data = job_json(job, results_tree.runs)
    assert set(data["summary"]) == {"skill", "baseline"}
    assert data["summary"]["skill"]["overall"]["n"] == 6
    assert data["comparison"]["overall"]["pairs"] == 6
    assert len(data["runs"]) == 12
    json.dumps(data)


def test_runs_command(results_tree):
    r = cli("runs", "--results", str(results_tree.root))
    assert r.exit_code == 0 and JOB in r.output
    r = cli("runs", "--results", str(results_tree.root), "--json")
    (entry,) = json.loads(r.output)
    assert entry["planned"] == 12 and entry["done"] == 12
    r = cli("runs", "--results", str(results_tree.root), "--job", JOB, "--json")
    assert len(json.loads(r.output)) == 12
    r = cli("runs", "--results", str(results_tree.root), "--job", JOB)
    assert r.exit_code == 0 and "express-ts" in r.output
    assert cli("runs", "--results", str(results_tree.root), "--job", "nope").exit_code == 2
    assert cli("runs", "--results", str(results_tree.root / "missing")).exit_code == 2


def test_compare_command(results_tree):
    root = str(results_tree.root)
    r = cli("compare", f"{JOB}:baseline", JOB, "--results", root)
    assert r.exit_code == 0
    assert "excludes zero" in r.output and "higher" in r.output
    r = cli("compare", f"{JOB}:baseline", JOB, "--results", root, "--json")
    data = json.loads(r.output)
    assert data["significant"] and data["overall"]["delta"] > 0
    # worse, significantly, and asked to fail on it
    assert cli("compare", JOB, f"{JOB}:baseline", "--results", root, "--fail-if-worse").exit_code == 1
    assert cli("compare", JOB, f"{JOB}:baseline", "--results", root).exit_code == 0
    assert cli("compare", JOB, "nope", "--results", root).exit_code == 2
    assert cli("compare", JOB, f"{JOB}:other", "--results", root).exit_code == 2


def test_report_command_outputs_and_exit_codes(results_tree, tmp_path):
    root = str(results_tree.root)
    junit, js, html = tmp_path / "j.xml", tmp_path / "j.json", tmp_path / "site"
    r = cli(
        "report",
        JOB,
        "--junit",
        str(junit),
        "--json",
        str(js),
        "--html",
        str(html),
        "--results",
        root,
        "--suite",
        str(tmp_path / "no-suite"),
    )
    assert r.exit_code == 0, r.output
    assert ET.parse(junit).getroot().tag == "testsuites"
    assert json.loads(js.read_text())["job"]["job_id"] == JOB
    assert (html / "index.html").is_file()
    skill_failed = any(not x.verdict.passed for x in results_tree.runs if x.variant == "skill")
    r = cli("report", JOB, "--junit", str(junit), "--results", root, "--fail-on-verdict")
    assert r.exit_code == (1 if skill_failed else 0)
    assert cli("report", JOB, "--json", str(js), "--results", root, "--min-pass-rate", "0").exit_code == 0
    assert cli("report", JOB, "--json", str(js), "--results", root, "--min-pass-rate", "1").exit_code == (
        1 if skill_failed else 0
    )
    assert cli("report", "nope", "--json", str(js), "--results", root).exit_code == 2
    make_job(results_tree.root, job_id=OTHER, runs=1)
    # two jobs: JUnit describes one, so it must be named
    assert cli("report", JOB, OTHER, "--junit", str(junit), "--results", root).exit_code == 2
    # no job named: the latest
    r = cli("report", "--json", str(js), "--results", root)
    assert r.exit_code == 0 and json.loads(js.read_text())["job"]["job_id"] == OTHER
    r = cli("report", "--results", root)  # terminal summary
    assert r.exit_code == 0 and "overall" in r.output


def test_serve_command_rejects_a_folder_without_a_site(tmp_path):
    assert cli("serve", str(tmp_path)).exit_code == 2
