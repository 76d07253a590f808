"""Gates, hidden tests and the agent's new tests run in the app's own environment (built from its manifest
with the install cache), never skillassay's; a runner that cannot start is a harness error unless the
agent's change is why.

The apps here pin the same requirements as the order-service fixture (``pytest==9.2.0``), so they share its
cached environment: nothing is installed twice."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from parts import REPO, has, needs
from process_helpers import make_definition, write_tree

from skillassay.apps import deps
from skillassay.definitions.agent_eval import Criterion, QualityGate
from skillassay.graders import appenv, evaluate, gates, hidden_tests, meaningful_tests
from skillassay.graders.base import HarnessFault, ProcessContext, command_env
from skillassay.isolation import Policy

PINNED = "pytest==9.2.0\n"  # evals/fixtures/order-service/app/requirements.txt
APP = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "requirements.txt": PINNED,
}
WITH_SUB = {
    **APP,
    "calc.py": APP["calc.py"] + "\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_sub.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
}
NO_MANIFEST = {k: v for k, v in APP.items() if k != "requirements.txt"}
PYTEST = "python -m pytest -q -p no:cacheprovider"
HIDDEN = {"test_hidden_sub.py": "from calc import sub\n\n\ndef test_h():\n    assert sub(5, 3) == 2\n"}


def _definition(tmp_path: Path, hidden: dict[str, str] | None = None):
    d = make_definition(
        tmp_path,
        gates=[QualityGate(id="test", command=PYTEST, kind="test")],
        criteria=[
            Criterion(
                id="suite",
                description="",
                weight=1,
                grader="diff",
                gates=["test"],
                options={"owning_module": "calc.py"},
            ),
            Criterion(id="hidden", description="", weight=1, grader="hidden_tests"),
            Criterion(id="meaningful", description="", weight=1, grader="meaningful_tests"),
        ],
    )
    write_tree(d.source.parent / d.id / "hidden_tests", hidden or HIDDEN)
    return d


def _evaluate(
    tmp_path: Path, pristine: dict[str, str], modified: dict[str, str], hidden=None, isolation=None
):
    d = _definition(tmp_path, hidden)
    policy = (
        Policy(isolation=isolation, registries=["pypi.org", "files.pythonhosted.org"]) if isolation else None
    )
    return evaluate(
        d,
        write_tree(tmp_path / "p", pristine),
        write_tree(tmp_path / "m", modified),
        None,
        tmp_path / "w",
        policy=policy,
    )


def _ctx(tmp_path: Path, pristine, modified, isolation: str = "bubblewrap") -> ProcessContext:
    return ProcessContext(
        definition=_definition(tmp_path),
        pristine_dir=write_tree(tmp_path / "p", pristine),
        modified_dir=write_tree(tmp_path / "m", modified),
        transcript=None,
        work_dir=tmp_path / "w",
        policy=Policy(isolation=isolation, registries=["pypi.org", "files.pythonhosted.org"]),
    )


# ----------------------------------------------------------------------------- whose environment
@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
def test_commands_run_in_the_apps_environment_never_skillassays(tmp_path: Path, isolation: str) -> None:
    show = (
        'python -c "import os, sys, pytest; print(sys.prefix); print(pytest.__version__); '
        "print(os.environ['PATH']); print(os.environ.get('VIRTUAL_ENV'))\""
    )
    ctx = _ctx(tmp_path, APP, APP, isolation)
    [result] = gates.run_gates([QualityGate(id="show", command=show)], ctx).values()
    assert result.status == "passed", result.output
    prefix, version, path, venv = result.output.strip().splitlines()
    cache = str(deps.cache_root() / "deps")
    assert prefix.startswith(cache) and venv == prefix, result.output  # the app's cached venv
    assert version == "9.2.0"  # what the app pins, whatever skillassay's environment holds
    if sys.prefix != sys.base_prefix:
        assert str(Path(sys.prefix) / "bin") not in path.split(os.pathsep)  # skillassay's own venv: never
    assert path.split(os.pathsep)[0] == prefix + "/bin"


def test_both_sides_share_one_environment_when_the_manifest_is_unchanged(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, APP, WITH_SUB)
    assert ctx.app_env("modified").venv == ctx.app_env("pristine").venv
    assert ctx.app_env("modified").manifest == ["requirements.txt"]
    changed = _ctx(tmp_path / "b", APP, {**WITH_SUB, "requirements.txt": PINNED + "# and nothing else\n"})
    assert changed.app_env("modified").venv != changed.app_env("pristine").venv


def test_command_env_leaves_skillassays_venv_and_python_variables_out(monkeypatch) -> None:
    monkeypatch.setenv("PYTHONHOME", "/somewhere")
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("PATH", f"{Path(sys.prefix) / 'bin'}{os.pathsep}/usr/bin")
    env = command_env()
    assert "PYTHONHOME" not in env and "VIRTUAL_ENV" not in env
    if sys.prefix != sys.base_prefix:
        assert str(Path(sys.prefix) / "bin") not in env["PATH"].split(os.pathsep)
    assert "/usr/bin" in env["PATH"].split(os.pathsep)


# ----------------------------------------------------------------------------- the harness cannot run it
def test_a_runner_missing_from_the_apps_environment_is_a_harness_error(tmp_path: Path) -> None:
    """No manifest: the bare interpreter, no pytest. The gate, the hidden tests and the new tests cannot run
    on either side: harness errors naming what is missing, never zero points."""
    r = _evaluate(
        tmp_path, NO_MANIFEST, {**NO_MANIFEST, **{k: WITH_SUB[k] for k in ("calc.py", "tests/test_sub.py")}}
    )
    stages = {f.stage: f.message for f in r.failures}
    assert set(stages) == {"gate:test", "grader:hidden", "grader:meaningful"}, stages
    assert "pytest is not installed in the app's environment" in stages["gate:test"]
    assert "no manifest" in stages["gate:test"]
    for stage in ("grader:hidden", "grader:meaningful"):
        assert "cannot run on the pristine app either" in stages[stage] and "no manifest" in stages[stage]
    assert all(c.fraction is None for c in r.criteria if c.id in ("suite", "hidden", "meaningful"))


def test_a_gate_command_that_is_not_installed_is_a_harness_error(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, APP, WITH_SUB)
    [result] = gates.run_gates(
        [QualityGate(id="lint", command="ruff-not-installed-xyz check .")], ctx
    ).values()
    assert result.status == "unavailable" and "command not found" in result.reason
    assert "on the pristine app too" in result.reason


def test_pristine_tests_that_cannot_be_collected_are_the_harness_s_problem(tmp_path: Path) -> None:
    broken = {**APP, "tests/conftest.py": "import not_installed_anywhere_xyz\n"}
    r = _evaluate(tmp_path, broken, {**broken, "calc.py": WITH_SUB["calc.py"]})
    [gate] = r.gates
    assert gate.status == "unavailable" and "could not load" in gate.reason, gate
    assert "gate:test" in {f.stage for f in r.failures}


def test_a_harness_module_the_environment_lacks_is_a_harness_error(tmp_path: Path) -> None:
    hidden = {"test_hidden.py": "import freezegun_not_installed_xyz\n\n\ndef test_h():\n    assert True\n"}
    d = _definition(tmp_path, hidden)
    ctx = ProcessContext(
        definition=d,
        pristine_dir=write_tree(tmp_path / "p", APP),
        modified_dir=write_tree(tmp_path / "m", WITH_SUB),
        transcript=None,
        work_dir=tmp_path / "w",
    )
    with pytest.raises(
        HarnessFault, match=r"freezegun_not_installed_xyz.*neither the app nor its environment"
    ):
        hidden_tests.grade(d.criteria[1], ctx)


# ----------------------------------------------------------------------------- the agent's doing
def test_dropping_the_runner_from_the_manifest_is_the_agents_doing(tmp_path: Path) -> None:
    """The agent's requirements.txt no longer installs pytest; the pristine app's does: measurable there, so
    the gate failed and the tests earn nothing; no harness error."""
    modified = {**WITH_SUB, "requirements.txt": "# nothing needed\n"}
    r = _evaluate(tmp_path, APP, modified)
    assert r.failures == []
    [gate] = r.gates
    assert gate.status == "failed" and "the change made it unmeasurable" in gate.reason, gate
    by_id = {c.id: c for c in r.criteria}
    assert by_id["suite"].fraction == 0.0
    assert (
        by_id["hidden"].fraction == 0.0 and "the change made them unrunnable" in by_id["hidden"].evidence[0]
    )
    assert (
        by_id["meaningful"].fraction == 0.0
        and "the change made them unrunnable" in by_id["meaningful"].evidence[0]
    )


def test_an_install_the_change_broke_fails_what_needs_it(tmp_path: Path) -> None:
    r = _evaluate(tmp_path, APP, {**WITH_SUB, "requirements.txt": "this is not a requirement !!\n"})
    assert r.failures == []
    [gate] = r.gates
    assert (
        gate.status == "failed"
        and "the modified app: could not install the app's dependencies" in gate.reason
    )
    assert "the change broke it" in gate.output
    assert {c.id: c.fraction for c in r.criteria if c.id != "suite"} == {"hidden": 0.0, "meaningful": 0.0}


def test_an_install_that_fails_on_the_pristine_app_is_a_harness_error(tmp_path: Path) -> None:
    bad = {**APP, "requirements.txt": "this is not a requirement !!\n"}
    r = _evaluate(tmp_path, bad, {**bad, "calc.py": WITH_SUB["calc.py"]})
    stages = {f.stage: f.message for f in r.failures}
    assert {"gates", "grader:hidden"} <= set(stages), stages
    assert "the pristine app: could not install the app's dependencies (requirements.txt)" in stages["gates"]
    assert "Invalid requirement" in stages["gates"]  # the install log's tail says why


def test_deleting_what_the_hidden_tests_import_is_the_agents_doing(tmp_path: Path) -> None:
    d = _definition(tmp_path)
    ctx = ProcessContext(
        definition=d,
        pristine_dir=write_tree(tmp_path / "p", APP),
        modified_dir=write_tree(tmp_path / "m", {k: v for k, v in APP.items() if k != "calc.py"}),
        transcript=None,
        work_dir=tmp_path / "w",
    )
    got = hidden_tests.grade(d.criteria[1], ctx)
    assert got.fraction == 0.0 and "collection failed" in got.evidence[0]


def test_a_conftest_the_agent_broke_is_its_own_doing(tmp_path: Path) -> None:
    modified = {**WITH_SUB, "tests/conftest.py": "import not_installed_anywhere_xyz\n"}
    ctx = _ctx(tmp_path, APP, modified)
    got = meaningful_tests.grade(Criterion(id="m", description="", weight=1, grader="meaningful_tests"), ctx)
    assert got.fraction == 0.0 and "the change made them unrunnable" in got.evidence[0], got.evidence


# ----------------------------------------------------------------------------- manifests
def test_manifests_are_read_without_following_links(tmp_path: Path) -> None:
    app = write_tree(
        tmp_path / "a",
        {
            "requirements.txt": "-r reqs/base.txt\nflask\n",
            "reqs/base.txt": "-c ../constraints.txt\nrequests\n",
            "constraints.txt": "requests<3\n",
            "package.json": "{}",
        },
    )
    found = appenv.read_manifest(app)
    assert found.requirements == ["requirements.txt"] and found.declares("node") and found.venv
    assert set(found.files) == {"requirements.txt", "reqs/base.txt", "constraints.txt", "package.json"}
    (app / "requirements.txt").unlink()
    (app / "requirements.txt").symlink_to("/etc/passwd")
    with pytest.raises(appenv.ManifestError, match=r"symbolic link"):
        appenv.read_manifest(app)
    ctx = _ctx(tmp_path / "c", APP, {**WITH_SUB, "requirements.txt": "x"})
    (ctx.modified_dir / "requirements.txt").unlink()
    (ctx.modified_dir / "requirements.txt").symlink_to("/etc/passwd")
    env = ctx.app_env("modified")  # the agent's link: its doing, never read
    assert env.error is not None and "symbolic link" in env.error
    fifo = _ctx(tmp_path / "d", APP, {**WITH_SUB, "requirements.txt": "x"})
    (fifo.modified_dir / "requirements.txt").unlink()
    os.mkfifo(fifo.modified_dir / "requirements.txt")  # never opened for reading (it would block the harness)
    assert "not a regular file" in (fifo.app_env("modified").error or "")


def test_pyproject_dependencies_and_test_extras(tmp_path: Path) -> None:
    app = write_tree(
        tmp_path / "a",
        {
            "pyproject.toml": (
                '[project]\nname = "x"\ndependencies = ["flask>=3"]\n[project.optional-dependencies]\n'
                'test = ["pytest", "--index-url=http://evil.example"]\ndocs = ["sphinx"]\n'
                '[dependency-groups]\ndev = ["ruff", {include-group = "test"}]\n'
            )
        },
    )
    found = appenv.read_manifest(app)
    assert (
        found.packages == ["flask>=3", "pytest", "ruff"]
        and found.requirements == []
        and not found.declares("node")
    )


# ----------------------------------------------------------------------------- node
@needs(has("node") and has("npm"), "node and npm")
@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
def test_a_node_app_gets_its_own_node_modules(tmp_path: Path, isolation: str) -> None:
    """The express-ts fixture's manifest (the sandbox layer installs the same one: a shared cache entry)."""
    source = REPO / "evals" / "fixtures" / "express-ts" / "app"
    files = {
        p.relative_to(source).as_posix(): p.read_text()
        for p in source.rglob("*")
        if p.is_file() and "node_modules" not in p.parts and "dist" not in p.parts
    }
    ctx = _ctx(tmp_path, files, files, isolation)
    results = gates.run_gates(
        [
            QualityGate(id="build", command="npm run build --silent"),
            QualityGate(id="where", command="node -p \"require.resolve('express')\""),
        ],
        ctx,
    )
    assert results["build"].status == "passed", results["build"].output
    assert results["where"].status == "passed", results["where"].output
    env = ctx.app_env("modified")
    # sealed: the cached folder mounted in place (read-only); unsealed: a link to it
    where = (
        tmp_path / "w" / "gates" / "node_modules" if isolation == "bubblewrap" else env.folders.get("node")
    )
    assert results["where"].output.strip().startswith(str(where)), results["where"].output
    assert (
        env.venv is None
        and env.folders.get("node") is not None
        and env.manifest == ["package.json", "package-lock.json"]
    )
    if isolation == "bubblewrap":  # the cache entry itself was never written by the build
        assert not (env.folders["node"].parent / "dist").exists()
    shutil.rmtree(tmp_path / "w", ignore_errors=True)
