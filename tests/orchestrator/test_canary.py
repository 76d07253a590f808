"""The golden canary: a machine that cannot run an eval's golden makes every run of that eval unscored, with
the canary's evidence, and says so; a golden that passes leaves the agent's failure the agent's; a cached
pass runs nothing; a golden that passes only sometimes fails the canary and reports its noise. On a tiny
stdlib app (no install), graded by the real sandbox in bubblewrap."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.orchestrator import canary

runner = CliRunner()
TESTS = Path(__file__).resolve().parent.parent
TINYAPP = TESTS / "graders" / "sandbox" / "tinyapp" / "server.py"
EVALS = TESTS.parent / "evals"
MODE_LINE = 'MODE = os.environ.get("MODE", "good")'
# the golden's start, counted in a file outside the app (unsealed runs only): every second start fails
FLAKY = (
    'import os, sys\n_c = os.environ["START_COUNT"]\n'
    '_n = (int(open(_c).read()) if os.path.exists(_c) else 0) + 1\nopen(_c, "w").write(str(_n))\n'
    'if _n % 2 == 0:\n    sys.exit("boom: every second start fails")\n'
)


def _config(mode: str, env: dict[str, str] | None = None) -> dict:
    return {
        "fixture": "tiny",
        "prompt": "make reservations create access codes",
        "expected_api_path": "access_codes",
        "app_port": 8000,
        "test_endpoints": {
            "create": {
                "method": "POST",
                "path": "/api/reservations",
                "payload": {
                    "guest": "eval_{{RUN_ID}}",
                    "propertyId": "prop-1",
                    "unitId": "unit-1",
                    "checkIn": "{{STARTS_AT}}",
                    "checkOut": "{{ENDS_AT}}",
                },
                "response_id_path": "reservation.id",
            },
            "update": {
                "method": "PUT",
                "path": "/api/reservations/{{RESERVATION_ID}}",
                "payload": {"checkOut": "{{NEW_ENDS_AT}}"},
            },
            "cancel": {"method": "DELETE", "path": "/api/reservations/{{RESERVATION_ID}}"},
        },
        "seam": {"env": {"SEAM_DEVICE_ID": "{{DEVICE_ID}}"}},
        "run": {"env": {"MODE": mode, **(env or {})}},
        "timeouts": {"health": 20, "create": 10, "update": 5, "cancel": 5},
    }


def tiny_suite(
    root: Path, mode: str = "good", golden_prefix: str = "", env: dict[str, str] | None = None
) -> Path:
    """A suite of one Seam eval: the pristine app answers non-JSON (sandbox 10), the golden works in MODE good
    and refuses to start in MODE crash (exit 3), as it would on a machine that cannot run it."""
    fixture = root / "fixtures" / "tiny"
    source = TINYAPP.read_text()
    (fixture / "app").mkdir(parents=True)
    (fixture / "app" / "server.py").write_text(source.replace(MODE_LINE, 'MODE = "nojson"'))
    (fixture / "test_golden").mkdir()
    (fixture / "test_golden" / "server.py").write_text(golden_prefix + source)
    (fixture / "Dockerfile").write_text(
        'FROM python:3.11-slim\nWORKDIR /app\nCOPY . .\nCMD ["python", "server.py"]\n'
    )
    (fixture / "eval_config.json").write_text(json.dumps(_config(mode, env), indent=2))
    # the rubric's files (not graded: the jobs here run the sandbox layer)
    shutil.copy(EVALS / "rubric.json", root / "rubric.json")
    key = {
        "expected_files_modified": ["server.py"],
        "expected_calls": {"create": ["access_codes.create"]},
        "expected_placements": {},
        "required_parameters": {},
    }
    (fixture / "answer_key.json").write_text(json.dumps(key))
    return root


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty skillassay cache of the test's own (the tiny app installs nothing)."""
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(canary.RUNS_ENV, raising=False)
    return tmp_path / "cache"


def _run(suite: Path, results: Path, *args: str) -> tuple[dict, str]:
    out = runner.invoke(app, ["run", str(suite), "--layers", "sandbox", "--results", str(results), *args])
    assert out.exit_code == 0, out.output
    [job_dir] = [
        p
        for p in results.iterdir()
        if p.is_dir() and (p / "job.json").is_file() and p.name not in _seen.setdefault(results, set())
    ]
    _seen[results].add(job_dir.name)
    return json.loads((job_dir / "job.json").read_text()), out.output


_seen: dict[Path, set[str]] = {}


def _records(results: Path, job: dict) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((results / job["job_id"]).glob("*/run_*/run.json"))]


def _entries(cache: Path) -> list[dict]:
    return (
        [json.loads(p.read_text()) for p in (cache / "canary").glob("*.json")]
        if (cache / "canary").is_dir()
        else []
    )


def test_a_golden_that_cannot_start_here_makes_every_run_unscored_with_its_evidence(
    tmp_path: Path, cache: Path
) -> None:
    suite = tiny_suite(tmp_path / "suite", mode="crash")
    results = tmp_path / "results"
    job, output = _run(suite, results, "--agent", "noop", "--runs", "2", "--canary-runs", "3")
    records = _records(results, job)
    assert [r["outcome"] for r in records] == ["harness_error", "harness_error"]
    for r in records:
        [failure] = r["harness_failures"]
        assert failure["stage"] == "canary"
        assert failure["message"].startswith("the golden scores sandbox 0: build: start failed")
        assert "exit code 3" in failure["message"] and r["error"] == f"canary: {failure['message']}"
        # never graded, the agent never ran
        assert r["grades"].get("sandbox_total") is None and r["transcript"]["turns"] is None
    check = job["canaries"]["tiny"]
    assert check["status"] == "failed" and check["scores"] == [0.0]  # the first run failed: not asked again
    assert "this machine cannot measure tiny: the golden scores sandbox 0" in " ".join(output.split())
    assert _entries(cache) == []  # a failure is never cached: the next job checks again

    # the reference agent's runs are the golden's: checked as the canary, not run a second time
    job, output = _run(suite, results, "--agent", "reference")
    [r] = _records(results, job)
    assert r["outcome"] == "harness_error" and r["harness_failures"][0]["stage"] == "canary"
    assert r["canary"]["source"] == "reference" and r["grades"]["sandbox_total"] == 0
    assert "this machine cannot measure tiny" in " ".join(output.split())


def test_a_passing_golden_leaves_the_agents_failure_its_own_and_a_cached_pass_runs_nothing(
    tmp_path, cache
) -> None:
    suite = tiny_suite(tmp_path / "suite", mode="good")
    results = tmp_path / "results"
    job, output = _run(suite, results, "--agent", "noop", "--canary-runs", "2")
    [r] = _records(results, job)
    # the negative control: the golden scores 100 here, so the agent's empty change is the agent's failure
    assert (
        r["outcome"] == "completed" and r["grades"]["sandbox_total"] == 10 and r["verdict"]["passed"] is False
    )
    assert r["canary"]["status"] == "passed" and r["canary"]["scores"] == [100.0, 100.0]
    assert not r["canary"]["cached"] and job["canaries"]["tiny"]["noise"] == 0
    assert "cannot measure" not in output and "grader noise" in " ".join(output.split())
    [entry] = _entries(cache)
    assert entry["scores"] == [100.0, 100.0] and entry["environment"]["layers"] == "sandbox"

    job, _ = _run(suite, results, "--agent", "noop", "--canary-runs", "2")
    [r] = _records(results, job)
    assert r["canary"]["cached"] is True and r["outcome"] == "completed"
    [entry] = _entries(cache)
    assert entry["scores"] == [100.0, 100.0]  # no golden ran: a run adds its score to the entry

    # another fixture content is another key: the cache vouches only for what it checked
    (suite / "fixtures" / "tiny" / "test_golden" / "NOTES.md").write_text("changed\n")
    job, _ = _run(suite, results, "--agent", "noop", "--canary-runs", "1")
    [r] = _records(results, job)
    assert r["canary"]["cached"] is False and len(_entries(cache)) == 2


def test_a_golden_that_passes_only_sometimes_fails_the_canary_and_reports_its_noise(tmp_path, cache) -> None:
    counter = tmp_path / "starts.txt"
    suite = tiny_suite(tmp_path / "suite", golden_prefix=FLAKY, env={"START_COUNT": str(counter)})
    results = tmp_path / "results"
    job, output = _run(suite, results, "--agent", "noop", "--isolation", "none", "--canary-runs", "3")
    assert counter.read_text() == "3"  # three golden runs, one start each
    check = job["canaries"]["tiny"]
    assert check["status"] == "failed" and check["scores"] == [100.0, 0.0, 100.0] and check["noise"] == 100
    assert check["reason"].startswith(
        "the golden passes only sometimes (2 of 3 runs; scores 100, 0, 100); run 2: "
        "the golden scores sandbox 0: build: start failed"
    )
    [r] = _records(results, job)
    assert r["outcome"] == "harness_error" and r["harness_failures"][0]["stage"] == "canary"
    assert "this machine cannot measure tiny: the golden passes only sometimes" in " ".join(output.split())
    assert _entries(cache) == []


def test_an_agent_evals_golden_is_checked_too_and_the_llm_judge_is_left_out(tmp_path, cache) -> None:
    suite = tmp_path / "suite"
    fixture = suite / "fixtures" / "tiny"
    (fixture / "app").mkdir(parents=True)
    (fixture / "app" / "app.py").write_text("x = 1\n")
    (fixture / "test_golden").mkdir()
    (fixture / "test_golden" / "app.py").write_text("x = 2\n")
    (suite / "agent-evals").mkdir()
    # the build gate cannot run here (this machine's compiler, say): the golden fails with it
    gate = f"{sys.executable} -c \\\"import sys; sys.exit('no compiler here')\\\""
    (suite / "agent-evals" / "tiny-eval.toml").write_text(
        'id = "tiny-eval"\ntitle = "t"\nprompt = "p"\nfixture = "tiny"\n'
        f'[[quality_requirements]]\nid = "build"\nkind = "build"\ndescription = "d"\ncommand = "{gate}"\n'
        '[[criteria]]\nid = "c"\ndescription = "d"\nweight = 1\ngrader = "diff"\ngates = ["build"]\n'
        '[criteria.options]\nowning_module = "app.py"\n'
        '[[criteria]]\nid = "j"\ndescription = "d"\nweight = 1\ngrader = "llm_judge"\n'
        '[criteria.options]\nquestion = "q?"\n'
    )
    from skillassay.definitions import load_suite

    [d] = load_suite(suite)
    got = canary.check(d, canary.CanaryPlan(runs=2))
    assert got.status == "failed" and got.scores == [0.0]
    assert got.reason.startswith("the golden scores 0% (fail): ") and "build" in got.reason
    assert "judge" not in got.reason  # no judge configured, and none asked

    shutil.rmtree(fixture / "test_golden")
    assert canary.check(d, canary.CanaryPlan()).status == "skipped"  # no golden, no canary


def test_trigger_suites_have_no_canary_and_zero_runs_is_a_recorded_warning(evals_dir: Path) -> None:
    from skillassay.definitions import load_suite
    from skillassay.orchestrator.job import CANARY_OFF, JobOptions, _canary_plan

    triggers = load_suite(evals_dir / "trigger-evals" / "seam-lock-access.toml")
    assert _canary_plan(JobOptions(canary_runs=3), triggers) == (None, None)
    seam = load_suite(evals_dir, ["flask-py"])
    assert _canary_plan(JobOptions(canary_runs=0), seam) == (None, CANARY_OFF)
    plan, warning = _canary_plan(JobOptions(canary_runs=2, layers="rubric"), seam)
    assert warning is None and plan is not None and plan.runs == 2 and plan.layers == "rubric"


def test_doctor_smoke_says_which_golden_fails_here_and_why(tmp_path: Path, cache: Path) -> None:
    suite = tiny_suite(tmp_path / "suite", mode="crash")
    out = runner.invoke(app, ["doctor", "--smoke", "--suite", str(suite), "--json"])
    assert out.exit_code == 1, out.output
    found = {f["part"]: f for f in json.loads(out.stdout)}
    tiny = found["canary tiny"]
    assert tiny["ok"] is False and tiny["needed_for"] == "measuring python evals on this machine"
    # a default job's layers (both): the first cause of the shortfall is the app's start
    assert re.match(r"the golden scores rubric \d+, sandbox 0: build: start failed: ", tiny["found"]), tiny
    assert "exit code 3" in tiny["found"]
    assert "skillassay sandbox" in tiny["fix"]
