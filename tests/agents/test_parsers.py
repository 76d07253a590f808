"""The CLIs' own transcript formats -> the common Transcript, on real sample transcripts
(tests/agents/data).
"""

from pathlib import Path

from skillassay.agents._common import read_jsonl
from skillassay.agents.claude_code import parse_stream_json
from skillassay.agents.codex import parse_exec_json, skills_from_session

DATA = Path(__file__).parent / "data"


def test_claude_stream_example():
    t = parse_stream_json(
        read_jsonl(DATA / "claude_stream_example.jsonl"), workspace="/tmp/ws/repo1", prompt="go"
    )
    assert t.agent == "claude-code"
    assert t.session_id == "8a12cdf5-1591-4c6c-af4d-84d56511e64f"
    assert t.cli_version == "2.1.197" and t.model == "claude-opus-4-8[1m]"
    assert "deep-research" in t.skills_available and t.skills_source == "cli" and t.skill_loaded
    assert t.skills_invoked == []
    # two content-block records of one message id -> one assistant message (the tool call is separate)
    assert [(m.role, m.text) for m in t.messages] == [
        ("user", "go"),
        ("assistant", "I'll create the file."),
        ("assistant", "Created hello.txt containing 'hello world'."),
    ]
    (call,) = t.tool_calls
    assert call.name == "Write" and call.kind == "write" and call.paths == ["hello.txt"]
    assert call.result.startswith("File created successfully") and not call.is_error and not call.denied
    assert call.message_id == "msg_35fc9ef04eb54134bd2d427a"
    assert t.final_message == "Created hello.txt containing 'hello world'."
    assert t.cost_usd == 0.002 and t.turns == 2 and t.duration_ms == 533
    assert t.usage.input_tokens == 200 and t.usage.output_tokens == 40
    assert t.exit_status == "success" and not t.is_error
    assert t.permission_denials == []


def test_claude_denied_example():
    t = parse_stream_json(read_jsonl(DATA / "claude_stream_denied_example.jsonl"), workspace="/tmp/ws/repo2")
    by_id = {c.id: c for c in t.tool_calls}
    assert [c.name for c in t.tool_calls] == ["Bash", "Bash", "WebFetch"]
    touch, ls, fetch = t.tool_calls
    assert touch.denied and touch.is_error and touch.kind == "shell" and touch.command == "touch touched.txt"
    assert touch.exit_code is None  # it never ran
    assert not ls.denied and ls.result == "a.txt" and ls.exit_code == 0
    assert fetch.denied and fetch.kind == "other"
    assert [c.id for c in t.permission_denials] == [
        "toolu_2a91dba09fbd4c7a8218105a",
        "toolu_51be06ef9a2045af90222ea7",
    ]
    assert t.shell_commands == ["touch touched.txt", "ls"]
    assert by_id[touch.id] is touch
    assert t.final_message == "done" and t.turns == 4


def test_claude_without_result_record_sums_message_usage():
    records = list(read_jsonl(DATA / "claude_stream_example.jsonl"))[:-1]
    t = parse_stream_json(records)
    assert t.exit_status is None and t.final_message == "Created hello.txt containing 'hello world'."
    assert t.usage.input_tokens == 200  # two message ids, 100 each (records of one id counted once)


def test_claude_permission_denied_system_record_marks_the_call():
    records = [
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "touch x"}}
                ],
            },
        },
        {"type": "system", "subtype": "permission_denied", "tool_use_id": "t1", "tool_name": "Bash"},
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "needs approval",
                        "is_error": True,
                    }
                ]
            },
        },
    ]
    t = parse_stream_json(records)
    assert t.tool_calls[0].denied and [c.id for c in t.permission_denials] == ["t1"]


def test_claude_skill_call_and_edit_paths():
    records = [
        {"type": "system", "subtype": "init", "cwd": "/w", "skills": ["demo"], "session_id": "s"},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "content": [{"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "demo"}}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "m2",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Edit",
                        "input": {"file_path": "/w/src/a.ts", "old_string": "a", "new_string": "b"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]},
            "tool_use_result": {"filePath": "/w/src/a.ts", "structuredPatch": []},
        },
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 2},
    ]
    t = parse_stream_json(records)
    assert t.skills_invoked == ["demo"] and t.tool_calls[0].kind == "skill"
    assert t.tool_calls[1].kind == "edit" and t.tool_calls[1].paths == ["src/a.ts"]
    assert t.is_error and t.exit_status == "error_max_turns" and t.final_message is None


def test_codex_exec_json_example():
    t = parse_exec_json(
        read_jsonl(DATA / "codex_exec_json_example.jsonl"), workspace="/tmp/ws/repo3", prompt="go"
    )
    assert t.agent == "codex" and t.session_id == "01a22965-a2e2-7e53-965d-c50f8c7aec0f"
    assert [m.text for m in t.messages] == ["go", "Creating hello.txt.", "Created hello.txt."]
    patch, cat = t.tool_calls
    assert patch.name == "apply_patch" and patch.kind == "write" and patch.paths == ["hello.txt"]
    assert cat.kind == "shell" and cat.command == "cat hello.txt" and cat.exit_code == 0
    assert cat.result == "hello world\n" and cat.input == {"command": "/bin/bash -lc 'cat hello.txt'"}
    assert t.final_message == "Created hello.txt."
    assert t.usage.input_tokens == 300 and t.usage.output_tokens == 60
    assert t.turns == 1 and t.exit_status == "completed" and not t.is_error
    assert t.cost_usd is None  # Codex reports none


def test_codex_failures_and_skill_reads():
    records = [
        {"type": "thread.started", "thread_id": "th"},
        {
            "type": "item.completed",
            "item": {
                "id": "i0",
                "type": "command_execution",
                "command": "/bin/bash -lc 'cat /h/.codex/skills/demo/SKILL.md'",
                "aggregated_output": "",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "i1",
                "type": "command_execution",
                "command": "/bin/bash -lc false",
                "aggregated_output": "",
                "exit_code": 1,
                "status": "failed",
            },
        },
        {
            "type": "item.started",
            "item": {
                "id": "i2",
                "type": "file_change",
                "status": "in_progress",
                "changes": [{"path": "/w/a.txt", "kind": "update"}],
            },
        },
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
    ]
    t = parse_exec_json(records, workspace="/w")
    assert t.skills_invoked == ["demo"]
    assert t.tool_calls[1].is_error and t.tool_calls[1].exit_code == 1 and t.tool_calls[1].command == "false"
    assert t.tool_calls[2].kind == "edit" and t.tool_calls[2].paths == ["a.txt"]
    assert t.is_error and t.exit_status == "failed" and t.final_message == "stream disconnected"


def test_codex_skills_from_session():
    text = (
        "<skills_instructions>\n## Skills\n### Skill roots\n- `r0` = `/h/skills`\n### Available skills\n"
        "- imagegen: Generate images. (file: r1/imagegen/SKILL.md)\n"
        "- demo-skill: Demo: greeting files. (file: r0/demo-skill/SKILL.md)\n### How to use skills\n- x: y\n"
    )
    records = [
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": text}],
            },
        }
    ]
    assert skills_from_session(records) == ["imagegen", "demo-skill"]
