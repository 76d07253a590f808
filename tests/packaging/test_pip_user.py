"""The pip user's path, for real: sdist and wheel built from this checkout, the wheel installed into a fresh
virtual environment outside the repository, then `init`, `check`, `run --agent reference` (both layers, on the
embedded emulator), `report --html`, `doctor`, and `install-agents` into an empty cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from parts import REPO, pinned_node_version

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long(reason="sdist and wheel built, installed in a new venv, a whole job run from the wheel"),
]


def _sh(argv, cwd, env=None, timeout=900):
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return proc


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = _sh([sys.executable, "-m", "build", "--outdir", str(out)], cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}


@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("pip-user")  # outside the repository
    venv = home / "venv"
    assert _sh([sys.executable, "-m", "venv", str(venv)], cwd=home).returncode == 0
    proc = _sh([str(venv / "bin" / "pip"), "install", "-q", str(dists["wheel"])], cwd=home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    return {"home": home, "bin": venv / "bin" / "skillassay", "env": env, "venv": venv}


def test_the_distributions_carry_what_the_package_needs(dists):
    with zipfile.ZipFile(dists["wheel"]) as whl:
        names = set(whl.namelist())
        meta = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for needed in (
        "skillassay/py.typed",
        "skillassay/starter/evals/rubric.json",
        "skillassay/starter/evals/fixtures/express-ts/eval_config.json",
        "skillassay/starter/examples/skills/seam-lock-access/SKILL.md",
        "skillassay/data/node/package.json",
        "skillassay/data/node/package-lock.json",
        "skillassay/kinds/trigger/templates/report.html",  # a kind's own report markup
        "skillassay/seam/templates/report.html",
        "skillassay/report/templates/job.html",
    ):
        assert needed in names, needed
    assert not [n for n in names if "/node_modules/" in n or "__pycache__" in n]
    from skillassay import __version__

    assert f"Version: {__version__}" in meta and "License-Expression: Apache-2.0" in meta
    assert "Typing :: Typed" in meta and "Project-URL: Source" in meta
    assert "# skillassay" in meta  # the long description is the README
    with tarfile.open(dists["sdist"]) as sdist:
        members = {m.split("/", 1)[1] for m in sdist.getnames() if "/" in m}
    assert {"pyproject.toml", "README.md", "LICENSE", "evals/rubric.json", "node/package.json"} <= members


def test_init_check_run_report_from_the_wheel(installed):
    home, bin_, env = installed["home"], str(installed["bin"]), installed["env"]
    proc = _sh([bin_, "init", "suite"], cwd=home, env=env)
    assert proc.returncode == 0, proc.stderr
    suite = home / "suite"
    assert (suite / "README.md").is_file() and (suite / "skills" / "seam-lock-access" / "SKILL.md").is_file()
    assert _sh([bin_, "init", "suite"], cwd=home, env=env).returncode == 2  # never over what is there

    proc = _sh([bin_, "check", "suite"], cwd=home, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    proc = _sh(
        [bin_, "run", "suite", "--agent", "reference", "--results", "results", "--jobs", "2", "--json"],
        cwd=home,
        env=env,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)
    runs = out["runs"]
    evals = {p.parent.name for p in (suite / "fixtures").glob("*/eval_config.json")}
    assert {r["eval_id"] for r in runs} >= evals
    for r in runs:
        assert r["outcome"] == "completed", (r["eval_id"], r.get("error"))
        assert r["verdict"]["passed"], r["eval_id"]
        if r["eval_id"] in evals:  # Seam evals: both layers on the embedded emulator
            assert r["grades"]["rubric_total"] == 100 and r["grades"]["sandbox_total"] == 100, r["eval_id"]

    job = out["job_id"]
    proc = _sh([bin_, "report", job, "--results", "results", "--html", "site"], cwd=home, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Evals" in (home / "site" / "index.html").read_text()
    assert (home / "site" / "jobs" / job / "index.html").is_file()


def test_doctor_and_install_agents_from_the_wheel(installed, tmp_path):
    home, bin_ = installed["home"], str(installed["bin"])
    env = {**installed["env"], "SKILLASSAY_CACHE_DIR": str(tmp_path / "cache")}
    proc = _sh([bin_, "doctor", "--json"], cwd=home, env=env)
    found = {f["part"]: f for f in json.loads(proc.stdout)}
    claude = found[f"claude-code CLI {pinned_node_version('@anthropic-ai/claude-code')}"]
    assert not claude["ok"] and claude["fix"] == "skillassay install-agents"  # an empty cache, no checkout

    proc = _sh([bin_, "install-agents"], cwd=home, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = _sh([bin_, "doctor", "--json"], cwd=home, env=env)
    found = {f["part"]: f for f in json.loads(proc.stdout)}
    for agent, package in (("claude-code", "@anthropic-ai/claude-code"), ("codex", "@openai/codex")):
        f = found[f"{agent} CLI {pinned_node_version(package)}"]
        assert f["ok"], f
        assert str(tmp_path / "cache") in f["found"]
