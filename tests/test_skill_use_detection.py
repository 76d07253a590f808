"""Skill-use detection (skillassay.triggers) on normalised transcripts: one definition for both CLIs."""

import json
from pathlib import Path

import pytest

from skillassay.agents.claude_code import parse_stream_json
from skillassay.transcripts import ToolCall, Transcript, Usage
from skillassay.triggers import SkillTarget, TriggerBudget, detect, observed_use, stop_reason, triggered

HOME = "/scratch/run-1/home"
CLAUDE = SkillTarget(
    name="seam-lock-access",
    dirs=[f"{HOME}/.claude/skills/seam-lock-access"],
    home=HOME,
    env={"CLAUDE_CONFIG_DIR": f"{HOME}/.claude"},
)
CODEX = SkillTarget(
    name="seam-lock-access",
    dirs=[f"{HOME}/.codex/skills/seam-lock-access"],
    home=HOME,
    env={"CODEX_HOME": f"{HOME}/.codex"},
)
EXAMPLES = Path(__file__).resolve().parent / "agents" / "data"


def shell(cmd: str, i: int = 0, **kw) -> ToolCall:
    return ToolCall(
        id=f"c{i}", name="exec_command", kind="shell", command=cmd, turn=kw.pop("turn", i + 1), **kw
    )


def transcript(*calls: ToolCall, turns: int | None = None, per_turn: int = 100) -> Transcript:
    n = turns if turns is not None else max([c.turn or 0 for c in calls], default=0)
    return Transcript(agent="x", tool_calls=list(calls), turn_usage=[Usage(input_tokens=per_turn)] * n)


@pytest.mark.parametrize(
    "command",
    [
        f"cat {HOME}/.codex/skills/seam-lock-access/SKILL.md",
        "cat ~/.codex/skills/seam-lock-access/SKILL.md",
        "sed -n '1,200p' \"$CODEX_HOME/skills/seam-lock-access/SKILL.md\"",
        "head -50 ${HOME}/.codex/skills/seam-lock-access/SKILL.md | grep -n seam",
        "cd ~/.codex/skills/seam-lock-access && cat SKILL.md",
        "cat r0/seam-lock-access/SKILL.md",
        "python ~/.codex/skills/seam-lock-access/scripts/check.py --dry-run",
    ],
)
def test_a_shell_command_naming_a_skill_file_is_a_use(command):
    use = detect(transcript(shell(command)), CODEX)
    assert use.used and use.first.how == "shell" and use.first.evidence == command


@pytest.mark.parametrize(
    "command",
    [
        "ls ~/.codex/skills",  # listing the skills, not reading one
        "ls ~/.codex/skills/seam-lock-access/",
        "cat ~/.codex/skills/other-skill/SKILL.md",
        "cat ~/.codex/skills/seam-lock-access-v2/SKILL.md",  # a longer name is another skill
        "grep -rn seam-lock-access src/",
        "cat docs/SKILL.md",
    ],
)
def test_commands_that_do_not_read_the_skill_are_not_a_use(command):
    assert not detect(transcript(shell(command)), CODEX).used


def test_the_paths_of_a_shell_read_are_relative_to_the_skill():
    use = detect(transcript(shell("bash $CODEX_HOME/skills/seam-lock-access/scripts/run.sh")), CODEX)
    assert use.first.path == "scripts/run.sh"


def test_skill_tool_read_tool_and_search_count_denials_and_failures_do_not():
    calls = [
        ToolCall(id="a", name="Skill", kind="skill", input={"skill": "other"}, turn=1),
        ToolCall(
            id="b",
            name="Skill",
            kind="skill",
            input={"skill": "seam-lock-access"},
            denied=True,
            is_error=True,
            turn=1,
        ),
        ToolCall(
            id="c",
            name="Read",
            kind="read",
            input={"file_path": f"{HOME}/.claude/skills/seam-lock-access/x.md"},
            is_error=True,
            turn=2,
        ),
        ToolCall(
            id="d",
            name="Read",
            kind="read",
            input={"file_path": "~/.claude/skills/seam-lock-access/SKILL.md"},
            turn=3,
        ),
        ToolCall(id="e", name="Skill", kind="skill", input={"skill": "/plugin:seam-lock-access"}, turn=4),
        ToolCall(
            id="f",
            name="Grep",
            kind="search",
            input={"pattern": "access", "path": f"{HOME}/.claude/skills/seam-lock-access"},
            turn=5,
        ),
        ToolCall(
            id="g",
            name="Write",
            kind="write",
            input={"file_path": f"{HOME}/.claude/skills/seam-lock-access/SKILL.md"},
            turn=6,
        ),
    ]
    use = detect(transcript(*calls), CLAUDE)
    assert [e.call_id for e in use.events] == ["d", "e", "f"]
    assert [(e.call_id, e.error) for e in use.attempts] == [("b", "denied"), ("c", "failed")]
    assert [e.how for e in use.events] == ["read", "skill_tool", "search"]
    assert use.first.path == "SKILL.md" and use.calls_before == 3


def test_time_to_trigger_counts_turns_seconds_and_tokens_up_to_the_use():
    calls = [
        shell("ls", 0, turn=1, at_s=1.0),
        shell("cat a.py", 1, turn=1, at_s=1.2),
        shell("git log", 2, turn=2, at_s=2.5),
        shell("cat ~/.codex/skills/seam-lock-access/SKILL.md", 3, turn=3, at_s=4.25),
    ]
    t = transcript(*calls, turns=4)
    t.turn_usage = [
        Usage(input_tokens=100, output_tokens=10),
        Usage(input_tokens=200, cache_read_input_tokens=50),
        Usage(input_tokens=300, output_tokens=5),
        Usage(input_tokens=999),
    ]
    use = detect(t, CODEX)
    assert (use.first.turn, use.first.seconds, use.first.tokens, use.calls_before) == (3, 4.25, 665, 3)


def test_the_whole_transcript_is_read_not_only_the_first_tool_calls():
    """The case that defeats detectors stopping at the first tool call that is not the skill."""
    calls = [shell(c, i) for i, c in enumerate(["ls", "cat README.md", "git status", "npm test"])]
    calls.append(ToolCall(id="s", name="Skill", kind="skill", input={"skill": "seam-lock-access"}, turn=9))
    use = detect(transcript(*calls), CLAUDE)
    assert use.used and use.calls_before == 4 and use.first.turn == 9


def test_turns_come_from_message_ids_when_the_parser_did_not_set_them():
    calls = [
        ToolCall(id="a", name="Bash", kind="shell", command="ls", message_id="m1"),
        ToolCall(id="b", name="Bash", kind="shell", command="pwd", message_id="m1"),
        ToolCall(id="c", name="Skill", kind="skill", input={"skill": "seam-lock-access"}, message_id="m2"),
    ]
    assert detect(Transcript(agent="x", tool_calls=calls), CLAUDE).first.turn == 2


def test_listed_is_known_only_when_the_cli_reported_its_skills():
    t = Transcript(agent="x", skills_available=["seam-lock-access"], skills_source="cli")
    assert detect(t, CLAUDE).listed is True
    t.skills_source = "model request"  # what the proxy saw the CLI send: the sealed run's source
    assert detect(t, CLAUDE).listed is True
    t.skills_available = []
    assert detect(t, CLAUDE).listed is False
    t.skills_source = "installed"
    assert detect(t, CLAUDE).listed is None


def test_a_use_after_the_budget_does_not_trigger():
    t = transcript(shell("ls", 0, turn=1), shell("cat ~/.codex/skills/seam-lock-access/SKILL.md", 1, turn=5))
    use = detect(t, CODEX)
    assert use.used
    assert triggered(use, TriggerBudget(max_turns=5)) and not triggered(use, TriggerBudget(max_turns=4))
    assert triggered(use, TriggerBudget(max_tokens=500)) and not triggered(use, TriggerBudget(max_tokens=499))


def test_stop_reasons():
    budget = TriggerBudget(max_turns=2, max_tokens=1000)
    assert stop_reason(transcript(shell("ls", 0, turn=1)), CODEX, budget) is None
    assert (
        stop_reason(transcript(shell("cat ~/.codex/skills/seam-lock-access/SKILL.md")), CODEX, budget)
        == "triggered"
    )
    assert stop_reason(transcript(shell("ls", 0, turn=3)), CODEX, budget) == "max_turns"
    assert stop_reason(transcript(shell("ls"), per_turn=1001), CODEX, budget) == "max_tokens"
    no_stop = TriggerBudget(stop_on_trigger=False)
    assert (
        stop_reason(transcript(shell("cat ~/.codex/skills/seam-lock-access/SKILL.md")), CODEX, no_stop)
        is None
    )


def test_a_real_claude_transcript_without_the_skill_is_not_a_use():
    records = [
        json.loads(line) for line in (EXAMPLES / "claude_stream_example.jsonl").read_text().splitlines()
    ]
    t = parse_stream_json(records)
    use = detect(t, SkillTarget(name="deep-research"))
    assert use.listed is True and not use.used and use.tool_calls == 1


def test_a_run_reads_the_skill_where_it_was_installed_and_where_the_job_was_given_it(tmp_path):
    given = tmp_path / "skills" / "seam-lock-access"
    read_there = transcript(shell(f"python {given}/scripts/run.py"))
    use = observed_use(read_there, CLAUDE, given)
    assert use is not None and use.used and use.first is not None and use.first.path == "scripts/run.py"
    assert not detect(read_there, CLAUDE).used  # the source folder counts only because the run was given it
    assert observed_use(read_there, None, given) is None  # a transcript that cannot show tool calls
