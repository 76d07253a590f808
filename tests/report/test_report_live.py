"""`skillassay serve --live`: a job started here (`skillassay run` in its own process, a command agent held
in its agent phase by a file) watched in Debian's Chromium as it runs, its lanes, phases, finished runs and
cost appearing without a reload; a job whose process is killed shown as stale, not running; the state
served as an ETag'd document (304 when unchanged); no secret planted in a job's live state served, in any
form."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path

import pytest
from leaks import encodings
from parts import CHROMIUM, REPO, needs
from test_report_browser import ARGS
from test_report_serve import raw_get

from skillassay.phases import RunKey
from skillassay.report.live import LIVE_CSP
from skillassay.report.serve import start
from skillassay.report.site import CSP
from skillassay.store.live import LiveJob, LiveLane, live_path, read_live

HELD = "agent"


def _held_agent(hold: Path) -> str:
    """A command agent that waits while ``hold`` exists (up to a minute), then writes a file."""
    code = (
        "import time, pathlib; t = time.time(); "
        f"[time.sleep(0.1) for _ in iter(lambda: pathlib.Path({str(hold)!r}).exists() "
        "and time.time() - t < 60, False)]; pathlib.Path('notes.txt').write_text('done')"
    )
    return f'{sys.executable} -c "{code}"'


def _start_job(
    tmp_path: Path, runs: int, max_cost: float | None = None
) -> tuple[subprocess.Popen, Path, Path]:
    """`skillassay run` of ``runs`` flask-py runs side by side, each held in its agent phase until the hold
    file goes; (the process, the results root, the hold file)."""
    holddir, results = tmp_path / "holddir", tmp_path / "results"
    holddir.mkdir()
    hold = holddir / "hold"
    hold.touch()
    cmd = [
        sys.executable,
        "-m",
        "skillassay",
        "run",
        str(REPO / "evals"),
        "--agent",
        "command",
        "--command",
        _held_agent(hold),
        "--fixtures",
        "flask-py",
        "--layers",
        "rubric",
        "--runs",
        str(runs),
        "--jobs",
        str(runs),
        "--canary-runs",
        "0",
        "--results",
        str(results),
        "--mount",
        str(holddir),
        *(["--max-cost", str(max_cost)] if max_cost is not None else []),
    ]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return proc, results, hold


def _wait_for(what: str, check, proc: subprocess.Popen | None = None, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            pytest.fail(
                f"the job ended before {what}: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
            )
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def _lanes_held(results: Path, runs: int):
    """The job's live state once all its runs are in the held phase."""
    for path in results.glob("*/live.json"):
        state = read_live(path)
        if len(state.lanes) == runs and all(lane.phase == HELD for lane in state.lanes):
            return state
    return None


@pytest.fixture
def job_and_view(tmp_path):
    proc, results, hold = _start_job(tmp_path, runs=2, max_cost=5.0)
    server, thread = start(None, 0, live=results)
    try:
        yield proc, results, hold, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        hold.unlink(missing_ok=True)
        server.shutdown()
        server.server_close()
        thread.join(5)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)


@needs(CHROMIUM.exists(), "Debian's chromium (apt-get install chromium)")
def test_the_live_view_follows_a_running_job_without_reloading(job_and_view, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    proc, results, hold, base = job_and_view
    state = _wait_for("both runs in their agent phase", lambda: _lanes_held(results, 2), proc)
    navigations: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("framenavigated", lambda f: navigations.append(f.url))
            response = page.goto(f"{base}/")  # leads to /live/
            assert response is not None and response.headers["content-security-policy"] == LIVE_CSP
            job = page.locator(f"#job-{state.job_id}")
            expect(job.locator("h2 .badge")).to_have_text("running")
            lanes = job.locator("table.lanes tr.lane")
            expect(lanes).to_have_count(2)
            for i in range(2):
                expect(lanes.nth(i).locator("td").nth(0)).to_have_text("flask-py")
                expect(lanes.nth(i).locator("td").nth(3)).to_have_text(HELD)
            expect(job.locator("p.summary")).to_contain_text("0 of 2 runs done")
            expect(job.locator("p.cost")).to_contain_text("of --max-cost $5.00 (0%)")
            # the elapsed time moves on while the runs are held
            first = lanes.nth(0).locator("td").nth(5).text_content()
            expect(lanes.nth(0).locator("td").nth(5)).not_to_have_text(first or "", timeout=10_000)
            page.evaluate("document.body.dataset.sameDocument = 'yes'")
            page.screenshot(path=str(tmp_path / "live-running.png"), full_page=True)

            hold.unlink()  # the runs go on; each appears as it lands
            finished = job.locator("table.finished tr.finished-run")
            expect(finished).to_have_count(2, timeout=60_000)
            expect(finished.nth(0).locator("td").nth(3)).to_have_text("fail")  # notes.txt: no integration
            expect(job.locator("h2 .badge")).to_have_text("finished", timeout=30_000)
            expect(job.locator("table.lanes")).to_have_count(0)
            expect(job.locator("p.summary")).to_contain_text("2 of 2 runs done")
            page.screenshot(path=str(tmp_path / "live-finished.png"), full_page=True)

            # one document all along: no reload, one script (its own), nothing from anywhere else
            assert page.evaluate("document.body.dataset.sameDocument") == "yes"
            assert [u for u in navigations if u.startswith(base)] == [f"{base}/live/"]
            assert page.evaluate("document.querySelectorAll('script').length") == 1
            assert all(u.startswith(base) for u in requests), requests
            polls = [u for u in requests if u.endswith("/live/state.json")]
            # a short poll, not a storm: about one request per two seconds
            took = (datetime.now(UTC) - state.started_at).total_seconds()
            assert 2 <= len(polls) <= took / 2 + 3, (len(polls), took)
        finally:
            browser.close()
    assert proc.wait(60) == 0


def test_a_killed_job_is_shown_stale_not_running(tmp_path):
    proc, results, hold = _start_job(tmp_path, runs=1)
    server, thread = start(None, 0, live=results)
    try:
        state = _wait_for("the run in its agent phase", lambda: _lanes_held(results, 1), proc)
        _, _, body = raw_get(server.server_address[1], "/live/state.json")
        (job,) = json.loads(body)["jobs"]
        assert job["status"] == "running" and job["stale"] is None
        os.kill(proc.pid, signal.SIGKILL)  # the job's process dies without a word
        proc.wait(10)
        _, _, body = raw_get(server.server_address[1], "/live/state.json")
        (job,) = json.loads(body)["jobs"]
        assert job["job_id"] == state.job_id and job["status"] == "running"  # as the file was left
        assert job["stale"] == f"its process (pid {proc.pid}) is no longer running"
    finally:
        hold.unlink(missing_ok=True)
        server.shutdown()
        server.server_close()
        thread.join(5)


def _plant(results: Path, state: LiveJob) -> None:
    """A live.json as a writer that does not scrub (or a hostile one) would leave it."""
    path = live_path(results, state.job_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(state.model_dump_json())


def _state(job_id: str, phase: str, heartbeat: datetime | None = None, pid: int | None = None) -> LiveJob:
    now = datetime.now(UTC)
    return LiveJob(
        job_id=job_id,
        started_at=now,
        heartbeat=heartbeat or now,
        planned=1,
        **({"pid": pid} if pid is not None else {}),
        lanes=[
            LiveLane(eval_id="e", variant="skill", run_index=1, phase=phase, started_at=now, phase_at=now)
        ],
    )


def test_the_state_is_a_304_when_unchanged_and_new_when_a_phase_changes(tmp_path):
    results = tmp_path / "results"
    state = _state("j1", "agent", pid=os.getpid())
    _plant(results, state)
    server, thread = start(None, 0, live=results)
    port = server.server_address[1]
    try:
        status, headers, _ = raw_get(port, "/live/state.json")
        assert status == 200 and headers["content-type"] == "application/json"
        assert headers["content-security-policy"] == CSP and headers["x-content-type-options"] == "nosniff"
        tag = headers["etag"]
        again = _get_if_none_match(port, tag)
        assert again.startswith(b"HTTP/1.0 304") and again.endswith(b"\r\n\r\n")  # headers only
        # a new heartbeat alone is no change
        state.heartbeat = datetime.now(UTC)
        _plant(results, state)
        assert _get_if_none_match(port, tag).startswith(b"HTTP/1.0 304")
        state.lanes[0].phase = "grading"
        _plant(results, state)
        assert _get_if_none_match(port, tag).startswith(b"HTTP/1.0 200")
        # nothing but the live view without a site
        assert raw_get(port, "/index.html")[0] == 404
        assert raw_get(port, "/")[0] == 302
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _get_if_none_match(port: int, tag: str) -> bytes:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            f"GET /live/state.json HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: {tag}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def test_a_heartbeat_that_stopped_on_another_machine_is_stale(tmp_path):
    results = tmp_path / "results"
    state = _state("j2", "agent", heartbeat=datetime(2026, 1, 1, tzinfo=UTC))
    state.host = "another-machine"
    _plant(results, state)
    server, thread = start(None, 0, live=results)
    try:
        (job,) = json.loads(raw_get(server.server_address[1], "/live/state.json")[2])["jobs"]
        assert (
            job["stale"].startswith("no heartbeat since 2026-01-01 00:00:00 UTC")
            and "on another-machine" in job["stale"]
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


SECRET = "live-view-secret-9f3b27c1d4e5"
KEY_SHAPED = "sk-ant-api03-" + "Q" * 24


def test_a_key_planted_in_a_running_runs_state_is_never_served(tmp_path, monkeypatch):
    """The attacker writes the job's secret into a running run's state in every form it can (the file
    written raw, as a writer that does not scrub would); the served state holds none of them."""
    monkeypatch.setenv("ACME_API_KEY", SECRET)
    results = tmp_path / "results"
    raw = SECRET.encode()
    forms = [
        SECRET,
        SECRET[::-1],
        raw.hex(),
        raw.hex().upper(),
        urllib.parse.quote("?k=" + SECRET, safe=""),
        *(base64.b64encode(prefix + raw).decode() for prefix in (b"", b"k", b"k=")),
        base64.urlsafe_b64encode(b"k" + raw).decode(),
        KEY_SHAPED,
    ]
    state = _state("j3", " ".join(forms), pid=os.getpid())
    state.lanes[0].eval_id = f"eval-{SECRET}"
    _plant(results, state)
    planted = live_path(results, "j3").read_bytes()
    assert all(needle in planted for needle in encodings(SECRET)) and KEY_SHAPED.encode() in planted
    server, thread = start(None, 0, live=results)
    try:
        status, _, body = raw_get(server.server_address[1], "/live/state.json")
        assert status == 200
        found = [form for needle, form in encodings(SECRET).items() if needle in body]
        assert found == [] and KEY_SHAPED.encode() not in body, found
        assert json.loads(body)["jobs"][0]["job_id"] == "j3"  # the state itself still served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_the_job_writes_its_live_state_scrubbed(tmp_path):
    """The writer's side: a secret the job knows, in what a run's phase names (an eval id from a suite), is
    not in live.json."""
    from skillassay.orchestrator.live import LiveRecorder
    from skillassay.store.files import run_redactor

    hide = run_redactor({"ACME_TOKEN": SECRET})
    live = LiveRecorder(
        tmp_path, "j4", planned=1, executor="local", max_cost=None, spent=lambda: 0.0, redactor=hide
    ).start()
    try:
        live.phase(RunKey("j4", f"eval-{SECRET}", "skill", 1), f"agent {SECRET}")
        raw = live_path(tmp_path, "j4").read_bytes()
        assert b"eval-[REDACTED]" in raw and not [n for n in encodings(SECRET) if n in raw]
    finally:
        live.close("finished")


def test_the_heartbeat_carries_the_cost_spent_so_far(tmp_path):
    """The cost is the job's model proxy's, read at each heartbeat: it moves while no run changes phase."""
    from skillassay.orchestrator.live import LiveRecorder
    from skillassay.store.files import run_redactor

    spent = [0.0]
    live = LiveRecorder(
        tmp_path,
        "j5",
        planned=1,
        executor="local",
        max_cost=2.0,
        spent=lambda: spent[0],
        redactor=run_redactor(),
        heartbeat_s=0.05,
    ).start()
    try:
        first = read_live(live_path(tmp_path, "j5"))
        spent[0] = 1.25
        later = _wait_for("a heartbeat with the new cost", lambda: _spent(tmp_path, "j5", 1.25))
        assert later.heartbeat > first.heartbeat and later.max_cost == 2.0 and later.status == "running"
    finally:
        live.close("stopped")
    ended = read_live(live_path(tmp_path, "j5"))
    assert ended.status == "stopped" and ended.ended_at is not None


def _spent(root: Path, job_id: str, amount: float) -> LiveJob | None:
    state = read_live(live_path(root, job_id))
    return state if state.spent_usd == amount else None


def test_serve_live_from_the_command_line(tmp_path):
    from typer.testing import CliRunner

    from skillassay.cli.main import app

    missing = CliRunner().invoke(app, ["serve", "--live", "--results", str(tmp_path / "nope")])
    assert (
        missing.exit_code == 2
        and "--results" in missing.output
        and "no such results folder" in missing.output
    )
    results = tmp_path / "results"
    _plant(results, _state("j6", "agent", pid=os.getpid()))
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillassay", "serve", "--live", "--results", str(results), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith(f"Live jobs of {results} on http://127.0.0.1:") and line.rstrip().endswith(
            "/live/ (Ctrl-C stops)"
        )
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        (job,) = json.loads(raw_get(port, "/live/state.json")[2])["jobs"]
        assert job["job_id"] == "j6" and job["lanes"][0]["phase"] == "agent"
    finally:
        proc.terminate()
        proc.wait(10)
