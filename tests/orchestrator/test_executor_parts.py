"""The parts of the distributed executor that need no cluster: what travels to workers and back, the
node-local ledger of process groups (and that it cannot be turned against the machine), resources in
definitions, and the run-level services."""

from __future__ import annotations

import io
import json
import shutil
import signal
import subprocess
import tarfile
from pathlib import Path

import pytest

from skillassay import reaper
from skillassay.definitions import load_suite
from skillassay.errors import DefinitionError
from skillassay.orchestrator.executors import available_executors, executor_class, ledger, shipping
from skillassay.orchestrator.run_services import EmulatorRecipe, JobServices

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    dest = tmp_path / "suite"
    shutil.copytree(REPO / "evals", dest, ignore=shutil.ignore_patterns("node_modules", ".venv"))
    return dest


# -------------------------------------------------------------------------------------------- shipping inputs
def test_inputs_travel_once_per_machine_and_definitions_load_from_the_copy(
    suite: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(shipping.tempfile, "gettempdir", lambda: str(tmp_path / "worker-tmp"))
    (suite / "fixtures" / "flask-py" / "app" / "node_modules" / "dep").mkdir(parents=True)
    (suite / "fixtures" / "flask-py" / "app" / "node_modules" / "dep" / "big.js").write_text("x" * 1000)
    defs = load_suite(suite, ["flask-py", "cancellation-support"])
    skill = REPO / "examples" / "skills" / "seam-lock-access"
    key, archive = shipping.pack_inputs(defs, skill)
    assert shipping.pack_inputs(defs, skill)[0] == key  # stable
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        names = tar.getnames()
    assert not [n for n in names if "node_modules" in n]  # dependencies never travel
    assert not [n for n in names if "/express-ts/" in n]  # only what the chosen evals read
    assert "skill/SKILL.md" in names
    fetched = []
    here = shipping.unpack_inputs(key, lambda: fetched.append(1) or archive)
    assert shipping.unpack_inputs(key, lambda: fetched.append(1) or archive) == here and fetched == [1]
    for d in defs:
        local = shipping.definition_here(d, here)
        assert local.id == d.id and local.prompt == d.prompt and local.criteria == d.criteria
        assert local.app_dir.is_relative_to(here) and local.app_dir.is_dir()
        assert local.source.is_relative_to(here)
    native = shipping.definition_here(next(d for d in defs if d.format == "native"), here)
    assert (native.source.parent / "cancellation-support" / "hidden_tests").is_dir()
    assert (shipping.skill_here(skill, here) / "SKILL.md").read_text() == (skill / "SKILL.md").read_text()
    # one byte changed anywhere: another key, so no worker reuses a stale copy
    (suite / "fixtures" / "flask-py" / "app" / "app.py").write_text("changed\n")
    assert shipping.pack_inputs(defs, skill)[0] != key
    shipping.drop_inputs(key)
    assert not here.exists()


def test_trigger_prompts_travel_with_their_fixtures(suite: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(shipping.tempfile, "gettempdir", lambda: str(tmp_path / "worker-tmp"))
    # the suite names its skill relative to itself (../../examples/skills/...): the copy needs it there too
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    prompts = load_suite(suite / "trigger-evals" / "seam-lock-access.toml")
    key, archive = shipping.pack_inputs(prompts, prompts[0].trigger.skill_dir)
    here = shipping.unpack_inputs(key, lambda: archive)
    for d in prompts:
        local = shipping.definition_here(d, here)
        assert local.trigger == d.trigger and local.prompt == d.prompt
        if Path(d.app_dir).is_dir():
            assert local.app_dir.is_relative_to(here) and local.app_dir.is_dir()
        else:  # a prompt with no fixture starts in an empty repository, on any machine
            assert local.app_dir == d.app_dir
    shipping.drop_inputs(key)


def test_a_file_outside_the_suite_cannot_travel(suite: Path, tmp_path: Path) -> None:
    [d] = load_suite(suite, ["flask-py"])
    outside = tmp_path / "elsewhere.json"
    outside.write_text((suite / "rubric.json").read_text())
    with pytest.raises(Exception, match="outside the suite"):
        shipping.pack_inputs([d.model_copy(update={"rubric_file": outside})], None)


# ------------------------------------------------------------------------------------------- run folders back
def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def test_a_run_folder_comes_back_whole_with_the_agents_symlinks(tmp_path: Path) -> None:
    run = tmp_path / "worker" / "run_1"
    (run / "workspace").mkdir(parents=True)
    (run / "run.json").write_text('{"from": "worker"}')
    # what an agent left: kept as a link, never followed
    (run / "workspace" / "link").symlink_to("/etc/passwd")
    dest = tmp_path / "results" / "job" / "ev" / "run_1"
    dest.mkdir(parents=True)
    (dest / "half-written.log").write_text("an unfinished earlier attempt")
    shipping.unpack_run(shipping.pack_run(run), dest, run_json='{"from": "driver"}')
    assert json.loads((dest / "run.json").read_text()) == {"from": "driver"}
    assert (dest / "workspace" / "link").is_symlink() and str(
        (dest / "workspace" / "link").readlink()
    ) == "/etc/passwd"
    assert not (dest / "half-written.log").exists()
    assert [p.name for p in dest.parent.iterdir()] == ["run_1"]  # no staging folder left


def test_an_archive_cannot_write_outside_its_run_folder(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    link = tarfile.TarInfo("escape")
    link.type, link.linkname = tarfile.SYMTYPE, str(target)
    evil = tarfile.TarInfo("escape/owned.txt")
    evil.size = 5
    dotdot = tarfile.TarInfo("../../owned.txt")
    dotdot.size = 5
    dest = tmp_path / "results" / "job" / "ev" / "run_1"
    for members in ([(link, None), (evil, b"owned")], [(dotdot, b"owned")]):
        with pytest.raises(tarfile.FilterError):
            shipping.unpack_run(_tar(members), dest)
        assert (
            not dest.exists()
            and not list(target.iterdir())
            and not (tmp_path / "results" / "owned.txt").exists()
        )
        assert not list(dest.parent.iterdir()) if dest.parent.exists() else True


# ---------------------------------------------------------------------------------------------- the ledger
def _group(seconds: int = 60) -> subprocess.Popen:
    return subprocess.Popen(["sleep", str(seconds)], start_new_session=True, stdin=subprocess.DEVNULL)


@pytest.fixture
def session(tmp_path: Path, monkeypatch) -> tuple[str, str]:
    monkeypatch.setattr(ledger.tempfile, "gettempdir", lambda: str(tmp_path))
    return "job-1", "k" * 32


def test_the_sweep_kills_a_dead_workers_groups_and_spares_a_live_ones(session) -> None:
    book = ledger.Ledger(*session, "ev/run_1")
    reaper.add_watcher(book.watch)
    orphan, alive = _group(), _group()
    try:
        reaper.register(orphan.pid)
        reaper.register(alive.pid)
        assert sorted(p.name for p in ledger.ledger_dir(session[0]).glob("*.json")) == sorted(
            [f"{orphan.pid}.json", f"{alive.pid}.json"]
        )
        # the orphan's owner (a worker) died: rewrite its entry as such a worker's, signed
        entry = json.loads((ledger.ledger_dir(session[0]) / f"{orphan.pid}.json").read_text())
        dead = subprocess.Popen(["true"])
        dead.wait()
        entry.update(owner=dead.pid, owner_start=12345)
        entry["sig"] = ledger._sign(session[1], entry)
        (ledger.ledger_dir(session[0]) / f"{orphan.pid}.json").write_text(json.dumps(entry))
        assert ledger.sweep(*session, orphans_only=True, grace=1.0) == 1
        assert orphan.wait(timeout=5) == -signal.SIGTERM
        assert alive.poll() is None  # its worker (this process) is alive: the run goes on
        # a run whose attempt failed loses its groups even while its worker lives
        assert ledger.sweep(*session, orphans_only=True, runs=["ev/run_1"], grace=1.0) == 1
        assert alive.wait(timeout=5) == -signal.SIGTERM
    finally:
        reaper.remove_watcher(book.watch)
        for p in (orphan, alive):
            reaper.unregister(p.pid)
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_forged_or_stale_entry_kills_nothing(session) -> None:
    stranger = _group()
    try:
        root = ledger.ledger_dir(session[0])
        root.mkdir(parents=True)
        forged = {
            "pgid": stranger.pid,
            "leader_start": ledger._start_time(stranger.pid),
            "owner": 1,
            "owner_start": 0,
            "run": "x",
        }
        (root / "a.json").write_text(json.dumps({**forged, "sig": ledger._sign("not-the-key", forged)}))
        # the number was reused
        stale = {**forged, "leader_start": (ledger._start_time(stranger.pid) or 0) + 1}
        (root / "b.json").write_text(json.dumps({**stale, "sig": ledger._sign(session[1], stale)}))
        assert ledger.sweep(*session, stop=True, grace=0.5) == 0
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_the_stop_mark_refuses_new_groups(session) -> None:
    book = ledger.Ledger(*session, "ev/run_1")
    ledger.sweep(*session, stop=True)
    reaper.add_watcher(book.watch)
    proc = _group()
    try:
        with pytest.raises(KeyboardInterrupt):
            reaper.register(proc.pid)
        assert proc.wait(timeout=5) in (-signal.SIGTERM, -signal.SIGKILL)
        assert proc.pid not in reaper.registered()
    finally:
        reaper.remove_watcher(book.watch)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ledger.sweep(*session, remove=True)
    assert not ledger.ledger_dir(session[0]).exists()


# ---------------------------------------------------------------------------------------------- resources
def test_resources_are_read_from_both_formats_and_bad_ones_are_named(suite: Path) -> None:
    toml = suite / "agent-evals" / "cancellation-support.toml"
    toml.write_text(toml.read_text() + '\n[resources]\ncpus = 2\nmemory = "1.5GiB"\n')
    config = suite / "fixtures" / "flask-py" / "eval_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "resources": {"memory": 536870912}}))
    by_id = {e.id: e for e in load_suite(suite, ["cancellation-support", "flask-py", "express-ts"])}
    assert by_id["cancellation-support"].resources.cpus == 2
    assert by_id["cancellation-support"].resources.memory == int(1.5 * 2**30)
    assert by_id["flask-py"].resources.cpus == 1 and by_id["flask-py"].resources.memory == 2**29
    assert by_id["express-ts"].resources.cpus == 1 and by_id["express-ts"].resources.memory is None
    toml.write_text(toml.read_text().replace('memory = "1.5GiB"', 'memory = "plenty"'))
    with pytest.raises(DefinitionError) as err:
        load_suite(suite, ["cancellation-support"])
    assert [(p.file, p.pointer) for p in err.value.problems] == [(toml, "/resources/memory")]


# ---------------------------------------------------------------------------------------------- services
def test_services_start_the_emulator_once_on_first_use() -> None:
    assert JobServices().open().emulator() is None  # live Seam or no sandbox layer: none at all
    services = JobServices(emulator=EmulatorRecipe(async_delay=0.1, automation_delay=0.0)).open()
    assert services.started() == {}
    try:
        first = services.emulator()
        assert services.emulator() is first and first.async_delay == 0.1
        assert first.base_url.startswith("http://127.0.0.1:")
    finally:
        services.close()
    with pytest.raises(RuntimeError):
        services.emulator()


def test_executors_are_found_by_name() -> None:
    assert {"local", "ray"} <= set(available_executors())
    assert executor_class("ray").name == "ray" and executor_class("local").name == "local"
    with pytest.raises(Exception, match="unknown executor"):
        executor_class("slurm")


def test_the_deployment_files_agree_with_the_pinned_ray() -> None:
    """The KubeRay example in the docs is valid YAML for the pinned Ray, and the worker image is built by the
    project's set-up script, which installs the Ray extra."""
    import re

    import yaml

    pinned = re.search(r'"ray==([0-9.]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    doc = (REPO / "docs" / "distributed.md").read_text()
    [cluster] = [
        yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.DOTALL) if "RayCluster" in b
    ]
    assert cluster["kind"] == "RayCluster" and cluster["spec"]["rayVersion"] == pinned
    assert cluster["spec"]["workerGroupSpecs"][0]["minReplicas"] >= 1
    dockerfile = (REPO / "deploy" / "ray-worker.Dockerfile").read_text()
    assert "scripts/setup.sh" in dockerfile
    [extras] = re.findall(r"pip install -q -e '\.\[([a-z,]+)\]'", (REPO / "scripts" / "setup.sh").read_text())
    assert "ray" in extras.split(","), extras
