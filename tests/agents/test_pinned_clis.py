"""The agents run the CLIs the project pins (node/package.json), never whatever else is on PATH."""

from __future__ import annotations

import pytest
from parts import pinned_node_version

from skillassay.agents import get_agent

PINNED = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_the_cli_found_is_the_pinned_one(agent, tmp_path, monkeypatch):
    # an impostor first on PATH must not be picked up
    fake = tmp_path / ("claude" if agent == "claude-code" else "codex")
    fake.write_text("#!/bin/sh\necho 9.9.9\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    found = get_agent(agent)
    assert found.version() == pinned_node_version(PINNED[agent])
    assert str(tmp_path) not in str(found.binary)
