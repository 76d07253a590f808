"""Disagreements between the static reading and the Seam trace are a product feature: a job's report (the
terminal summary, the HTML job page) lists each one with the run it was found in, and a run's page shows its
trace per endpoint step, the unattributed requests and the dropped count. What the agent wrote (a claim's
text comes from its function names) is escaped like everything else."""

from __future__ import annotations

import json

from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.apps.windows import EndpointWindow
from skillassay.cli.main import app
from skillassay.report.site import build_site
from skillassay.seam.behaviour.trace import SeamTrace, TraceRequest
from skillassay.seam.rubric.hybrid import Disagreement

JOB = "20261202-101010-hy01"
XSS = "<script>alert(26)</script>"


def _trace() -> SeamTrace:
    return SeamTrace(
        windows=[
            EndpointWindow(endpoint="create", start_s=1.0, end_s=2.0),
            EndpointWindow(endpoint="update", start_s=3.0, end_s=4.0),
        ],
        requests=[
            TraceRequest(
                seq=1, method="POST", path="/access_grants/create", status=200, start_s=1.2, endpoint="create"
            ),
            TraceRequest(seq=2, method="POST", path="/devices/list", status=200, start_s=2.5),
        ],
        dropped=4,
    )


def _job(tmp_path):
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("fastapi-py",), runs=2)
    first = next(r for r in runs if r.run_index == 1)
    d = root / first.run_dir
    rubric = json.loads((d / "rubric.json").read_text())
    rubric["hybrid"] = {
        "applied": True,
        "reason": "the static reading, confirmed or refuted",
        "seconds": 0.001,
    }
    rubric["disagreements"] = [
        Disagreement(
            category="integration_placement",
            claim=f"access_grants.update in {XSS}",
            endpoints=["update"],
            static=True,
            trace=False,
            why="the trace shows no access_grants.update request during the update step",
        ).model_dump()
    ]
    (d / "rubric.json").write_text(json.dumps(rubric))
    sandbox = json.loads((d / "sandbox.json").read_text())
    sandbox["seam_trace"] = _trace().model_dump(mode="json")
    (d / "sandbox.json").write_text(json.dumps(sandbox))
    return root


def test_the_terminal_report_lists_every_disagreement(tmp_path):
    root = _job(tmp_path)
    shown = CliRunner().invoke(app, ["report", JOB, "--results", str(root)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "Static/trace disagreements: 1 in 1 run(s)" in shown.output
    assert "integration_placement: access_grants.update in" in shown.output
    assert "static: runs; trace (update step): not sent" in shown.output
    assert "run_1" in shown.output


def test_the_job_page_lists_them_and_the_run_page_shows_the_trace(tmp_path):
    root = _job(tmp_path)
    out = tmp_path / "site"
    build_site(root, out)
    job_page = (out / "jobs" / JOB / "index.html").read_text()
    assert "Static/trace disagreements: 1 in 1 run(s)" in job_page
    assert "&lt;script&gt;alert(26)&lt;/script&gt;" in job_page and XSS not in job_page
    run_page = next((out / "jobs" / JOB).rglob("run_1.html")).read_text()
    assert "Seam trace" in run_page
    assert "POST /access_grants/create</code> → 200 at 1.20 s" in run_page  # the create step's request
    assert "POST /devices/list</code> → 200 at 2.50 s" in run_page  # between steps: unattributed
    assert "4 (requests the emulator's log no longer held" in run_page
    assert XSS not in run_page
    other = next((out / "jobs" / JOB).rglob("run_2.html")).read_text()
    assert "Seam trace" not in other  # a run without a trace shows none


def test_the_end_of_run_summary_lists_them_too(tmp_path, monkeypatch):
    from rich.console import Console

    from skillassay.cli import run as run_cli
    from skillassay.orchestrator.job import JobResult
    from skillassay.orchestrator.summary import summarise
    from skillassay.store import open as open_store

    root = _job(tmp_path)
    with open_store(root) as st:
        job, runs = st.job(JOB), st.runs(job_id=JOB)
    assert job is not None
    console = Console(record=True, width=200)
    monkeypatch.setattr(run_cli, "console", console)
    result = JobResult(job=job, records=runs, evals=["fastapi-py"])
    run_cli._print_summary(result, summarise(runs, []), root)
    shown = console.export_text()
    assert "Static/trace disagreements: 1 in 1 run(s)" in shown
    assert f"access_grants.update in {XSS}" in shown


def test_the_run_page_lists_the_routes_used_and_how_the_emulator_answered_them(tmp_path):
    """Issue 27: the run page lists every Seam route the app used, the approximate (generic) and 501 ones
    marked, and an emulator gap met by a failing check said to be one (excused or flagged)."""
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("fastapi-py",), runs=1)
    d = root / runs[0].run_dir
    trace = _trace()
    trace.requests += [
        TraceRequest(
            seq=3, method="POST", path="/noise_sensors/list", status=200, start_s=3.1, endpoint="update"
        ),
        TraceRequest(
            seq=4, method="POST", path="/access_grants/create", status=400, start_s=3.2, endpoint="update"
        ),
        TraceRequest(
            seq=5, method="POST", path="/seam/console/v1/get", status=501, start_s=3.3, endpoint="update"
        ),
    ]
    sandbox = json.loads((d / "sandbox.json").read_text())
    sandbox["seam_trace"] = trace.model_dump(mode="json")
    sandbox["emulator_gaps"] = [
        {
            "check": "update",
            "method": "POST",
            "path": "/noise_sensors/list",
            "status": 200,
            "kind": "approximate",
            "excused": False,
        },
    ]
    (d / "sandbox.json").write_text(json.dumps(sandbox))
    out = tmp_path / "site"
    build_site(root, out)
    page = " ".join(next((out / "jobs" / JOB).rglob("run_1.html")).read_text().split())
    assert "Seam routes the app used (4)" in page
    row = page.split("POST /access_grants/create</code></td>", 1)[1].split("</tr>", 1)[0]
    assert '<td class="n">2</td>' in row and "200, 400" in row and "<td>emulated</td>" in row
    noise = page.split("POST /noise_sensors/list</code></td>", 1)[1].split("</tr>", 1)[0]
    assert "<strong>approximate</strong>" in noise and "flagged, still scored" in noise
    console = page.split("POST /seam/console/v1/get</code></td>", 1)[1].split("</tr>", 1)[0]
    assert "<strong>not implemented</strong> (501)" in console
