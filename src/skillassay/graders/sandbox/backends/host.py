"""Run the app on this machine (the host) as its own process group: a copy of the modified dir, cached dependencies,
the machine's node/python."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from skillassay import reaper
from skillassay.graders.sandbox import deps
from skillassay.graders.sandbox.backends.base import Backend, base_env, copy_app, wait_healthy
from skillassay.graders.sandbox.steps import StepFailed, free_port, kill_group, run_step


class HostBackend(Backend):
    name = "host"

    def __init__(self, *, health_timeout: float = 60.0, work_root: Path | None = None, **kw):
        super().__init__(**kw)
        self.health_timeout = health_timeout
        self.work_root = work_root
        self.workdir: Path | None = None
        self.app_dir: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.venv: Path | None = None
        self.port: int | None = None
        self._out = None
        self._err = None

    # ------------------------------------------------------------------ env
    def _tool_env(self) -> dict[str, str]:
        env = base_env()
        env.update(self.plan.env)
        path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p]
        front: list[str] = []
        if self.venv is not None:
            front.append(str(self.venv / "bin"))
            env["VIRTUAL_ENV"] = str(self.venv)
        if self.app_dir is not None and self.plan.runtime == "node":
            front.append(str(self.app_dir / "node_modules" / ".bin"))
        env["PATH"] = os.pathsep.join(front + [p for p in path if p not in front])
        env.pop("PYTHONHOME", None)
        return env

    # ------------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        t0 = time.monotonic()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"skillassay-sandbox-{self.fixture}-", dir=self.work_root))
        self.app_dir = self.workdir / "app"
        copy_app(self.source_dir, self.app_dir)
        self.timings["copy"] = time.monotonic() - t0

        t0 = time.monotonic()
        log = self.logs_dir / "install.log"
        self.logs["install"] = log
        spec = self.plan.install
        if self.plan.runtime == "node":
            if spec.npm_argv:
                self.facts["install_cache_hit"] = deps.ensure_node_modules(
                    self.app_dir, spec.npm_argv, self._tool_env(), log, self.install_timeout
                )
        else:
            # always a venv, so `python`/`pip` in the start and build commands are this app's own
            runs_pip = any("pip" in " ".join(argv) for argv in self.plan.build + [self.plan.start])
            self.venv, hit = deps.ensure_venv(self.app_dir, spec, self._tool_env(), log, self.install_timeout,
                                              with_pip=runs_pip)
            self.facts["install_cache_hit"] = hit
        self.timings["install"] = time.monotonic() - t0
        if self.facts.get("install_cache_hit"):
            with log.open("a") as f:
                f.write("dependencies taken from the cache: nothing installed\n")

        t0 = time.monotonic()
        if self.plan.build:
            log = self.logs_dir / "build.log"
            self.logs["build"] = log
            key = None
            if not os.environ.get("SKILLASSAY_NO_BUILD_CACHE"):
                deps_key = deps.node_key(self.app_dir, spec.npm_argv) if spec.npm_argv else str(self.venv)
                key = deps.build_key(self.app_dir, self.plan.build, deps_key)
            if key is not None and deps.restore_build(self.app_dir, key):
                self.facts["build_cache_hit"] = True
                with log.open("a") as f:
                    f.write(f"build outputs restored from the cache ({key})\n")
            else:
                before = deps.tree_snapshot(self.app_dir)
                env = self._tool_env()
                for argv in self.plan.build:
                    run_step("build", argv, cwd=self.app_dir, env=env, log=log, timeout=self.build_timeout)
                if key is not None:
                    deps.save_build(self.app_dir, key, before)
                    self.facts["build_cache_hit"] = False
        self.timings["build"] = time.monotonic() - t0

    def _start_argv(self) -> list[str]:
        # absolute paths under the Dockerfile's WORKDIR (CMD ["node", "/app/dist/index.js"]) point into the copy
        workdir = self.plan.workdir
        argv = list(self.plan.start)
        if workdir and workdir != "/":
            prefix = workdir.rstrip("/") + "/"
            argv = [str(self.app_dir) + "/" + a[len(prefix):] if a.startswith(prefix) else a for a in argv]
        return argv

    def start(self, env: dict[str, str]) -> str:
        assert self.app_dir is not None, "prepare() first"
        t0 = time.monotonic()
        self.port = free_port()
        full = self._tool_env()
        full.update(env)
        full["PORT"] = str(self.port)
        self.logs["stdout"] = self.logs_dir / "app.stdout.log"
        self.logs["stderr"] = self.logs_dir / "app.stderr.log"
        self._out = self.logs["stdout"].open("ab")
        self._err = self.logs["stderr"].open("ab")
        argv = self._start_argv()
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.app_dir, env=full, stdout=self._out, stderr=self._err,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        except OSError as e:
            raise StepFailed("start", f"could not run {argv[0]!r}: {e}") from e
        # until stop() reaps it: a Ctrl-C never reaches the app's own group, so the interrupt handler kills it
        reaper.register(self.proc.pid)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.facts["start_argv"] = argv
        try:
            wait_healthy(self.base_url + self.plan.health_path, self.health_timeout, self.alive, self._exit_text)
        except StepFailed as e:
            time.sleep(0.1)  # let the last lines reach the log
            e.log_tail = self.log_tail()
            raise
        finally:
            self.timings["start"] = time.monotonic() - t0
        return self.base_url

    def _exit_text(self) -> str:
        rc = self.proc.poll() if self.proc else None
        return f"exit code {rc}" if rc is not None else "still running"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)  # and unregisters it
            self.facts["exit_code"] = self.proc.returncode
        for f in (self._out, self._err):
            if f is not None and not f.closed:
                f.close()
        reaper.check()  # an interrupted job killed the app mid-check: abandon the run rather than record it

    def cleanup(self) -> None:
        if self.workdir is not None and not os.environ.get("SKILLASSAY_KEEP_WORKDIR"):
            shutil.rmtree(self.workdir, ignore_errors=True)
