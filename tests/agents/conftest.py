import subprocess
from pathlib import Path

import pytest

from skillassay.agents import AgentContext

SKILL_MD = """---
name: demo-skill
description: Writes greeting files. Use when asked to create a greeting file.
---
# Demo skill
Always put SKILL-MARKER-7f3a in greeting files.
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A scratch git repository holding a tiny app."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.txt").write_text("hello\n")
    (ws / "README.md").write_text("# app\n")
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "init")
    return ws


@pytest.fixture
def skill_dir(tmp_path) -> Path:
    d = tmp_path / "skill-src"
    d.mkdir()
    (d / "SKILL.md").write_text(SKILL_MD)
    return d


@pytest.fixture
def make_ctx(tmp_path, workspace):
    def make(**kwargs) -> AgentContext:
        values = {
            "workspace": workspace,
            "prompt": "Create a greeting file.",
            "output_dir": tmp_path / "out",
            "home": tmp_path / "home",
            "timeout": 60,
        }
        values.update(kwargs)
        return AgentContext(**values)

    return make


@pytest.fixture
def processes_with_home():
    """Live processes whose environment holds a run's private HOME: what a killed run must not leave
    behind.
    """

    def find(home: Path) -> list[int]:
        marker = f"HOME={home}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                live = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
                if live and marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    return find


@pytest.fixture
def proxied():
    """The agent's path to a scripted model, as a job sets it up: ``proxied(server, script_id)`` starts a
    model proxy whose upstream is that script and returns a run's ``ModelEndpoint``; ``proxied.last`` is
    the proxy (its ``release(token)`` reports the calls). ``real_keys`` are the operator's keys the proxy
    holds."""
    from skillassay.services.model_proxy.proxy import ModelProxy, upstreams_from_env

    started = []

    def make(server, script_id, real_keys=None):
        proxy = ModelProxy(upstreams_from_env(dict(real_keys or {}), server.base_url(script_id))).start()
        started.append(proxy)
        make.last = proxy
        return proxy.grant(f"test-{script_id}")

    yield make
    for proxy in started:
        proxy.stop()
