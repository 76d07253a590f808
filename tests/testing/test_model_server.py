import json
import threading
import time

import httpx
import pytest

from skillassay.testing import ModelServer, parse_scripts

SCRIPT = {
    "id": "one",
    "usage": {"input_tokens": 11, "output_tokens": 5},
    "turns": [
        [
            {"text": "Hello."},
            {"tool_use": {"name": "Write", "input": {"file_path": "{workspace}/a.txt", "content": "x"}}},
        ],
        [
            {"text": "Patching."},
            {"patch": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"},
            {"exec": "ls"},
        ],
        {"error": 500},
    ],
}


def sse(response: httpx.Response) -> list[tuple[str, dict]]:
    events = []
    for chunk in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.fixture
def server():
    with ModelServer(parse_scripts([SCRIPT, {"id": "two", "turns": [{"hang": 3}]}])) as srv:
        yield srv


def anthropic_body(history: list[dict], tools=True, text="go") -> dict:
    body = {
        "model": "claude-test",
        "stream": True,
        "system": [{"type": "text", "text": " - Primary working directory: /tmp/ws"}],
        "messages": [{"role": "user", "content": text}, *history],
    }
    if tools:
        body["tools"] = [{"name": "Write", "input_schema": {}}]
    return body


def test_anthropic_stream_first_turn(server):
    with httpx.Client() as client:
        assert client.head(server.base_url()).status_code == 200
        r = client.post(server.base_url("one") + "/v1/messages?beta=true", json=anthropic_body([]))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = sse(r)
    names = [e for e, _ in events]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "Hello."}
    assert events[4][1]["content_block"]["name"] == "Write"
    tool_input = json.loads(events[5][1]["delta"]["partial_json"])
    assert tool_input == {"file_path": "/tmp/ws/a.txt", "content": "x"}  # {workspace} from the system prompt
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"
    assert events[7][1]["usage"]["output_tokens"] == 5
    assert events[0][1]["message"]["model"] == "claude-test"
    (record,) = server.requests("one")
    assert record.api == "anthropic" and record.turn == 0 and record.body["model"] == "claude-test"


def test_turns_are_counted_from_the_history_and_retries_repeat(server):
    url = server.base_url("one") + "/v1/messages"
    after_one = [
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    with httpx.Client() as client:
        first = sse(client.post(url, json=anthropic_body(after_one)))
        again = sse(client.post(url, json=anthropic_body(after_one)))
        assert first == again  # stateless: a retry gets the same reply, with the same ids
        # turn 1 holds only OpenAI actions plus text: the Anthropic reply keeps the text and ends the turn
        assert [e for e, _ in first].count("content_block_start") == 1
        assert first[-2][1]["delta"]["stop_reason"] == "end_turn"
        two = [*after_one, {"role": "assistant", "content": "Patching."}, {"role": "user", "content": "more"}]
        failed = client.post(url, json=anthropic_body(two))
        assert failed.status_code == 500 and failed.json()["type"] == "error"
        three = [*two, {"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]
        final = sse(client.post(url, json=anthropic_body(three)))
        assert final[2][1]["delta"]["text"] == "Done."  # the script ran out: its final text
    assert [r.turn for r in server.requests("one")] == [1, 1, 2, 3]
    assert [r.status for r in server.requests("one")] == [200, 200, 500, 200]


def test_a_turn_that_fails_a_few_times_then_answers():
    script = parse_scripts(
        {"id": "f", "turns": [{"error": 529, "fail_times": 2, "actions": [{"text": "late"}]}]}
    )
    with ModelServer(script) as srv:
        url = srv.base_url("f") + "/v1/messages"
        codes = [httpx.post(url, json=anthropic_body([])).status_code for _ in range(3)]
        assert codes == [529, 529, 200]
        assert sse(httpx.post(url, json=anthropic_body([])))[2][1]["delta"]["text"] == "late"


def test_side_calls_do_not_consume_turns(server):
    with httpx.Client() as client:
        r = client.post(server.base_url("one") + "/v1/messages", json=anthropic_body([], tools=False))
    assert sse(r)[2][1]["delta"]["text"] == "OK"
    (record,) = server.requests("one")
    assert record.side_call and record.turn is None
    assert server.conversation_requests("one") == []


def test_non_streaming_anthropic_answer(server):
    body = anthropic_body([]) | {"stream": False}
    r = httpx.post(server.base_url("one") + "/v1/messages", json=body)
    assert r.json()["content"][0]["text"] == "Hello."


def test_openai_responses_stream(server):
    url = server.base_url("one") + "/v1/responses"
    history = [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "<cwd>/w</cwd>"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
        {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
    ]
    r = httpx.post(
        url, json={"model": "gpt-5.5", "stream": True, "input": history, "tools": [{"type": "function"}]}
    )
    events = sse(r)
    names = [e for e, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert "response.output_text.delta" in names
    done = [d["item"] for e, d in events if e == "response.output_item.done"]
    assert [i["type"] for i in done] == ["message", "custom_tool_call", "function_call"]
    assert done[1]["name"] == "apply_patch" and done[1]["input"].startswith("*** Begin Patch")
    assert done[2]["name"] == "exec_command" and json.loads(done[2]["arguments"]) == {"cmd": "ls"}
    completed = events[-1][1]["response"]
    assert completed["usage"]["input_tokens"] == 11 and completed["usage"]["output_tokens"] == 5
    assert server.requests("one", api="openai")[0].turn == 1


def test_other_requests_get_harmless_answers(server):
    base = server.base_url("one")
    assert httpx.head(base).status_code == 200
    assert httpx.get(base + "/v1/models").json()["data"] == []
    assert httpx.post(base + "/v1/messages/count_tokens", json={"messages": []}).json() == {
        "input_tokens": 100
    }
    assert httpx.post(base + "/v1/unknown", json={}).status_code == 404
    assert [(r.method, r.path, r.status, r.api) for r in server.requests("one")] == [
        ("HEAD", "/", 200, None),
        ("GET", "/v1/models", 200, None),
        ("POST", "/v1/messages/count_tokens", 200, None),
        ("POST", "/v1/unknown", 404, None),
    ]


def test_scripts_by_header_and_unknown_scripts(server):
    r = httpx.post(
        server.base_url() + "/v1/messages", json=anthropic_body([]), headers={"x-skillassay-script": "one"}
    )
    assert r.status_code == 200
    assert httpx.post(server.base_url("nope") + "/v1/messages", json=anthropic_body([])).status_code == 404
    # two scripts and none called "default": a bare /v1 path has no script
    assert httpx.post(server.base_url() + "/v1/messages", json=anthropic_body([])).status_code == 404


def test_a_hanging_turn_answers_late_and_does_not_block_others(server):
    results = {}

    def slow():
        started = time.monotonic()
        results["r"] = httpx.post(
            server.base_url("two") + "/v1/messages", json=anthropic_body([]), timeout=10
        )
        results["t"] = time.monotonic() - started

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    assert httpx.post(server.base_url("one") + "/v1/messages", json=anthropic_body([])).status_code == 200
    assert time.monotonic() - started < 1
    thread.join()
    assert results["r"].status_code == 200 and results["t"] >= 2.9


def test_stop_with_a_request_still_hanging():
    srv = ModelServer(parse_scripts({"id": "h", "turns": [{"hang": 60}]})).start()
    thread = threading.Thread(
        target=lambda: httpx.post(srv.base_url("h") + "/v1/messages", json=anthropic_body([]), timeout=30),
        daemon=True,
    )
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 8


def test_cli_entry_point_serves_a_script_file(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "s.yaml"
    path.write_text("id: cli\nturns: [[{text: hi}]]\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillassay.testing.model_server", str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("cli: http://127.0.0.1:")
        url = line.split(": ", 1)[1]
        r = httpx.post(url + "/v1/messages", json=anthropic_body([]))
        assert sse(r)[2][1]["delta"]["text"] == "hi"
    finally:
        proc.terminate()
        proc.wait(10)


def test_workspace_found_in_a_system_message_and_never_guessed(server):
    """Newer Claude Code versions put the environment in a system message; without any, {workspace} is refused
    (an empty substitution would turn "{workspace}/a.txt" into "/a.txt", outside every sandbox)."""
    body = anthropic_body([])
    body["system"] = [{"type": "text", "text": "You are a coding agent."}]
    body["messages"].insert(
        0, {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/other"}
    )
    with httpx.Client() as client:
        r = client.post(server.base_url("one") + "/v1/messages", json=body)
        tool_input = json.loads(sse(r)[5][1]["delta"]["partial_json"])
        assert tool_input["file_path"] == "/tmp/other/a.txt"
        del body["messages"][0]
        r = client.post(server.base_url("one") + "/v1/messages", json=body)
    assert r.status_code == 500 and "working directory" in r.text
