"""Red team, with the real CLIs driven by the scripted model server through the model proxy: what the agent's
commands leave in the CLI's own files, which the harness reads after the run (unsealed, as whoever runs skillassay).
"""

from __future__ import annotations

import pytest
from parts import needs

from skillassay.agents import get_agent
from skillassay.agents.codex import CodexAgent
from skillassay.testing import ModelServer, parse_scripts

needs_codex = needs(CodexAgent().binary is not None, "the pinned codex CLI (npm ci --prefix node)")


@pytest.fixture
def server():
    with ModelServer() as srv:
        yield srv


@needs_codex
def test_codex_session_file_replaced_by_a_link_is_not_followed(server, proxied, make_ctx, tmp_path):
    """The agent replaces Codex's session file (in its own home) with a link to a host file only the harness can
    read: the harness copied the link's target into the run folder as ``codex.session.jsonl``."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("REDTEAM_HOST_SECRET_9183\n")
    swap = (f'f=$(find "$CODEX_HOME/sessions" -name "rollout-*.jsonl" | head -1); '
            f'mv "$f" "$f.old" && ln -s {secret} "$f" && echo swapped')
    (script,) = parse_scripts({"id": "swap", "turns": [[{"exec": swap}]], "final_text": "Done."})
    server.add_script(script)
    endpoint = proxied(server, "swap")
    ctx = make_ctx(env={"SKILLASSAY_MAX_RETRIES": "1"}, model_endpoint=endpoint)
    result = get_agent("codex").run(ctx)
    assert result.status == "completed", result.error
    [call] = result.transcript.tool_calls
    assert "swapped" in (call.result or "")
    stored = [p for p in ctx.output_dir.rglob("*") if p.is_file() and b"REDTEAM_HOST_SECRET_9183" in p.read_bytes()]
    assert stored == []
