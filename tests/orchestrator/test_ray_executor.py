"""The Ray executor on a real two-node Ray cluster on this machine (Ray's own cluster utility: a head and one
more node, one CPU each), shared by the whole module: runs spread over both nodes and score as the local
executor's do, with the reference agent and with the real Claude Code CLI driven by the scripted model
server; a node killed mid-job loses no run and counts none twice; SIGINT to the driver leaves no task and
no agent behind; --resume finishes a Ray job. (Ray binds to the machine's primary address: every node stays
on this machine, see docs/distributed.md.)"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:  # pragma: no cover - scripts/setup.sh installs it; CI must not skip
    if os.environ.get("CI"):
        raise
    pytest.skip("needs Ray: pip install -e '.[ray]' (scripts/setup.sh installs it)", allow_module_level=True)

from skillassay import phases
from skillassay.orchestrator.executors.ray import RayExecutor
from skillassay.orchestrator.job import JobOptions, run_job
from skillassay.store import open as open_store
from skillassay.store.live import live_path, read_live
from skillassay.testing import ModelServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long(reason="a two-node Ray cluster for the module; jobs of real apps and CLIs on it"),
]
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "examples" / "skills" / "seam-lock-access"
SKILLASSAY = [sys.executable, "-m", "skillassay"]
sys.path.insert(0, str(Path(__file__).parent))
from test_e2e_agents import changed_files, claude_script  # noqa: E402 - a sibling module, found through sys.path


@pytest.fixture(scope="module")
def cluster():
    # node failures are noticed within ~2 s instead of Ray's default ~30 s, so the node test stays short
    fast = {
        "health_check_period_ms": 500,
        "health_check_failure_threshold": 3,
        "health_check_timeout_ms": 500,
    }
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "_system_config": fast})
    worker = c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False, logging_level="ERROR")
    c.wait_for_nodes()
    session = c.head_node.get_session_dir_path()
    try:
        yield c, worker
    finally:
        ray.shutdown()
        c.shutdown()
    # no Ray process of this cluster survives the module (GCS, raylets, workers all name its session folder)
    deadline = time.monotonic() + 20
    while _cluster_processes(session) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _cluster_processes(session)


def _cluster_processes(session: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if session.encode() in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _job(tmp: Path, runner: RayExecutor | None, **options):
    """A job in this process: on the module's cluster with a RayExecutor, else locally."""
    opts = JobOptions(suite=REPO / "evals", results=tmp, executor="ray" if runner else "local", **options)
    return run_job(opts, executor=runner)


def _scores(records) -> dict:
    return {
        (r.eval_id, r.variant, r.run_index): (
            r.outcome,
            r.figure("rubric_total"),
            r.figure("sandbox_total"),
            r.figure("combined"),
            r.verdict.score if r.verdict else None,
            r.verdict.passed if r.verdict else None,
            [(c.id, c.fraction) for c in r.criteria],
        )
        for r in records
    }


def _recorded_once(results: Path, job) -> list[dict]:
    """Every planned run has exactly one row and one run.json; returns the run.json contents."""
    db = open_store(results)
    try:
        rows = db.runs(job_id=job.job_id)
    finally:
        db.close()
    keys = Counter((r.eval_id, r.run_index, r.variant) for r in rows)
    assert sorted(keys) == sorted(tuple(p) for p in job.planned) and set(keys.values()) == {1}
    files = sorted((results / job.job_id).rglob("run.json"))
    assert len(files) == len(job.planned)
    assert not [p for p in (results / job.job_id).rglob("*") if ".incoming-" in p.name]  # no staging left
    return [json.loads(f.read_text()) for f in files]


# ---------------------------------------------------------------------------------------------- same scores
def test_reference_runs_spread_over_both_nodes_and_score_as_locally(cluster, tmp_path: Path) -> None:
    evals = ["flask-py", "express-ts", "cancellation-support"]
    local = _job(tmp_path / "local", None, agent="reference", fixtures=evals)
    executor = RayExecutor()
    distributed = _job(tmp_path / "ray", executor, agent="reference", fixtures=evals)
    assert distributed.job.status == "finished"
    stored = _recorded_once(tmp_path / "ray", distributed.job)
    assert {s["machine"]["ray_node"] for s in stored} == {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    expected = _scores(local.records)
    for key, got in _scores(distributed.records).items():
        assert got == expected[key], key
    assert all(r.figure("combined") == 100 or (r.verdict and r.verdict.passed) for r in distributed.records)
    # the run folder came back whole: graded files, the kept workspace, the app's logs
    run_dir = tmp_path / "ray" / next(r.run_dir for r in distributed.records if r.eval_id == "flask-py")
    for name in ("run.json", "diff.patch", "rubric.json", "sandbox.json", "transcript.json", "workspace"):
        assert (run_dir / name).exists(), name
    # run.json names the job's files, never a worker's copy
    assert all(s["config"]["definition"].startswith(str(REPO / "evals")) for s in stored)
    assert all(0 <= s["timings"]["ray_overhead"] < 30 for s in stored)


def test_a_ray_jobs_lanes_reach_its_live_state(cluster, tmp_path: Path) -> None:
    """The workers' phases come back to the driver (``phases.relay``): `run`'s progress hears them, and the
    job's live.json (what `serve --live` shows) has a lane for each run while it is under way."""
    results, seen, heard = tmp_path / "ray", set(), []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for path in results.glob("*/live.json"):
                with contextlib.suppress(OSError, ValueError):
                    seen.update((lane.eval_id, lane.run_index, lane.phase) for lane in read_live(path).lanes)
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with phases.listening(lambda key, name: heard.append((key.eval_id, key.run_index, name))):
            result = _job(
                results,
                RayExecutor(),
                agent="reference",
                fixtures=["flask-py"],
                layers="rubric",
                runs=2,
                canary_runs=0,
            )
    finally:
        stop.set()
        watcher.join(5)
    assert result.job.status == "finished"
    for i in (1, 2):
        assert ("flask-py", i, "workspace") in heard and ("flask-py", i, "agent") in heard, heard
        assert ("flask-py", i, "grading") in heard, heard
        assert any(run == i for _, run, _ in seen), seen
    final = read_live(live_path(results, result.job.job_id))
    assert (final.executor, final.status, final.done, final.lanes) == ("ray", "finished", 2, [])
    assert sorted(r.run_index for r in final.finished) == [1, 2]


def test_scripted_claude_code_with_a_skill_scores_as_locally(cluster, tmp_path: Path) -> None:
    fx = REPO / "evals" / "fixtures" / "express-ts"
    # the scripted model is the job's model upstream: the model proxy (on the driver) reaches it on loopback,
    # and the agents on the workers reach the proxy at this machine's node address, with their own per-run
    # tokens
    with ModelServer() as server:
        sid = server.add_script(claude_script("golden", changed_files(fx / "app", fx / "test_golden")))
        options = {
            "agent": "claude-code",
            "skill": SKILL,
            "fixtures": ["express-ts"],
            "timeout": 180,
            "model_upstream": server.base_url(sid),
            "agent_env": {"SKILLASSAY_MAX_RETRIES": "1"},
        }
        local = _job(tmp_path / "local", None, **options)
        distributed = _job(tmp_path / "ray", RayExecutor(), runs=2, **options)
        proxied = [r for r in server.requests(sid) if r.api]
    stored = _recorded_once(tmp_path / "ray", distributed.job)
    [expected] = _scores(local.records).values()
    assert expected[0] == "completed" and expected[3] == 100
    assert list(_scores(distributed.records).values()) == [expected, expected]
    for s in stored:  # the skill travelled with the task: the CLI on the worker saw it and used it
        assert s["transcript"]["skill_loaded"] and s["transcript"]["skill_invoked"]
        assert s["skill_path"] == str(SKILL)
        # every model call went through the job's proxy and was metered for the run, as locally
        assert s["model_usage"]["requests"] == local.records[0].model_usage.requests > 0
    assert distributed.job.model_usage.requests == 2 * local.records[0].model_usage.requests
    assert len(proxied) >= 3 * local.records[0].model_usage.requests  # the server saw all three runs' calls


def test_a_run_no_node_can_hold_is_refused_before_anything_runs(cluster, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(REPO / "evals", suite, ignore=shutil.ignore_patterns("node_modules", ".venv"))
    toml = suite / "agent-evals" / "cancellation-support.toml"
    toml.write_text(toml.read_text() + '\n[resources]\ncpus = 4\nmemory = "1GiB"\n')
    proc = subprocess.run(
        [
            *SKILLASSAY,
            "run",
            str(suite),
            "--agent",
            "reference",
            "--fixtures",
            "cancellation-support",
            "--executor",
            "ray",
            "--ray-address",
            cluster[0].address,
            "--results",
            str(tmp_path / "results"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert str(toml) in proc.stderr and "4 CPU" in proc.stderr and "resources" in proc.stderr
    assert not [p for p in (tmp_path / "results").iterdir() if p.is_dir()]  # no job recorded at all


# --------------------------------------------------------------------------------------------- Ctrl-C, resume
def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


def _agent(mark: str, hold: Path, seconds: int) -> str:
    """A command agent that waits while ``hold`` exists (up to ``seconds``), then writes a file. It is sealed:
    it sees ``hold`` through a read-only ``--mount`` of its folder, and the test finds it by ``mark`` in
    its command line (its own pid is its PID namespace's, not the host's)."""
    code = (
        f"import time, pathlib; t = time.time(); "
        f"[time.sleep(0.1) for _ in iter(lambda: pathlib.Path({str(hold)!r}).exists() "
        f"and time.time() - t < {seconds}, False)]; pathlib.Path('notes.txt').write_text('done')"
    )
    return f'{sys.executable} -c "{code}" {mark}'


def _agents(mark: str) -> list[int]:
    """Live agents (host pids) whose command line holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0] == sys.executable.encode() and mark.encode() in argv and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def _running_tasks() -> list[int]:
    """Ray worker processes executing one of our runs (Ray titles a busy worker ``ray::<task name>``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::skillassay-run"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_sigint_leaves_no_task_or_agent_behind_and_resume_finishes_the_job(cluster, tmp_path: Path) -> None:
    mark, holddir, results = (
        f"skillassay-ray-{time.monotonic_ns()}",
        tmp_path / "holddir",
        tmp_path / "results",
    )
    holddir.mkdir()
    hold = holddir / "hold"
    hold.touch()
    seen: set[int] = set()
    suite = tmp_path / "suite"
    shutil.copytree(REPO / "evals", suite, ignore=shutil.ignore_patterns("node_modules", ".venv"))
    config = suite / "fixtures" / "flask-py" / "eval_config.json"
    data = json.loads(config.read_text())
    config.write_text(json.dumps({**data, "resources": {"cpus": 1, "memory": "64MiB"}}))
    # its own session, as a terminal's foreground job is: SIGINT to this group reaches skillassay, not the
    # agents
    proc = subprocess.Popen(
        [
            *SKILLASSAY,
            "run",
            str(suite),
            "--agent",
            "command",
            "--command",
            _agent(mark, hold, 120),
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--runs",
            "3",
            "--executor",
            "ray",
            "--ray-address",
            cluster[0].address,
            "--results",
            str(results),
            "--json",
            "--mount",
            str(holddir),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    agents: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and len(agents) < 2:
            agents = _agents(mark)
            seen.update(agents)
            time.sleep(0.1)
        assert len(agents) == 2, f"two runs (one per node) did not start: {proc.poll()=}"
        assert len(_running_tasks()) == 2
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("skillassay did not exit within 60 s of SIGINT")
        assert proc.returncode == 130, stderr.decode(errors="replace")
        assert "--resume" in stderr.decode()
        assert not [p for p in agents if _alive(p)], "an agent outlived the interrupted job"
        assert not _running_tasks(), "a Ray task outlived the interrupted job"
        deadline = time.monotonic() + 20  # every CPU of the cluster is free again: no task holds one
        while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ray.available_resources().get("CPU", 0) == 2
        # the killed runs are abandoned, never recorded as finished
        assert not list(results.rglob("run.json"))
        seen.update(_agents(mark))
        assert len(seen) == 2  # the third never started
        [job] = [p.name for p in results.iterdir() if p.is_dir()]
        # the job's node-local ledgers were swept and removed
        assert not list((Path(tempfile.gettempdir()) / "skillassay-ledger").glob(f"{job}-*"))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in agents:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    hold.unlink()
    # resumed on the executor the job was started with (Ray: RAY_ADDRESS names the cluster)
    resumed = subprocess.run(
        [*SKILLASSAY, "run", "--resume", job, "--results", str(results), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "RAY_ADDRESS": cluster[0].address},
    )
    assert resumed.returncode == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    assert out["status"] == "finished" and len(out["runs"]) == 3
    assert all(r["outcome"] == "completed" and r["machine"]["ray_node"] for r in out["runs"])


# ---------------------------------------------------------------------------------------------- a node dies
def test_a_node_killed_mid_job_loses_no_run_and_counts_none_twice(cluster, tmp_path: Path) -> None:
    """Last in the module: it takes the second node away."""
    c, worker = cluster
    mark, holddir = f"skillassay-ray-{time.monotonic_ns()}", tmp_path / "holddir"
    holddir.mkdir()
    hold = holddir / "hold"
    hold.touch()
    executor = RayExecutor()
    victim = worker.node_id
    result: dict = {}

    import threading

    def job() -> None:
        result["job"] = _job(
            tmp_path / "results",
            executor,
            agent="command",
            command=_agent(mark, hold, 60),
            fixtures=["flask-py"],
            layers="rubric",
            runs=3,
            mounts=[holddir],
        )

    t = threading.Thread(target=job)
    t.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_agents(mark)) < 2:
        time.sleep(0.1)
    agents = _agents(mark)
    assert len(agents) == 2  # one run on each node
    c.remove_node(worker)
    # the lost run's agent is an orphan on a live machine (all nodes share this one): the driver sweeps it as
    # soon as it learns the node died, while the other run (held) goes on
    deadline = time.monotonic() + 60
    while len([p for p in agents if _alive(p)]) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len([p for p in agents if _alive(p)]) == 1, "the dead node's agent was left running"
    hold.unlink()  # the surviving run may finish now, then the rerun and the third run
    t.join(240)
    assert not t.is_alive()
    done = result["job"]
    assert done.job.status == "finished"
    stored = _recorded_once(tmp_path / "results", done.job)
    assert all(s["outcome"] == "completed" for s in stored), [s["error"] for s in stored]
    retried = [s for s in stored if s["machine"]["attempt"] > 1]
    assert len(retried) == 1 and retried[0]["machine"]["attempt"] == 2
    assert all(s["machine"]["ray_node"] != victim for s in stored)
    assert not [p for p in agents if _alive(p)]
