"""Skill use read from real transcripts: Claude Code and Codex, installed skill, scripted model.

Each script plays one way a model can pick a skill up (or not); detection (skillassay.triggers) must give
the same answer for both CLIs from their real output, including when the skill comes after several other
tool calls."""

import pytest
from parts import needs as parts_needs

from skillassay.agents import get_agent
from skillassay.agents.claude_code import ClaudeCodeAgent
from skillassay.agents.codex import CodexAgent
from skillassay.testing import ModelServer, parse_scripts
from skillassay.triggers import TriggerBudget, detect

pytestmark = pytest.mark.slow
needs = {
    "claude-code": parts_needs(
        ClaudeCodeAgent().binary is not None, "the pinned claude CLI (npm ci --prefix node)"
    ),
    "codex": parts_needs(CodexAgent().binary is not None, "the pinned codex CLI (npm ci --prefix node)"),
}
SKILL = "demo-skill"


@pytest.fixture(scope="module")
def server():
    with ModelServer() as srv:
        yield srv


def run(server, proxied, make_ctx, skill_dir, agent, script_id, turns, **ctx_args):
    (script,) = parse_scripts({"id": f"{agent}-{script_id}", "turns": turns, "final_text": "Done."})
    server.add_script(script)
    endpoint = proxied(server, script.id)  # as a job runs it: through a model proxy
    ctx = make_ctx(
        env={"SKILLASSAY_MAX_RETRIES": "0"}, model_endpoint=endpoint, skill_dir=skill_dir, **ctx_args
    )
    result = get_agent(agent).run(ctx)
    assert result.status == "completed", result.error
    return ctx, result, detect(result.transcript, result.skill_target)


def bash(cmd):
    return {"tool_use": {"name": "Bash", "input": {"command": cmd}}}


@needs["claude-code"]
def test_claude_invoking_the_skill_tool(server, proxied, make_ctx, skill_dir):
    ctx, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        "claude-code",
        "invoke",
        [[{"tool_use": {"name": "Skill", "input": {"skill": SKILL}}}]],
    )
    assert result.skill_target.location == f"$CLAUDE_CONFIG_DIR/skills/{SKILL}"
    assert (ctx.home / ".claude" / "skills" / SKILL / "SKILL.md").is_file()
    assert use.listed and use.used and use.first.how == "skill_tool"
    assert (use.first.turn, use.calls_before) == (1, 0)
    assert use.first.seconds is not None and 0 < use.first.seconds <= result.duration_s
    assert use.first.tokens and use.first.tokens > 0


@needs["claude-code"]
def test_claude_reading_skill_md(server, proxied, make_ctx, skill_dir, tmp_path):
    path = tmp_path / "home" / ".claude" / "skills" / SKILL / "SKILL.md"
    _, _, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        "claude-code",
        "read",
        [
            [{"tool_use": {"name": "Read", "input": {"file_path": str(path)}}}],
            [bash(f"cat ~/.claude/skills/{SKILL}/SKILL.md")],
        ],
    )
    assert [(e.how, e.tool, e.path, e.turn) for e in use.events] == [
        ("read", "Read", "SKILL.md", 1),
        ("shell", "Bash", "SKILL.md", 2),
    ]


@needs["claude-code"]
def test_claude_never_touching_the_skill(server, proxied, make_ctx, skill_dir, workspace):
    _, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        "claude-code",
        "never",
        [
            [bash("ls ~/.claude/skills")],
            [{"tool_use": {"name": "Read", "input": {"file_path": f"{workspace}/README.md"}}}],
        ],
    )
    assert len(result.transcript.tool_calls) == 2
    assert use.listed and not use.used and use.events == [] and use.attempts == []


@needs["claude-code"]
def test_claude_skill_after_several_other_tool_calls(server, proxied, make_ctx, skill_dir, workspace):
    """What defeats a detector that stops at the first tool call that is not the skill."""
    turns = [
        [bash("ls"), {"tool_use": {"name": "Glob", "input": {"pattern": "**/*"}}}],
        [{"tool_use": {"name": "Read", "input": {"file_path": f"{workspace}/src/app.txt"}}}],
        [bash("git log --oneline")],
        [{"tool_use": {"name": "Grep", "input": {"pattern": "hello"}}}],
        [{"tool_use": {"name": "Skill", "input": {"skill": SKILL}}}],
    ]
    _, result, use = run(server, proxied, make_ctx, skill_dir, "claude-code", "late", turns)
    calls = result.transcript.tool_calls
    assert [c.name for c in calls] == ["Bash", "Glob", "Read", "Bash", "Grep", "Skill"]
    assert use.used and use.calls_before == 5 and use.first.turn == 5
    # the per-turn tokens add up to the first use; the time is after the earlier calls'
    assert use.first.tokens == sum(u.total for u in result.transcript.turn_usage[:5])
    assert use.first.seconds >= max(c.at_s for c in calls[:5])


@needs["codex"]
def test_codex_reading_skill_md_and_running_a_skill_script(server, proxied, make_ctx, skill_dir):
    (skill_dir / "scripts").mkdir()
    (skill_dir / "scripts" / "greet.sh").write_text("echo greeting\n")
    ctx, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        "codex",
        "read",
        [
            [{"exec": f"sed -n '1,80p' ~/.codex/skills/{SKILL}/SKILL.md"}],
            [{"exec": f"bash $CODEX_HOME/skills/{SKILL}/scripts/greet.sh"}],
        ],
    )
    assert result.skill_target.location == f"$CODEX_HOME/skills/{SKILL}"
    assert (ctx.home / ".codex" / "skills" / SKILL / "SKILL.md").is_file()
    assert "SKILL-MARKER-7f3a" in result.transcript.tool_calls[0].result  # it really read the installed file
    assert use.listed and [(e.how, e.path, e.turn) for e in use.events] == [
        ("shell", "SKILL.md", 1),
        ("shell", "scripts/greet.sh", 2),
    ]
    assert use.first.seconds is not None and use.first.tokens == result.transcript.turn_usage[0].total


@needs["codex"]
def test_codex_never_touching_the_skill(server, proxied, make_ctx, skill_dir):
    _, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        "codex",
        "never",
        [[{"exec": "ls ~/.codex/skills"}], [{"exec": "cat README.md"}]],
    )
    assert len(result.transcript.tool_calls) == 2
    assert use.listed and not use.used


@needs["codex"]
def test_codex_skill_after_several_other_tool_calls(server, proxied, make_ctx, skill_dir):
    turns = [
        [{"exec": "ls"}, {"exec": "cat README.md"}],
        [{"exec": "git status --short"}],
        [{"patch": "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n"}],
        [{"exec": "cat src/app.txt"}],
        [{"exec": f"cat ~/.codex/skills/{SKILL}/SKILL.md"}],
    ]
    _, result, use = run(server, proxied, make_ctx, skill_dir, "codex", "late", turns)
    calls = result.transcript.tool_calls
    assert [c.name for c in calls] == ["exec_command"] * 3 + ["apply_patch", "exec_command", "exec_command"]
    assert [c.turn for c in calls] == [1, 1, 2, 3, 4, 5]
    assert use.used and use.calls_before == 5 and use.first.turn == 5
    assert use.first.tokens == sum(u.total for u in result.transcript.turn_usage[:5])


@pytest.mark.parametrize("agent", [pytest.param(a, marks=needs[a]) for a in ("claude-code", "codex")])
def test_a_trigger_run_stops_once_the_decision_is_made(server, proxied, make_ctx, skill_dir, agent):
    if agent == "claude-code":
        use_it, other = {"tool_use": {"name": "Skill", "input": {"skill": SKILL}}}, bash("ls")
    else:
        use_it, other = {"exec": f"cat ~/.codex/skills/{SKILL}/SKILL.md"}, {"exec": "ls"}
    # used at turn 2 of 8: the run ends there, not after 8 turns
    _, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        agent,
        "stop-used",
        [[other], [use_it]] + [[other]] * 6,
        budget=TriggerBudget(max_turns=6),
    )
    assert result.stopped == "triggered" and use.used and use.first.turn == 2
    assert len(server.conversation_requests(f"{agent}-stop-used")) < 8
    # never used in 8 turns, with a budget of 2: the run ends at the third
    _, result, use = run(
        server,
        proxied,
        make_ctx,
        skill_dir,
        agent,
        "stop-budget",
        [[other]] * 8,
        budget=TriggerBudget(max_turns=2),
    )
    assert result.stopped == "max_turns" and not use.used
    assert len(server.conversation_requests(f"{agent}-stop-budget")) < 8
