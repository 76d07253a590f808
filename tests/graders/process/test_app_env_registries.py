"""The app's environment for gates and hidden tests, when the modified app adds a dependency: a registry this
machine cannot reach is the harness's (never "the change broke it"), a package nobody can fetch is the
agent's."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from process_helpers import make_definition, write_tree

from skillassay.definitions.agent_eval import Criterion
from skillassay.graders.base import ProcessContext
from skillassay.isolation import Policy, reach
from skillassay.isolation.reach import RegistryUnreachable

PINNED = "pytest==9.2.0\n"  # the order-service fixture's: its environment is shared, installed once
APP = {"calc.py": "def add(a, b):\n    return a + b\n", "requirements.txt": PINNED}
# a dependency only the change names, that no registry has
ADDED = {**APP, "requirements.txt": PINNED + "skillassay-no-such-package-anywhere==0.0.1\n"}


def _ctx(tmp_path: Path) -> ProcessContext:
    d = make_definition(tmp_path, criteria=[Criterion(id="c", description="", weight=1, grader="diff")])
    return ProcessContext(
        definition=d,
        pristine_dir=write_tree(tmp_path / "p", APP),
        modified_dir=write_tree(tmp_path / "m", ADDED),
        transcript=None,
        work_dir=tmp_path / "w",
        policy=Policy(registries=["pypi.org", "files.pythonhosted.org"]),
    )


@pytest.fixture(autouse=True)
def _fresh_answers(monkeypatch):
    monkeypatch.setenv("PIP_RETRIES", "0")
    reach.forget()
    yield
    reach.forget()


def test_a_package_nobody_can_fetch_is_the_agents(tmp_path: Path) -> None:
    env = _ctx(tmp_path).app_env("modified")
    assert env.error is not None and "the change broke it" in env.error


def test_a_registry_the_machine_cannot_reach_is_the_harnesss(tmp_path: Path, monkeypatch) -> None:
    ctx = _ctx(tmp_path)
    assert ctx.app_env("pristine").error is None  # installed (or cached) while the registry answers
    with socket.socket() as s:  # then the harness's proxy goes down: a closed loopback port
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{s.getsockname()[1]}")
    monkeypatch.delenv("https_proxy", raising=False)
    with pytest.raises(RegistryUnreachable, match=r"cannot reach the registry pypi.org:443"):
        ctx.app_env("modified")  # the pristine app's is cached: without the probe, the agent's fault
