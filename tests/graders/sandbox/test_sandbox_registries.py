"""`skillassay sandbox` installs as `run` does: sealed, reaching the eval's registries, so a cold cache
installs. An install that fails is blamed exactly: a declared registry the harness cannot reach is the
machine's (a harness error naming the host, said at once); a package or host that only the app names is the
app's (scored)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from conftest import make_fixture, tiny_config
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.isolation import reach
from skillassay.seam.behaviour import validate

DOCKERFILE = """\
FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
EXPOSE 8000
CMD ["python", "server.py"]
"""
# small, pure Python, long on PyPI: what the fixture app "needs" (the stdlib server never imports it)
REAL = "six==1.17.0\n"


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """An empty skillassay cache, and no registry answer kept from before."""
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    reach.forget()
    yield
    reach.forget()


@pytest.fixture
def dead_proxy(monkeypatch):
    """The harness sits behind a proxy that is down (a closed loopback port): no registry can be reached."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("https_proxy", raising=False)


def _validate(tmp_path: Path, requirements: str, emulator) -> tuple[dict, Path]:
    """The sandbox layer on a small app needing ``requirements``, as `skillassay sandbox` runs it (no policy
    given: the layer's own, the eval's registries)."""
    definition = make_fixture(tmp_path / "suite", tiny_config("good"), dockerfile=DOCKERFILE)
    (definition.app_dir / "requirements.txt").write_text(requirements)
    logs = tmp_path / "logs"
    result = validate(definition.app_dir, definition, "reg", emulator=emulator, logs_dir=logs)
    return result.model_dump(mode="json"), logs


def test_the_layer_installs_from_the_registries_on_a_cold_cache(tmp_path, cold, emulator) -> None:
    result, _ = _validate(tmp_path, REAL, emulator)
    assert result["total"] == 100, result["checks"]["build"]
    assert result["run"]["install_cache_hit"] is False  # installed now, through the egress proxy


def test_an_unreachable_registry_is_the_machines_and_said_at_once(
    tmp_path, cold, dead_proxy, evals_dir
) -> None:
    fixture = evals_dir / "fixtures" / "flask-py"
    t0 = time.monotonic()
    result = CliRunner().invoke(
        app,
        [
            "sandbox",
            "--modified-dir",
            str(fixture / "test_golden"),
            "--fixture-dir",
            str(fixture),
            "--run-id",
            "reg",
            "--logs",
            str(tmp_path / "logs"),
        ],
    )
    assert result.exit_code == 2, result.output  # no score: the eval cannot be measured on this machine
    assert "error: install: cannot reach the registry pypi.org:443" in result.output
    assert "the eval cannot be measured here" in result.output
    assert time.monotonic() - t0 < 30  # probed before the install, not after pip's retries
    assert "cannot reach the registry pypi.org:443" in (tmp_path / "logs" / "install.log").read_text()


@pytest.mark.parametrize(
    "requirement",
    [
        "skillassay-no-such-package-anywhere==0.0.1\n",  # a package no registry has
        "tiny @ https://example.com/tiny-1.0-py3-none-any.whl\n",  # a host not on the eval's list
    ],
    ids=["package", "host"],
)
def test_what_only_the_app_names_is_the_apps_failure(
    tmp_path, cold, emulator, requirement, monkeypatch
) -> None:
    monkeypatch.setenv("PIP_RETRIES", "0")  # a refused host is refused again: no need to hear it five times
    result, logs = _validate(tmp_path, requirement, emulator)
    assert result["error"] is None  # scored: no abstaining through a dependency nobody can fetch
    assert result["total"] == 0
    assert result["checks"]["build"]["reason"].startswith("install failed")
    assert "answer the harness: what failed is the app's" in (logs / "install.log").read_text()
