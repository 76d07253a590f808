"""Claude Code for real: the installed CLI, offline, against the scripted model server."""

import json
import subprocess
import sys
import time

import pytest
from parts import needs

from skillassay.agents import get_agent
from skillassay.agents.claude_code import ClaudeCodeAgent
from skillassay.services.model_proxy import ModelEndpoint
from skillassay.testing import ModelServer, parse_scripts

SECRET = "sk-ant-" + "api03-test-secret-0123456789abcdef"  # built, so no key-shaped literal is committed

needs_claude = needs(ClaudeCodeAgent().binary is not None, "the pinned claude CLI (npm ci --prefix node)")


@pytest.fixture
def server():
    with ModelServer() as srv:
        yield srv


def run_claude(server, proxied, make_ctx, turns, script_id="s", **ctx_args):
    """Claude Code as a job runs it: through a model proxy holding the operator's key (SECRET) to the
    script.
    """
    (script,) = parse_scripts({"id": script_id, "turns": turns, "final_text": "Added the greeting."})
    server.add_script(script)
    endpoint = proxied(server, script_id, real_keys={"ANTHROPIC_API_KEY": SECRET})
    env = {"SKILLASSAY_MAX_RETRIES": "0", **ctx_args.pop("env", {})}
    ctx = make_ctx(env=env, model_endpoint=endpoint, **ctx_args)
    return ctx, get_agent("claude-code").run(ctx)


def test_missing_binary_is_a_harness_error(make_ctx):
    result = ClaudeCodeAgent(binary="/nonexistent/claude").run(make_ctx())
    assert (
        result.status == "harness_error"
        and result.error_kind == "cli_not_found"
        and "not found" in result.error
    )


def test_no_model_endpoint_is_a_harness_error(make_ctx, tmp_path):
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    result = ClaudeCodeAgent(binary=str(fake)).run(make_ctx())
    assert result.status == "harness_error" and result.error_kind == "no_model_endpoint"


@pytest.mark.slow
@needs_claude
def test_native_skill_write_and_edit(server, proxied, make_ctx, workspace, skill_dir):
    turns = [
        [
            {"text": "I'll use the demo skill."},
            {"tool_use": {"name": "Skill", "input": {"skill": "demo-skill"}}},
        ],
        [
            {
                "tool_use": {
                    "name": "Write",
                    "input": {"file_path": f"{workspace}/src/greeting.txt", "content": "SKILL-MARKER-7f3a\n"},
                }
            }
        ],
        [
            {"text": "Now the app."},
            {
                "tool_use": {
                    "name": "Edit",
                    "input": {
                        "file_path": f"{workspace}/src/app.txt",
                        "old_string": "hello",
                        "new_string": "hello world",
                    },
                }
            },
        ],
    ]
    ctx, result = run_claude(server, proxied, make_ctx, turns, skill_dir=skill_dir)
    assert result.status == "completed", result.error
    assert result.exit_code == 0 and result.cli_version

    # the files changed on disk; the skill was installed outside the workspace
    assert (workspace / "src" / "greeting.txt").read_text() == "SKILL-MARKER-7f3a\n"
    assert (workspace / "src" / "app.txt").read_text() == "hello world\n"
    status = subprocess.run(
        ["git", "status", "--porcelain"], check=False, cwd=workspace, capture_output=True, text=True
    ).stdout
    assert sorted(status.splitlines()) == [" M src/app.txt", "?? src/greeting.txt"]
    assert (ctx.home / ".claude" / "skills" / "demo-skill" / "SKILL.md").is_file()

    t = result.transcript
    assert [c.name for c in t.tool_calls] == ["Skill", "Write", "Edit"]
    assert [c.kind for c in t.tool_calls] == ["skill", "write", "edit"]
    assert [c.paths for c in t.tool_calls] == [[], ["src/greeting.txt"], ["src/app.txt"]]
    assert not any(c.is_error or c.denied for c in t.tool_calls)
    assert "demo-skill" in t.skills_available and t.skills_source == "cli"
    assert t.skills_invoked == ["demo-skill"]
    assert t.final_message == "Added the greeting." and t.exit_status == "success" and not t.is_error
    assert [m.text for m in t.messages if m.role == "assistant"] == [
        "I'll use the demo skill.",
        "Now the app.",
        "Added the greeting.",
    ]
    assert t.messages[0].role == "user" and t.messages[0].text == ctx.prompt
    assert t.usage.input_tokens > 0 and t.turns and t.session_id

    # what the CLI sent the model: the skill listing up front, the skill body after the Skill call
    requests = server.conversation_requests("s")
    assert len(requests) == 4
    assert "demo-skill: Writes greeting files" in requests[0].text()
    assert "SKILL-MARKER-7f3a" not in requests[0].text()
    assert "SKILL-MARKER-7f3a" in requests[1].text()

    # the operator's key went upstream from the proxy; the CLI only ever had the run's token
    assert {r.headers.get("x-api-key") for r in requests} == {SECRET}
    assert SECRET not in json.dumps(ClaudeCodeAgent().environment(ctx))
    # the proxy metered every call: the scripted usage, 100 in / 20 out per call
    report = proxied.last.release(ctx.model_endpoint.token)
    assert report.usage.requests == len(server.requests("s", api="anthropic"))
    assert report.usage.input_tokens == 100 * report.usage.requests

    # stored files: raw stream-json, stderr; no key (nor the run's token) is in them
    assert result.raw_transcript == ctx.output_dir / "transcript.raw.jsonl"
    assert (ctx.output_dir / "agent.stderr.log").exists()
    for stored in ctx.output_dir.iterdir():
        assert SECRET not in stored.read_text(errors="replace")
        assert ctx.model_endpoint.token not in stored.read_text(errors="replace")
    assert SECRET not in result.transcript.model_dump_json()


@pytest.mark.slow
@needs_claude
def test_a_tool_outside_the_allowed_list_is_denied(server, proxied, make_ctx, workspace):
    turns = [[{"tool_use": {"name": "Bash", "input": {"command": "touch x.txt", "description": "touch"}}}]]
    _, result = run_claude(server, proxied, make_ctx, turns, allowed_tools=["Read", "Write", "Edit"])
    assert result.status == "completed", result.error
    assert not (workspace / "x.txt").exists()
    (call,) = result.transcript.tool_calls
    assert call.name == "Bash" and call.kind == "shell" and call.command == "touch x.txt"
    assert call.denied and call.is_error
    assert [c.id for c in result.transcript.permission_denials] == [call.id]


@pytest.mark.slow
@needs_claude
def test_system_prompt_mode_sends_skill_md(server, proxied, make_ctx, workspace, skill_dir):
    _, result = run_claude(server, proxied, make_ctx, [], skill_dir=skill_dir, skill_mode="system-prompt")
    assert result.status == "completed", result.error
    (request,) = server.conversation_requests("s")
    system = str(request.body.get("system"))
    assert "SKILL-MARKER-7f3a" in system
    assert "demo-skill" not in result.transcript.skills_available  # not installed as a skill
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], check=False, cwd=workspace, capture_output=True, text=True
        ).stdout
        == ""
    )


@pytest.mark.slow
@needs_claude
@pytest.mark.parametrize(
    ("status", "kind"), [(500, "server_error"), (529, "overloaded"), (429, "rate_limited")]
)
def test_a_provider_error_the_cli_gave_up_on_is_a_provider_error(server, proxied, make_ctx, status, kind):
    ctx, result = run_claude(server, proxied, make_ctx, [{"error": status}], script_id=f"e{status}")
    assert result.status == "provider_error" and result.error_kind == kind, result.error
    assert result.exit_code != 0 and result.transcript.is_error
    assert [(e.kind, e.http_status) for e in result.provider_errors] == [(kind, status)]
    # and the proxy saw the same, which is what the trial believes
    seen = proxied.last.release(ctx.model_endpoint.token).usage.provider_errors
    assert [(e.kind, e.http_status) for e in seen] == [(kind, status)]


@pytest.mark.slow
@needs_claude
def test_a_refused_key_is_a_harness_error_a_bad_request_the_agents(server, proxied, make_ctx):
    _, refused = run_claude(server, proxied, make_ctx, [{"error": 401}], script_id="e401")
    assert refused.status == "harness_error" and refused.error_kind == "auth_failed"
    _, bad = run_claude(server, proxied, make_ctx, [{"error": 400}], script_id="e400")
    assert bad.status == "agent_error" and bad.error_kind == "bad_request"


@pytest.mark.slow
@needs_claude
def test_hung_agent_is_killed_at_the_timeout(server, proxied, make_ctx, processes_with_home):
    started = time.monotonic()
    ctx, result = run_claude(server, proxied, make_ctx, [{"hang": 60}], timeout=4)
    assert result.status == "timed_out"
    assert time.monotonic() - started < 15
    assert result.exit_code is None and "killed" in result.error
    assert processes_with_home(ctx.home) == []


def fake_cli(tmp_path, body: str) -> str:
    path = tmp_path / "fake-claude"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_crash_without_a_transcript_is_an_agent_error_and_scrubbed(tmp_path, make_ctx):
    binary = fake_cli(tmp_path, 'echo "boom: key $ANTHROPIC_API_KEY" >&2\nexit 7\n')
    token = "sk-skillassay-run-" + "crash-test-token-0123"
    ctx = make_ctx(model_endpoint=ModelEndpoint(base_url="http://127.0.0.1:9", token=token))
    result = ClaudeCodeAgent(binary=binary).run(ctx)
    assert result.status == "agent_error" and result.error_kind == "crashed" and result.exit_code == 7
    assert "boom" in result.error and token not in result.error
    assert token not in (ctx.output_dir / "agent.stderr.log").read_text()


def test_command_line_and_private_environment(tmp_path, make_ctx, skill_dir, monkeypatch):
    # the fake CLI prints its arguments and environment as a result record
    binary = fake_cli(
        tmp_path,
        f'{sys.executable} -c \'import json, os, sys; print(json.dumps({{"type": "result", "subtype": '
        '"success", '
        '"result": json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)})}))\' "$@"\n',
    )
    # the host holds keys and secrets; none of them, nor anything else of the host's environment but PATH and
    # the locale, reaches the agent, even when passed in ctx.env
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "host-openai-key-0123456789abcdef")
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter2-host-only")
    ctx = make_ctx(
        model="claude-test-1",
        skill_dir=skill_dir,
        skill_mode="system-prompt",
        env={
            "SKILLASSAY_MAX_RETRIES": "2",
            "ANTHROPIC_API_KEY": SECRET,
            "ANTHROPIC_BASE_URL": "http://evil:1",
            "EXTRA_SETTING": "on",
        },
        model_endpoint=ModelEndpoint(base_url="http://127.0.0.1:9", token="sk-skillassay-run-test-token"),
    )
    result = ClaudeCodeAgent(binary=binary).run(ctx)
    assert result.status == "completed"
    seen = json.loads(result.transcript.final_message)
    argv, env = seen["argv"], seen["env"]
    assert argv[0] == "-p" and argv[argv.index("--output-format") + 1] == "stream-json"
    assert "--verbose" in argv and argv[argv.index("--model") + 1] == "claude-test-1"
    assert argv[argv.index("--allowedTools") + 1] == "Read,Write,Edit,Glob,Grep,Bash"
    # the fake has no --help: the skill goes in front of the prompt instead
    assert "--append-system-prompt" not in argv
    assert argv[1].startswith("[SKILL INSTRUCTIONS]\n---\nname: demo-skill") and argv[1].endswith(ctx.prompt)
    assert any("SKILL.md prepended" in note for note in result.notes)  # said, so the run records it
    assert env["HOME"] == str(ctx.home) and env["CLAUDE_CONFIG_DIR"] == str(ctx.home / ".claude")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1" and env["DISABLE_TELEMETRY"] == "1"
    # the run's token, where the CLI looks for its key (the fake's output was scrubbed of it before parsing)
    assert env["ANTHROPIC_API_KEY"] == "[REDACTED]"
    assert "hunter2-host-only" not in json.dumps(env) and "OPENAI_API_KEY" not in env
    assert SECRET not in json.dumps(env) and "sk-host-openai" not in json.dumps(env)
    assert env["EXTRA_SETTING"] == "on"  # what the user added on purpose does get through
    allowed = {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PWD", "SHLVL", "_", "OLDPWD"}
    assert set(env) - allowed == {
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_BUG_COMMAND",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_MAX_RETRIES",
        "SKILLASSAY_MAX_RETRIES",
        "EXTRA_SETTING",
    }
    assert result.cli_source == "configured" and any("not the pinned CLI" in n for n in result.notes)


@pytest.mark.slow
@needs_claude
def test_a_retried_turn_gets_the_same_reply(server, proxied, make_ctx):
    turns = [{"error": 500, "fail_times": 1, "actions": [{"text": "after a retry"}]}]
    ctx, result = run_claude(server, proxied, make_ctx, turns, env={"SKILLASSAY_MAX_RETRIES": "1"})
    assert result.status == "completed", result.error
    assert result.transcript.final_message == "after a retry" and not result.transcript.is_error
    assert [r.status for r in server.conversation_requests("s")] == [500, 200]
    # the proxy recorded the error the CLI recovered from: seen, not held against anyone
    usage = proxied.last.release(ctx.model_endpoint.token).usage
    assert usage.requests == 2 and [e.kind for e in usage.provider_errors] == ["server_error"]
