"""The docker backend's commands (pure argv builders) and its refusal without an engine. No engine runs
here.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from skillassay.apps.backends import docker
from skillassay.errors import InfrastructureError


def test_image_tag_is_docker_safe():
    assert docker.image_tag("express-ts", "run-1") == "eval-express-ts-run-1"
    assert docker.image_tag("Hotel_Flask", "R:2/x") == "eval-hotel_flask-r-2-x"


def test_build_argv_is_the_plans_command():
    argv = docker.build_argv("flask-py", "r1", Path("/fx/flask-py/Dockerfile"), Path("/tmp/copy"))
    assert argv == ["docker", "build", "-t", "eval-flask-py-r1", "-f", "/fx/flask-py/Dockerfile", "/tmp/copy"]


def test_run_argv_host_network_passes_env_by_name_only():
    argv = docker.run_argv(
        "eval-x-1",
        "eval-x-1-app",
        host_port=41000,
        app_port=41000,
        env_names=["SEAM_API_KEY", "SEAM_ENDPOINT", "PORT"],
        network="host",
    )
    assert argv[:5] == ["docker", "run", "-d", "--name", "eval-x-1-app"]
    assert "--network" in argv and argv[argv.index("--network") + 1] == "host"
    assert "-p" not in argv
    assert argv[-1] == "eval-x-1"
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-e"]
    assert pairs == ["PORT", "SEAM_API_KEY", "SEAM_ENDPOINT"]  # names only: values never in an argv


def test_run_argv_bridge_publishes_the_port_and_adds_the_host():
    argv = docker.run_argv("t", "n", host_port=41000, app_port=3000, env_names=[], network="bridge")
    assert argv[argv.index("-p") + 1] == "127.0.0.1:41000:3000"
    assert argv[argv.index("--add-host") + 1] == "host.docker.internal:host-gateway"


def test_seam_endpoint_as_the_container_sees_it():
    assert docker.container_seam_endpoint("http://127.0.0.1:5555", "host") == "http://127.0.0.1:5555"
    assert (
        docker.container_seam_endpoint("http://127.0.0.1:5555", "bridge")
        == "http://host.docker.internal:5555"
    )
    assert (
        docker.container_seam_endpoint("https://connect.getseam.com", "bridge")
        == "https://connect.getseam.com"
    )


def test_logs_and_removal_commands():
    assert docker.logs_argv("c") == ["docker", "logs", "c"]
    assert docker.rm_argv("c") == ["docker", "rm", "-f", "c"]


def _fake_docker(tmp_path: Path, script: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "docker"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir) + os.pathsep + os.environ["PATH"]


def test_check_engine_fails_clearly_when_no_engine_answers(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "PATH", _fake_docker(tmp_path, 'echo "Cannot connect to the Docker daemon" >&2; exit 1\n')
    )
    with pytest.raises(
        InfrastructureError, match="no Docker engine answered: Cannot connect to the Docker daemon"
    ):
        docker.check_engine()


def test_check_engine_without_a_cli(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InfrastructureError, match="no Docker engine answered"):
        docker.check_engine()


def test_check_engine_passes_when_the_engine_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _fake_docker(tmp_path, "echo 28.2.2\n"))
    docker.check_engine()


def test_cli_exits_2_without_an_engine(tmp_path):
    repo = Path(__file__).resolve().parents[3]
    fx = repo / "evals" / "fixtures" / "flask-py"
    env = {**os.environ, "PATH": _fake_docker(tmp_path, 'echo "no engine here" >&2; exit 1\n')}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillassay",
            "sandbox",
            "--modified-dir",
            str(fx / "test_golden"),
            "--fixture-dir",
            str(fx),
            "--run-id",
            "d1",
            "--backend",
            "docker",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert "no Docker engine answered: no engine here" in r.stderr
