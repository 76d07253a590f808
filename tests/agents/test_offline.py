"""The CLIs, set up by the agent modules, connect to nothing but their model endpoint (the job's model
proxy).
"""

import re
import shutil

import pytest
from parts import needs

from skillassay.agents.claude_code import ClaudeCodeAgent
from skillassay.agents.codex import CodexAgent
from skillassay.testing import ModelServer, parse_scripts


@pytest.mark.slow
@needs(shutil.which("strace") is not None, "strace (apt-get install strace)")
@pytest.mark.parametrize("agent_class", [ClaudeCodeAgent, CodexAgent], ids=["claude-code", "codex"])
def test_only_the_model_proxy_is_contacted(agent_class, tmp_path, make_ctx, workspace, proxied):
    real = agent_class().binary
    assert real is not None, f"the pinned {agent_class.name} CLI is not installed (npm ci --prefix node)"
    log = tmp_path / "strace.log"
    wrapper = tmp_path / "traced-cli"
    wrapper.write_text(f'#!/bin/sh\nexec strace -f -qq -e trace=connect -o "{log}" "{real}" "$@"\n')
    wrapper.chmod(0o755)
    script = parse_scripts({"id": "s", "turns": [[{"text": "hi"}]]})[0]
    with ModelServer([script]) as server:
        ctx = make_ctx(env={"SKILLASSAY_MAX_RETRIES": "0"}, model_endpoint=proxied(server, "s"))
        result = agent_class(binary=str(wrapper)).run(ctx)
        port = proxied.last.port
    assert result.status == "completed", result.error
    trace = log.read_text()
    inet = re.findall(r"connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\).*?\"([^\"]+)\"", trace)
    assert inet, "no connection traced at all"
    assert {(int(p), addr) for p, addr in inet} == {(port, "127.0.0.1")}
