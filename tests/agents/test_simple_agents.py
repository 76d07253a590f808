import json
import subprocess
import sys
import time

import pytest

from skillassay.agents import UnknownAgentError, available_agents, get_agent
from skillassay.agents._common import Scrubber, SkillError, group_members, load_skill
from skillassay.agents.command import build_argv
from skillassay.errors import SkillassayError
from skillassay.services.model_proxy import ModelEndpoint


def test_registry():
    assert available_agents() == ["claude-code", "codex", "command", "noop", "reference"]
    for name in available_agents():
        assert get_agent(name).name == name
    with pytest.raises(UnknownAgentError) as info:
        get_agent("gpt-engineer")
    assert isinstance(info.value, SkillassayError) and "available" in str(info.value)


def test_noop_changes_nothing(make_ctx, workspace):
    result = get_agent("noop").run(make_ctx())
    assert result.status == "completed" and result.transcript.tool_calls == []
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], check=False, cwd=workspace, capture_output=True, text=True
        ).stdout
        == ""
    )


def test_command_placeholders_are_substituted_per_argument():
    argv = build_argv("agent --prompt {prompt} --dir={workspace} 'a b'", 'say "hi"; rm -rf /', "/w s")
    assert argv == ["agent", "--prompt", 'say "hi"; rm -rf /', "--dir=/w s", "a b"]


def test_command_agent_runs_without_a_shell(make_ctx, workspace):
    script = (
        "import sys, pathlib; pathlib.Path(sys.argv[2], 'out.txt').write_text(sys.argv[1]); print('wrote it')"
    )
    ctx = make_ctx(
        command=f'{sys.executable} -c "{script}" {{prompt}} {{workspace}}', prompt="it's $HOME; `x`"
    )
    result = get_agent("command").run(ctx)
    assert result.status == "completed" and result.exit_code == 0
    assert (workspace / "out.txt").read_text() == "it's $HOME; `x`"
    assert result.transcript.final_message == "wrote it"
    assert result.stdout.read_text().strip() == "wrote it"


def test_command_agent_failure_timeout_and_missing_binary(make_ctx):
    failing = get_agent("command").run(make_ctx(command=f"{sys.executable} -c 'import sys; sys.exit(3)'"))
    assert failing.status == "agent_error" and failing.exit_code == 3 and failing.transcript.is_error

    started = time.monotonic()
    hung = get_agent("command").run(
        make_ctx(command=f"{sys.executable} -c 'import time; time.sleep(60)'", timeout=1)
    )
    assert hung.status == "timed_out" and time.monotonic() - started < 10

    missing = get_agent("command").run(make_ctx(command="no-such-binary-skillassay {prompt}"))
    assert missing.status == "harness_error" and "no-such-binary" in missing.error
    assert get_agent("command").run(make_ctx(command=None)).status == "harness_error"


def test_command_agent_kills_what_the_command_left_behind(make_ctx, tmp_path):
    pidfile = tmp_path / "pid"
    code = (
        f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; "
        "time.sleep(60)']); "
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))"
    )
    result = get_agent("command").run(make_ctx(command=f'{sys.executable} -c "{code}"'))
    assert result.status == "completed"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the background child survived the run")


def test_command_agent_gets_an_explicit_environment_and_no_key(make_ctx, monkeypatch):
    key = "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("HOST_ONLY_SETTING", "from-the-host")
    token = "sk-skillassay-run-" + "command-test-token"
    ctx = make_ctx(
        command=f'{sys.executable} -c "import json, os; print(json.dumps(dict(os.environ)))"',
        env={"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key, "MINE": "1"},
        model_endpoint=ModelEndpoint(base_url="http://127.0.0.1:9", token=token),
    )
    result = get_agent("command").run(ctx)
    env = json.loads(result.stdout.read_text())
    # scrubbed when stored
    assert key not in result.stdout.read_text() and token not in result.stdout.read_text()
    assert "HOST_ONLY_SETTING" not in env and env["MINE"] == "1" and env["HOME"] == str(ctx.home)
    # the endpoint under every name an SDK looks for; the key slots hold the run's token (scrubbed here)
    assert (
        env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
        and env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    )
    assert env["ANTHROPIC_API_KEY"] == env["OPENAI_API_KEY"] == env["SKILLASSAY_MODEL_TOKEN"] == "[REDACTED]"


def test_scrubber():
    scrub = Scrubber({"MY_TOKEN": "hunter22secret", "PATH": "/usr/bin", "SHORT_KEY": "abc"})
    text = "token hunter22secret path /usr/bin key sk-abcdefghijklmnopqrstuvwx abc"
    assert scrub(text) == "token [REDACTED] path /usr/bin key [REDACTED] abc"


def test_reference_agent_applies_golden(make_ctx, workspace, tmp_path):
    golden = tmp_path / "golden"
    (golden / "src" / "lib").mkdir(parents=True)
    (golden / "src" / "app.txt").write_text("hello world\n")  # changed
    (golden / "src" / "lib" / "new.txt").write_text("new\n")  # added
    (golden / "node_modules" / "pkg").mkdir(parents=True)
    (golden / "node_modules" / "pkg" / "index.js").write_text("x")  # never copied
    # README.md is not in golden: deleted. node_modules and .git in the workspace are left alone.
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "dep.js").write_text("y")
    (workspace / "old" / "deep").mkdir(parents=True)
    (workspace / "old" / "deep" / "gone.txt").write_text("z")

    result = get_agent("reference").run(make_ctx(golden_dir=golden))
    assert result.status == "completed"
    assert (workspace / "src" / "app.txt").read_text() == "hello world\n"
    assert (workspace / "src" / "lib" / "new.txt").read_text() == "new\n"
    assert not (workspace / "README.md").exists() and not (workspace / "old").exists()
    assert (workspace / "node_modules" / "dep.js").exists()
    assert not (workspace / "node_modules" / "pkg").exists()
    assert (workspace / ".git").is_dir()
    calls = {c.paths[0]: (c.name, c.kind) for c in result.transcript.tool_calls}
    assert calls == {
        "src/app.txt": ("Edit", "edit"),
        "src/lib/new.txt": ("Write", "write"),
        "README.md": ("Delete", "edit"),
        "old/deep/gone.txt": ("Delete", "edit"),
    }
    # running it again changes nothing
    again = get_agent("reference").run(make_ctx(golden_dir=golden))
    assert again.transcript.tool_calls == []


def test_reference_agent_needs_golden(make_ctx, tmp_path):
    assert get_agent("reference").run(make_ctx()).status == "harness_error"
    assert get_agent("reference").run(make_ctx(golden_dir=tmp_path / "nope")).status == "harness_error"


def test_load_skill(skill_dir, tmp_path):
    skill = load_skill(skill_dir)
    assert skill.name == "demo-skill" and skill.description.startswith("Writes greeting")
    assert skill.body.startswith("# Demo skill")
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(SkillError):
        load_skill(bad)
    (bad / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody")
    with pytest.raises(SkillError):
        load_skill(bad)


def test_group_members_sees_this_process_group():
    import os

    assert os.getpid() in (group_members(os.getpgrp()) or [os.getpid()])
