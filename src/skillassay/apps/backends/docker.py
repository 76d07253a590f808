"""Run the app in Docker, as the plan did: ``docker build -f <fixture>/Dockerfile <copy>`` and ``docker run
-d``.

The argv builders are pure functions (tested without an engine). Secrets are passed as ``-e NAME`` with the
value in the docker CLI's own environment, so they never appear in an argv, a process list or a log.

Networking: on Linux the container shares the host network (``--network host``), so it reaches the emulator on
127.0.0.1 and listens on the port we choose through PORT. Elsewhere (``bridge``) the app port is published on
127.0.0.1 and the container reaches the host as ``host.docker.internal`` (``--add-host ...:host-gateway``);
the emulator must then listen on an address the bridge reaches.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from skillassay.apps.backends.backend import Backend, base_env, copy_app, wait_healthy
from skillassay.apps.steps import StepFailed, free_port, run_step
from skillassay.errors import InfrastructureError

Network = Literal["host", "bridge"]


def image_tag(fixture: str, run_id: str) -> str:
    """``eval-<fixture>-<run_id>``, lower-cased and reduced to the characters Docker accepts in a tag name."""
    raw = f"eval-{fixture}-{run_id}".lower()
    return re.sub(r"[^a-z0-9_.-]+", "-", raw).strip("-.")[:120]


def build_argv(fixture: str, run_id: str, dockerfile: Path, context: Path) -> list[str]:
    return ["docker", "build", "-t", image_tag(fixture, run_id), "-f", str(dockerfile), str(context)]


def run_argv(
    tag: str,
    name: str,
    *,
    host_port: int,
    app_port: int,
    env_names: list[str],
    network: Network = "host",
) -> list[str]:
    argv = ["docker", "run", "-d", "--name", name]
    if network == "host":
        argv += ["--network", "host"]
    else:
        argv += ["-p", f"127.0.0.1:{host_port}:{app_port}", "--add-host", "host.docker.internal:host-gateway"]
    for n in sorted(env_names):
        argv += ["-e", n]  # value taken from the docker CLI's environment
    argv.append(tag)
    return argv


def logs_argv(name: str) -> list[str]:
    return ["docker", "logs", name]


def rm_argv(name: str) -> list[str]:
    return ["docker", "rm", "-f", name]


def rmi_argv(tag: str) -> list[str]:
    return ["docker", "rmi", "-f", tag]


def default_network() -> Network:
    return "host" if sys.platform.startswith("linux") else "bridge"


def container_seam_endpoint(url: str, network: Network) -> str:
    if network == "host":
        return url
    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost", "0.0.0.0"):
        netloc = "host.docker.internal" + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url


def check_engine() -> None:
    """Raise InfrastructureError (exit 2) unless ``docker info`` answers."""
    if shutil.which("docker") is None:
        raise InfrastructureError("no Docker engine answered: the docker CLI is not installed")
    try:
        r = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfrastructureError(f"no Docker engine answered: {e}") from e
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip().splitlines()
        raise InfrastructureError(
            f"no Docker engine answered: {msg[-1] if msg else f'docker info exited {r.returncode}'}"
        )


class DockerBackend(Backend):
    name = "docker"

    def __init__(self, *, health_timeout: float = 60.0, network: Network | None = None, **kw):
        super().__init__(**kw)
        self.health_timeout = health_timeout
        self.network: Network = network or default_network()
        self.tag = image_tag(self.fixture, self.run_id)
        self.container = self.tag + "-app"
        self.workdir: Path | None = None
        self.started = False

    def seam_endpoint(self, emulator_url: str) -> str:
        return container_seam_endpoint(emulator_url, self.network)

    def prepare(self) -> None:
        check_engine()
        t0 = time.monotonic()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"skillassay-docker-{self.fixture}-"))
        context = self.workdir / "app"
        copy_app(self.source_dir, context)
        self.timings["copy"] = time.monotonic() - t0
        self.timings["install"] = 0.0  # part of the image build
        dockerfile = self.dockerfile
        log = self.logs_dir / "build.log"
        self.logs["build"] = log
        t0 = time.monotonic()
        run_step(
            "build",
            build_argv(self.fixture, self.run_id, dockerfile, context),
            cwd=self.workdir,
            env=base_env(),
            log=log,
            timeout=self.build_timeout,
        )
        self.timings["build"] = time.monotonic() - t0
        self.facts["image"] = self.tag

    def start(self, env: dict[str, str]) -> str:
        t0 = time.monotonic()
        host_port = free_port()
        app_port = host_port if self.network == "host" else (self.plan.app_port or 3000)
        full: dict[str, str] = {**self.plan.env, **env, "PORT": str(app_port)}
        cli_env: Mapping[str, str] = {**base_env(), **full}
        argv = run_argv(
            self.tag,
            self.container,
            host_port=host_port,
            app_port=app_port,
            env_names=list(full),
            network=self.network,
        )
        self.facts["run_argv"] = argv
        log = self.logs_dir / "docker-run.log"
        try:
            run_step("start", argv, cwd=self.workdir or Path.cwd(), env=cli_env, log=log, timeout=60)
            self.started = True
            self.base_url = f"http://127.0.0.1:{host_port}"
            wait_healthy(
                self.base_url + self.plan.health_path,
                self.health_timeout,
                self.alive,
                lambda: "container exited",
            )
        except StepFailed as e:
            self._collect_logs()
            e.log_tail = self.log_tail()
            raise
        finally:
            self.timings["start"] = time.monotonic() - t0
        return self.base_url

    def alive(self) -> bool:
        if not self.started:
            return False
        r = subprocess.run(
            ["docker", "inspect", "-f", "{{.State.Running}}", self.container], capture_output=True, text=True
        )
        return r.returncode == 0 and r.stdout.strip() == "true"

    def _collect_logs(self) -> None:
        out, err = self.logs_dir / "app.stdout.log", self.logs_dir / "app.stderr.log"
        with out.open("wb") as o, err.open("wb") as e:
            subprocess.run(logs_argv(self.container), stdout=o, stderr=e)
        self.logs["stdout"], self.logs["stderr"] = out, err

    def stop(self) -> None:
        if self.started:
            self._collect_logs()
            subprocess.run(rm_argv(self.container), capture_output=True)
            self.started = False

    def cleanup(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        if "image" in self.facts:
            subprocess.run(rmi_argv(self.tag), capture_output=True)


__all__ = ["DockerBackend", "build_argv", "check_engine", "container_seam_endpoint", "image_tag", "run_argv"]
