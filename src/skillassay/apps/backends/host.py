"""Run the app on this machine (the host) as its own process group: a copy of the modified dir, cached
dependencies, the machine's node/python.

Every step is sealed (docs/sealing.md), one sandbox per phase: the install sees the app read-only and writes
only the cache entry it fills, reaching the registries through the egress proxy; the build writes the app's
copy and reads its dependencies, with the registries too; the app at run time writes its copy, reads its
dependencies, and reaches only its own run's Seam endpoint; the harness reaches it on its PORT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from skillassay import reaper, stacks
from skillassay.apps import deps
from skillassay.apps.backends.backend import Backend, base_env, copy_app, wait_healthy
from skillassay.apps.steps import StepFailed, kill_group, run_step
from skillassay.isolation import Endpoint, IsolationError, Mount, Policy, Sandbox, Seal
from skillassay.isolation.record import Sealing
from skillassay.isolation.runtimes import runtimes
from skillassay.phases import phase
from skillassay.stacks import Stack
from skillassay.untrusted import Refused, read_regular


class HostBackend(Backend):
    name = "host"

    def __init__(
        self,
        *,
        health_timeout: float = 60.0,
        work_root: Path | None = None,
        policy: Policy | None = None,
        sealing: Sealing | None = None,
        **kw,
    ):
        super().__init__(**kw)
        self.health_timeout = health_timeout
        self.work_root = work_root
        self.policy = policy or Policy()
        self.sealing = sealing  # each phase's record, when the run keeps them
        self._boxes: list[Sandbox] = []
        self._run_box: Sandbox | None = None
        self.workdir: Path | None = None
        self.app_dir: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.venv: Path | None = None
        self.port: int | None = None
        self._out: IO[bytes] | None = None
        self._err: IO[bytes] | None = None

    @property
    def _stack(self) -> Stack:
        """The stack family running the app (``stacks.family``): its dependency folders and install cache."""
        return stacks.family(self.plan.runtime)

    @property
    def _folder(self) -> str | None:
        """Where a folder installer puts the app's dependencies in its copy ("node_modules"; None: a venv)."""
        return None if self._stack.installer == "venv" else self._stack.dependency_folder

    def _folder_argv(self) -> list[str] | None:
        """A folder install's command (None: nothing to install): the app's own when the plan folds its
        family's install commands (``InstallSpec.folds``: npm's), else what the stack declares for the app's
        manifest (``Stack.dependencies``)."""
        assert self.app_dir is not None, "prepare() first"
        spec = self.plan.install
        if self._stack.family == spec.folds:
            return spec.npm_argv or None
        app = self.app_dir

        def read(rel: str) -> bytes | None:
            try:
                return read_regular(rel, root=app)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except Refused as exc:
                raise StepFailed("install", f"{rel}: {exc.strerror} (not read)") from None

        try:
            found = self._stack.dependencies(read)
        except ValueError as exc:
            raise StepFailed("install", f"the app's manifest cannot be used: {exc}") from None
        return found.install if found is not None and found.install else None

    # ------------------------------------------------------------------ env
    def _tool_env(self) -> dict[str, str]:
        env = base_env()
        env.update(self.plan.env)
        path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p]
        front = self._own_bins()
        if self.venv is not None:
            env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = os.pathsep.join(front + [p for p in path if p not in front])
        env.pop("PYTHONHOME", None)
        return env

    def _own_bins(self) -> list[str]:
        """The app's own environment's program folders (its venv, its node_modules/.bin): first on its PATH,
        sealed or not, wherever the cache holding them lies."""
        front: list[str] = []
        if self.venv is not None:
            front.append(str(self.venv / "bin"))
        if self.app_dir is not None:
            front += [str(p) for p in self._stack.dependency_bins(self.app_dir)]
        return front

    # ------------------------------------------------------------------ sealing
    def _deps(self) -> list[Path]:
        """The app's dependencies, read-only to the build and the app: its cached venv or dependency folder
        (node_modules)."""
        out = []
        if self.venv is not None:
            out.append(self.venv)
        if self.app_dir is not None and self._folder and (self.app_dir / self._folder).is_symlink():
            out.append((self.app_dir / self._folder).resolve())
        return out

    def _box(
        self,
        phase: str,
        writable: list[Path],
        readable: Sequence[Path | Mount] = (),
        endpoints: Sequence[Endpoint] = (),
        registries: Sequence[str] = (),
    ) -> Sandbox:
        assert self.workdir is not None, "prepare() first"
        mounts, path = runtimes(venv=True)
        shown = [p if isinstance(p, Mount) else Mount(src=p) for p in readable]
        seal = Seal(
            phase=phase,
            writable=writable,
            readable=[*shown, *mounts, *self.policy.mounts],
            first=self._own_bins(),
            path=path,
            endpoints=list(endpoints),
            registries=list(registries),
            audit=False,
        )
        box = self.policy.open(seal, self.workdir / f"seal-{phase}-{len(self._boxes)}")
        box.start()
        self._boxes.append(box)
        return box

    def _install_box(self, entry: Path) -> Sandbox:
        entry.mkdir(parents=True, exist_ok=True)  # `python -m venv` fills an empty folder as well
        assert self.app_dir is not None, "prepare() first"
        return self._box("install", [entry], [self.app_dir], registries=self.policy.registries)

    def _close_boxes(self) -> None:
        for box in self._boxes:
            box.close()
            if self.sealing is not None:
                self.sealing.add(box)
        self._boxes = []

    # ------------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        t0 = time.monotonic()
        self.workdir = Path(
            tempfile.mkdtemp(prefix=f"skillassay-sandbox-{self.fixture}-", dir=self.work_root)
        )
        self.app_dir = self.workdir / "app"
        copy_app(self.source_dir, self.app_dir)
        self.timings["copy"] = time.monotonic() - t0

        t0 = time.monotonic()
        phase("install")
        log = self.logs_dir / "install.log"
        self.logs["install"] = log
        spec = self.plan.install
        folder_argv = self._folder_argv() if self._folder else None
        if self._folder:
            if folder_argv:
                self.facts["install_cache_hit"] = deps.ensure_linked(
                    self._stack,
                    self.app_dir,
                    folder_argv,
                    self._tool_env(),
                    log,
                    self.install_timeout,
                    seal=self._install_box,
                )
                if self._stack.refuses_linked_dependencies:
                    self.facts[f"{self._folder}_copied"] = deps.copy_linked_folder(self.app_dir, self._folder)
        else:
            # always a venv, so `python`/`pip` in the start and build commands are this app's own
            runs_pip = any("pip" in " ".join(argv) for argv in [*self.plan.build, self.plan.start])
            self.venv, hit = deps.ensure_venv(
                self.app_dir,
                spec,
                self._tool_env(),
                log,
                self.install_timeout,
                with_pip=runs_pip,
                seal=self._install_box,
            )
            self.facts["install_cache_hit"] = hit
        self.timings["install"] = time.monotonic() - t0
        if self.facts.get("install_cache_hit"):
            with log.open("a") as f:
                f.write("dependencies taken from the cache: nothing installed\n")

        t0 = time.monotonic()
        if self.plan.build:
            phase("build")
            log = self.logs_dir / "build.log"
            self.logs["build"] = log
            key = None
            if not os.environ.get("SKILLASSAY_NO_BUILD_CACHE"):
                deps_key = (
                    deps.install_key(self._stack, self.app_dir, folder_argv)
                    if folder_argv
                    else str(self.venv)
                )
                key = deps.build_key(self.app_dir, self.plan.build, deps_key)
            if key is None:
                self._build(log)
            elif deps.build_once(self.app_dir, key, lambda: self._build(log)):
                self.facts["build_cache_hit"] = True
                with log.open("a") as f:
                    f.write(f"build outputs restored from the cache ({key})\n")
            else:
                self.facts["build_cache_hit"] = False
        self.timings["build"] = time.monotonic() - t0

    def _build(self, log: Path) -> None:
        """The plan's build commands, in their sandbox, on the app's copy."""
        assert self.app_dir is not None, "prepare() first"
        readable: list[Path | Mount] = list(self._deps())
        # (node_modules, the cache entry) while mounted in place
        shown_at: tuple[Path, Path] | None = None
        folder = self._folder
        if folder and deps.needs_real_folder(self.app_dir, folder):
            # Turbopack refuses a node_modules symlink out of the project: sealed, the cached folder
            # is mounted read-only at <app>/node_modules (a real folder to the build, unwritable);
            # unsealed, node_modules becomes hard links to the cached files
            modules = self.app_dir / folder
            if self.policy.isolation == "none" or not modules.is_symlink():
                self.facts[f"{folder}_linked"] = deps.materialise_node_modules(self.app_dir, folder)
            else:
                entry = modules.resolve()
                modules.unlink()
                modules.mkdir()
                shown_at = (modules, entry)
                readable = [p for p in readable if p != entry] + [Mount(src=entry, dest=modules)]
                self.facts[f"{folder}_mounted"] = True
        env = self._tool_env()
        try:
            box = self._box("build", [self.app_dir], readable, registries=self.policy.registries)
            for argv in self.plan.build:
                run_step(
                    "build",
                    argv,
                    cwd=self.app_dir,
                    env=env,
                    log=log,
                    timeout=self.build_timeout,
                    sandbox=box,
                )
        finally:
            if shown_at is not None:  # back to the symlink the app's own box mounts read-only
                modules, entry = shown_at
                shutil.rmtree(modules, ignore_errors=True)
                modules.symlink_to(entry, target_is_directory=True)

    def _start_argv(self) -> list[str]:
        # absolute paths under the Dockerfile's WORKDIR (CMD ["node", "/app/dist/index.js"]) point into the
        # copy
        workdir = self.plan.workdir
        argv = list(self.plan.start)
        if workdir and workdir != "/":
            prefix = workdir.rstrip("/") + "/"
            argv = [str(self.app_dir) + "/" + a[len(prefix) :] if a.startswith(prefix) else a for a in argv]
        return argv

    def start(self, env: dict[str, str]) -> str:
        assert self.app_dir is not None, "prepare() first"
        t0 = time.monotonic()
        # the app reaches its own run's Seam endpoint and nothing else (a live Seam through the egress proxy)
        # (the emulator, plain HTTP wherever it listens, is bridged in; live Seam over HTTPS goes through the
        # egress proxy, allowed to that host only)
        endpoints, hosts = [], []
        if env.get("SEAM_ENDPOINT"):
            seam = Endpoint.from_url("seam", env["SEAM_ENDPOINT"])
            if env["SEAM_ENDPOINT"].startswith("https://"):
                hosts.append(seam.host if seam.port == 443 else seam.netloc)
            else:
                endpoints.append(seam)
        self._run_box = self._box("app", [self.app_dir], self._deps(), endpoints=endpoints, registries=hosts)
        self.port = self._run_box.expose()  # the harness reaches the app at 127.0.0.1:PORT on the host
        full = self._tool_env()
        full.update(env)
        if env.get("SEAM_ENDPOINT"):
            # 127.0.0.1:<same port> inside
            full["SEAM_ENDPOINT"] = self._run_box.url_inside(env["SEAM_ENDPOINT"])
        full["PORT"] = str(self.port)
        self.logs["stdout"] = self.logs_dir / "app.stdout.log"
        self.logs["stderr"] = self.logs_dir / "app.stderr.log"
        self._out = self.logs["stdout"].open("ab")
        self._err = self.logs["stderr"].open("ab")
        argv = self._start_argv()
        try:
            self.proc = self._run_box.popen(
                argv, cwd=self.app_dir, env=full, stdout=self._out, stderr=self._err
            )
        except OSError as e:
            raise StepFailed("start", f"could not run {argv[0]!r}: {e}") from e
        # until stop() reaps it: a Ctrl-C never reaches the app's own group, so the interrupt handler kills it
        reaper.register(self.proc.pid)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.facts["start_argv"] = argv
        try:
            wait_healthy(
                self.base_url + self.plan.health_path, self.health_timeout, self.alive, self._exit_text
            )
        except StepFailed as e:
            time.sleep(0.1)  # let the last lines reach the log
            e.log_tail = self.log_tail()
            if not self.alive() and (problem := self._run_box.setup_error(self.proc)):
                raise IsolationError(f"start: {problem}: {e.log_tail[-600:].strip()}") from e
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
        self._close_boxes()
        reaper.check()  # an interrupted job killed the app mid-check: abandon the run rather than record it

    def cleanup(self) -> None:
        self._close_boxes()
        if self.workdir is not None and not os.environ.get("SKILLASSAY_KEEP_WORKDIR"):
            shutil.rmtree(self.workdir, ignore_errors=True)
