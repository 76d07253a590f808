"""Fixes from a new-user review of the results commands: what they say when writing files, clean site
rebuilds, jobs without a skill, unscored runs shown honestly, wide tables off a terminal, `serve`'s default
folder."""

from __future__ import annotations

import json
import re

import pytest
from report_data import JOB, OTHER
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.errors import SkillassayError
from skillassay.report.ci import job_json
from skillassay.report.site import SITE_MARKER, build_site
from skillassay.report.tables import console
from skillassay.scoring.stats import summarize
from skillassay.store.files import write_job_file, write_run_file

runner = CliRunner()
NO_SKILL = "20261201-090000-ef56"
BROKEN = "20261202-090000-ab78"
LONG_EVAL = "reservation_automations_with_a_long_name"


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def tags(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def no_skill_job(root, job_id=NO_SKILL, **kw):
    job, runs = make_job(root, job_id=job_id, **kw)
    job = job.model_copy(update={"skill_path": None, "skill_hash": None})
    write_job_file(root, job)
    runs = [r.model_copy(update={"skill_path": None, "skill_hash": None}) for r in runs]
    for r in runs:
        write_run_file(root, r)
    return job, runs


def broken_job(root):
    """express-ts: every run a harness error (one still holds a verdict: grading ran, then failed);
    flask-py: one of three runs a harness error."""
    job, runs = make_job(root, job_id=BROKEN, evals=("express-ts", "flask-py"), runs=3)
    out = []
    for r in runs:
        if r.eval_id == "express-ts" or r.run_index == 2:
            r = r.model_copy(
                update={
                    "outcome": "harness_error",
                    "error": f"docker daemon unreachable ({r.eval_id} {r.run_index})\ntrace...",
                }
            )
            write_run_file(root, r)
        out.append(r)
    return job, out


# ---------------------------------------------------------------- 1. one line per file written


def test_report_says_what_it_wrote(results_tree, tmp_path):
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
    assert f"wrote JUnit XML for 12 runs to {junit}" in r.stdout
    assert f"wrote JSON for 12 runs to {js}" in r.stdout
    assert "wrote the web report (" in r.stdout and str(html) in r.stdout
    # JSON to stdout: stdout is the JSON alone, the notes go to stderr
    r = cli("report", JOB, "--json", "-", "--junit", str(junit), "--results", root)
    assert r.exit_code == 0
    assert json.loads(r.stdout)["job"]["job_id"] == JOB
    assert f"wrote JUnit XML for 12 runs to {junit}" in r.stderr


# ------------------------------------------------------------- 2. clean rebuilds, never someone else's folder


def test_site_rebuild_removes_old_pages(results_tree, tmp_path):
    make_job(results_tree.root, job_id=OTHER, runs=1, seed=3)
    out = tmp_path / "site"
    build_site(results_tree.root, out, job_ids=[JOB, OTHER], definitions=[])
    assert (out / SITE_MARKER).is_file()
    assert (out / "jobs" / OTHER / "index.html").is_file() and list((out / "compare").glob("*.html"))
    (out / "notes.html").write_text("stale page of an older build")
    build_site(results_tree.root, out, job_ids=[JOB], definitions=[])
    assert not (out / "jobs" / OTHER).exists()
    assert not (out / "compare").exists() and not (out / "notes.html").exists()
    assert (out / "jobs" / JOB / "index.html").is_file() and (out / SITE_MARKER).is_file()
    # through the CLI as well
    r = cli("report", OTHER, "--html", str(out), "--results", str(results_tree.root))
    assert r.exit_code == 0, r.output
    assert not (out / "jobs" / JOB).exists() and (out / "jobs" / OTHER / "index.html").is_file()


def test_site_refuses_a_folder_it_did_not_write(results_tree, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(SkillassayError, match="not empty and was not written by skillassay"):
        build_site(results_tree.root, out, definitions=[])
    r = cli("report", JOB, "--html", str(out), "--results", str(results_tree.root))
    assert r.exit_code == 2
    assert "is not empty and was not written by skillassay; choose another folder or empty it" in r.output
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    # an empty folder is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    build_site(results_tree.root, empty, definitions=[])
    assert (empty / "index.html").is_file()


# ---------------------------------------------------------------- 3. jobs without a skill


def test_job_without_a_skill_says_so(tmp_path):
    root = tmp_path / "results"
    no_skill_job(root, runs=2)
    out = tmp_path / "site"
    build_site(root, out, definitions=[])
    job = (out / "jobs" / NO_SKILL / "index.html").read_text()
    text = tags(job)
    assert "skill no skill" in text and "skill – –" not in text
    runs_part = job.split('id="runs"')[1]
    assert "<th>variant</th>" not in runs_part and "<td>skill</td>" not in runs_part
    run = tags((out / "jobs" / NO_SKILL / "express-ts" / "run_1.html").read_text())
    assert "skill no skill" in run and "skill none" not in run
    assert "no skill" in tags((out / "jobs.html").read_text())
    # the terminal table has no variant column either
    r = cli("runs", "--results", str(root), "--job", NO_SKILL)
    assert r.exit_code == 0 and "variant" not in r.stdout and " skill " not in r.stdout
    assert "no skill" in cli("runs", "--results", str(root)).stdout


def test_job_with_a_skill_names_it(results_tree, tmp_path):
    # a job with a skill shows its path and short hash; its runs keep the labels skill / baseline
    job, _ = make_job(tmp_path / "r", job_id=OTHER, runs=1, baseline=True)
    job = job.model_copy(update={"skill_hash": "sha256:1a2b3c4d" + "e" * 56})
    write_job_file(tmp_path / "r", job)
    out = tmp_path / "site"
    build_site(tmp_path / "r", out, definitions=[])
    page = (out / "jobs" / OTHER / "index.html").read_text()
    assert "skills/seam (sha256:1a2b3c4d)" in tags(page)
    runs_part = page.split('id="runs"')[1]
    assert (
        "<th>variant</th>" in runs_part and "<td>skill</td>" in runs_part and "<td>baseline</td>" in runs_part
    )
    base = tags((out / "jobs" / OTHER / "express-ts" / "baseline-run_1.html").read_text())
    assert "no skill (baseline run)" in base


# ---------------------------------------------------------------- 4. unscored runs: not scored, not counted


def test_harness_errors_are_not_scored(tmp_path):
    root = tmp_path / "results"
    _, runs = broken_job(root)
    s = summarize(runs)
    assert [x.eval_id for x in s.per_eval] == ["flask-py"] and s.overall.n == 2 and s.overall.excluded == 4
    r = cli("runs", "--results", str(root), "--job", BROKEN)
    assert r.exit_code == 0
    rows = [line for line in r.stdout.splitlines() if "harness error" in line and line.startswith("│")]
    assert len(rows) == 4
    for line in rows:
        assert "not scored" in line and "docker daemon unreachable" in line
        assert "%" not in line and "pass" not in line  # no score, no verdict
    # the terminal summary shows the eval whose runs all failed to run, with the errors
    r = cli("report", BROKEN, "--results", str(root))
    assert r.exit_code == 0
    express = [line for line in r.stdout.splitlines() if line.startswith(("│ express-ts", "┃ express-ts"))]
    assert express and "not scored" in express[0] and "%" not in express[0]
    assert "express-ts run 1: harness error (not scored, not counted): docker daemon unreachable" in r.stdout
    assert "Outcomes: 2 completed, 4 harness error (4 not scored: left out of every figure)." in r.stdout
    # JSON: no scores for them
    data = job_json(*_job_and_runs(root, BROKEN))
    bad = [x for x in data["runs"] if x["outcome"] == "harness_error"]
    assert len(bad) == 4 and all(x["score"] is None and x["verdict"] is None and not x["graded"] for x in bad)
    assert all("docker daemon unreachable" in x["error"] for x in bad)
    # HTML: the job page's table and the run page
    out = tmp_path / "site"
    build_site(root, out, definitions=[])
    job_page = (out / "jobs" / BROKEN / "index.html").read_text()
    stats = job_page.split('id="runs"')[0]
    assert (
        "express-ts" in stats
        and "not scored (harness error): docker daemon unreachable (express-ts 1)" in stats
    )
    runs_part = job_page.split('id="runs"')[1]
    for row in re.findall(r'<tr class="infra-error">.*?</tr>', runs_part, re.DOTALL):
        assert "%" not in row and "docker daemon unreachable" in row and "not scored" in row
    run_page = tags((out / "jobs" / BROKEN / "express-ts" / "run_1.html").read_text())
    assert "not scored" in run_page and "docker daemon unreachable (express-ts 1)" in run_page
    assert "score" not in run_page.split("Verdict")[1].split("Diff")[0].replace("scores", "")


def test_a_job_whose_only_run_failed_to_run(tmp_path):
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=BROKEN, evals=("express-ts",), runs=1)
    write_run_file(root, runs[0].model_copy(update={"outcome": "harness_error", "error": "no docker"}))
    r = cli("report", BROKEN, "--results", str(root))
    assert r.exit_code == 0
    assert "express-ts" in r.stdout and "no docker" in r.stdout


def _job_and_runs(root, job_id):
    from skillassay import store

    with store.open(root) as st:
        return st.job(job_id), st.runs(job_id=job_id)


# ---------------------------------------------------------------- 5. wide tables off a terminal


def test_tables_do_not_wrap_off_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    root = tmp_path / "results"
    make_job(root, job_id=JOB, evals=(LONG_EVAL, "flask-py"), runs=2, baseline=True)
    for args in (("runs", "--job", JOB), ("report", JOB), ("compare", f"{JOB}:baseline", JOB)):
        r = cli(*args, "--results", str(root))
        assert r.exit_code == 0, r.output
        assert LONG_EVAL in r.stdout, args
        assert max(len(line) for line in r.stdout.splitlines()) > 80, args
    assert console().width >= 160
    monkeypatch.setenv("COLUMNS", "100")
    assert console().width == 100


# ---------------------------------------------------------------- 6. serve's default folder


def test_serve_defaults_to_the_report_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("serve")
    assert r.exit_code == 2 and "report: no index.html" in r.output
    help_text = " ".join(cli("serve", "--help").output.replace("│", " ").split())
    assert "default: report" in help_text


def test_site_from_before_the_marker_is_rebuilt(results_tree, tmp_path):
    out = tmp_path / "site"
    build_site(results_tree.root, out, definitions=[])
    (out / SITE_MARKER).unlink()  # as an older skillassay left it
    (out / "jobs" / "gone-job").mkdir()
    build_site(results_tree.root, out, definitions=[])
    assert not (out / "jobs" / "gone-job").exists() and (out / SITE_MARKER).is_file()
