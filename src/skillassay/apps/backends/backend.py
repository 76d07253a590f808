"""What every backend does: prepare (copy, install, build), start with an environment, answer health, stop.

A backend never touches the input directory, and ``stop()`` is safe to call on every path out, more than once.
"""

from __future__ import annotations

import os
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Self

import httpx

from skillassay import tls
from skillassay.apps.runplan import RunPlan
from skillassay.apps.steps import StepFailed
from skillassay.secrets import without_secrets
from skillassay.workspace.changes import copy_ignore

# Only these variables of the harness's environment reach the app (and its install/build): nothing secret
# leaks.
PASS_ENV_PREFIXES = ("npm_config_", "NPM_CONFIG_", "PIP_", "UV_")
PASS_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SHELL",
    "TERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)


def base_env() -> dict[str, str]:
    # never a secret, even under a name let through (a proxy or an index URL with a password, an npm auth
    # token)
    env = without_secrets(
        {k: v for k, v in os.environ.items() if k in PASS_ENV or k.startswith(PASS_ENV_PREFIXES)}
    )
    # the app must reach the emulator on loopback directly, never through a proxy
    for name in ("NO_PROXY", "no_proxy"):
        parts = [p for p in env.get(name, "").split(",") if p]
        env[name] = ",".join(dict.fromkeys([*parts, "127.0.0.1", "localhost"]))
    return env


def copy_app(src: Path, dest: Path) -> None:
    """The app as changed, without what the change's skip-list leaves out (installed or generated state from
    the agent's machine, and build output: the backend builds it again)."""
    shutil.copytree(src, dest, symlinks=True, ignore=copy_ignore(src))


class Backend(ABC):
    name: str = "base"

    def __init__(
        self,
        *,
        plan: RunPlan,
        source_dir: Path,
        fixture: str,
        run_id: str,
        logs_dir: Path,
        fixture_dir: Path,
        dockerfile: Path | None = None,
        install_timeout: float = 600.0,
        build_timeout: float = 600.0,
    ):
        self.plan = plan
        self.source_dir = source_dir
        self.fixture = fixture
        self.run_id = run_id
        self.logs_dir = logs_dir
        logs_dir.mkdir(parents=True, exist_ok=True)
        self.fixture_dir = fixture_dir
        self.dockerfile = dockerfile or fixture_dir / "Dockerfile"
        self.install_timeout = install_timeout
        self.build_timeout = build_timeout
        self.timings: dict[str, float] = {}
        self.facts: dict[str, object] = {}  # cache hits, image tags, ...: recorded in the result
        self.logs: dict[str, Path] = {}
        self.base_url: str | None = None

    # ------------------------------------------------------------------ lifecycle
    @abstractmethod
    def prepare(self) -> None:
        """Copy, install and build. Fills ``timings['install']`` and ``timings['build']``. Raises
        StepFailed.
        """

    @abstractmethod
    def start(self, env: dict[str, str]) -> str:
        """Start the app with ``env`` (Seam variables included; the backend adds PORT) and wait for health.

        Returns the base URL the harness talks to. Raises StepFailed (with the log tail) when the app does not
        answer.
        """

    @abstractmethod
    def alive(self) -> bool: ...

    @abstractmethod
    def stop(self) -> None: ...

    def cleanup(self) -> None:  # noqa: B027 - a no-op unless the backend has a work copy
        """Remove the work copy. Called after stop()."""

    def seam_endpoint(self, emulator_url: str) -> str:
        """The Seam URL as the app sees it (a container reaches the host differently)."""
        return emulator_url

    def log_tail(self, max_bytes: int = 3000) -> str:
        from skillassay.apps.steps import tail

        chunks = []
        for name, path in self.logs.items():
            t = tail(path, max_bytes)
            if t.strip():
                chunks.append(f"--- {name} ({path.name})\n{t}")
        return "\n".join(chunks)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            self.cleanup()


def wait_healthy(
    url: str, timeout: float, alive: Callable[[], bool], describe_exit: Callable[[], str]
) -> float:
    """Poll ``url`` until it answers below 500. Returns seconds waited; raises StepFailed("start", ...)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    last = "no answer yet"
    delay = 0.02
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls.context(False)) as client:
        while True:
            if not alive():
                raise StepFailed("start", f"the app exited before answering {url}: {describe_exit()}")
            try:
                r = client.get(url)
                if r.status_code < 500:
                    return time.monotonic() - t0
                last = f"HTTP {r.status_code}: {r.text[:300]}"
            except httpx.HTTPError as e:
                last = f"{type(e).__name__}: {e}"
            if time.monotonic() >= deadline:
                raise StepFailed(
                    "start",
                    f"no healthy answer from {url} within {timeout:.0f} s (last: {last}); "
                    "the app is given its port in PORT: does it listen on it?",
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)
