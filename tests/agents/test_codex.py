"""Codex for real: the installed CLI, offline, against the scripted model server."""

import json
import subprocess
import time

import pytest
from parts import needs

from skillassay.agents import get_agent
from skillassay.agents.codex import CodexAgent
from skillassay.services.model_proxy import ModelEndpoint
from skillassay.testing import ModelServer, parse_scripts

SECRET = "sk-proj-test-secret-0123456789abcdefgh"

needs_codex = needs(CodexAgent().binary is not None, "the pinned codex CLI (npm ci --prefix node)")

PATCH = """*** Begin Patch
*** Add File: src/greeting.txt
+SKILL-MARKER-7f3a
*** Update File: src/app.txt
@@
-hello
+hello world
*** End Patch
"""


@pytest.fixture
def server():
    with ModelServer() as srv:
        yield srv


def run_codex(server, proxied, make_ctx, turns, script_id="c", **ctx_args):
    """Codex as a job runs it: through a model proxy holding the operator's key (SECRET) to the script."""
    (script,) = parse_scripts({"id": script_id, "turns": turns, "final_text": "Added the greeting."})
    server.add_script(script)
    endpoint = proxied(server, script_id, real_keys={"OPENAI_API_KEY": SECRET})
    ctx = make_ctx(
        env={"SKILLASSAY_MAX_RETRIES": "1", **ctx_args.pop("env", {})}, model_endpoint=endpoint, **ctx_args
    )
    return ctx, get_agent("codex").run(ctx)


def test_config_points_at_the_model_endpoint(make_ctx, tmp_path):
    endpoint = ModelEndpoint(base_url="http://127.0.0.1:9", token="sk-skillassay-run-config-test")
    ctx = make_ctx(env={"SKILLASSAY_MAX_RETRIES": "1", "OPENAI_API_KEY": SECRET}, model_endpoint=endpoint)
    import tomllib

    config = tomllib.loads(CodexAgent().config_toml(ctx))
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["wire_api"] == "responses"
    assert provider["request_max_retries"] == 1 and config["model"] == "gpt-5.5"
    assert config["features"]["plugins"] is False and config["analytics"]["enabled"] is False
    # the token where the provider reads its key; the operator's key nowhere
    env = CodexAgent().environment(ctx)
    assert env[provider["env_key"]] == endpoint.token and SECRET not in json.dumps(env)
    assert env["CODEX_HOME"] == str(ctx.home / ".codex") and "OPENAI_API_KEY" not in env


def test_missing_binary_is_a_harness_error(make_ctx):
    result = CodexAgent(binary="/nonexistent/codex").run(make_ctx())
    assert result.status == "harness_error" and result.error_kind == "cli_not_found"


@pytest.mark.slow
@needs_codex
def test_patch_and_exec_end_to_end_with_a_native_skill(server, proxied, make_ctx, workspace, skill_dir):
    turns = [
        [{"text": "Reading the demo skill."}, {"exec": "cat ~/.codex/skills/demo-skill/SKILL.md"}],
        [{"text": "Creating the greeting."}, {"patch": PATCH}],
        [{"exec": "cat src/greeting.txt"}],
    ]
    ctx, result = run_codex(server, proxied, make_ctx, turns, skill_dir=skill_dir)
    assert result.status == "completed", result.error
    assert result.exit_code == 0 and result.cli_version

    assert (workspace / "src" / "greeting.txt").read_text() == "SKILL-MARKER-7f3a\n"
    assert (workspace / "src" / "app.txt").read_text() == "hello world\n"
    status = subprocess.run(
        ["git", "status", "--porcelain"], check=False, cwd=workspace, capture_output=True, text=True
    ).stdout
    assert sorted(status.splitlines()) == [" M src/app.txt", "?? src/greeting.txt"]

    t = result.transcript
    assert [c.name for c in t.tool_calls] == ["exec_command", "apply_patch", "exec_command"]
    skill_read, patch, cat = t.tool_calls
    assert skill_read.exit_code == 0 and "SKILL-MARKER-7f3a" in skill_read.result
    assert patch.kind == "edit" and sorted(patch.paths) == ["src/app.txt", "src/greeting.txt"]
    assert (
        cat.command == "cat src/greeting.txt" and cat.result == "SKILL-MARKER-7f3a\n" and cat.exit_code == 0
    )
    assert t.final_message == "Added the greeting." and not t.is_error and t.exit_status == "completed"
    assert "demo-skill" in t.skills_available and t.skills_source == "session"
    assert t.skills_invoked == ["demo-skill"]
    assert t.usage.input_tokens == 400 and t.model == "gpt-5.5"

    requests = server.conversation_requests("c")
    assert len(requests) == 4
    assert "demo-skill: Writes greeting files" in requests[0].text()
    # the operator's key went upstream from the proxy; Codex only ever had the run's token
    assert {r.headers.get("authorization") for r in requests} == {f"Bearer {SECRET}"}
    report = proxied.last.release(ctx.model_endpoint.token)
    assert report.usage.requests == 4 and report.usage.input_tokens == 400
    for stored in ctx.output_dir.iterdir():
        assert SECRET not in stored.read_text(errors="replace")
        assert ctx.model_endpoint.token not in stored.read_text(errors="replace")


@pytest.mark.slow
@needs_codex
def test_system_prompt_mode_sends_skill_md(server, proxied, make_ctx, skill_dir):
    _, result = run_codex(server, proxied, make_ctx, [], skill_dir=skill_dir, skill_mode="system-prompt")
    assert result.status == "completed", result.error
    (request,) = server.conversation_requests("c")
    assert "SKILL-MARKER-7f3a" in request.text()
    assert "demo-skill" not in result.transcript.skills_available


@pytest.mark.slow
@needs_codex
def test_hung_codex_is_killed_at_the_timeout(server, proxied, make_ctx, processes_with_home):
    started = time.monotonic()
    ctx, result = run_codex(server, proxied, make_ctx, [{"hang": 60}], timeout=4)
    assert result.status == "timed_out"
    assert time.monotonic() - started < 15
    assert processes_with_home(ctx.home) == []


@pytest.mark.slow
@needs_codex
@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        ({"error": 500}, "server_error"),
        ({"error": 429}, "rate_limited"),
        ({"error": 529}, "overloaded"),
        ({"stream_error": "server_is_overloaded"}, "overloaded"),
    ],
)
def test_turn_failed_on_a_provider_error_is_a_provider_error(server, proxied, make_ctx, turn, kind):
    sid = "e" + str(turn.get("error") or "stream")
    ctx, result = run_codex(
        server, proxied, make_ctx, [turn], script_id=sid, env={"SKILLASSAY_MAX_RETRIES": "0"}
    )
    assert result.status == "provider_error" and result.error_kind == kind, (result.error_kind, result.error)
    assert result.transcript.is_error and result.exit_code != 0
    assert proxied.last.release(ctx.model_endpoint.token).usage.provider_errors[0].kind == kind


@pytest.mark.slow
@needs_codex
def test_a_refused_key_is_a_harness_error(server, proxied, make_ctx):
    _, result = run_codex(
        server, proxied, make_ctx, [{"error": 401}], script_id="e401", env={"SKILLASSAY_MAX_RETRIES": "0"}
    )
    assert result.status == "harness_error" and result.error_kind == "auth_failed"
