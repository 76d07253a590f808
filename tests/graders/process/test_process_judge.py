"""The LLM judge, against the project's scripted model server (Anthropic Messages and OpenAI Responses,
streamed), and the OpenAI chat stream format from recorded lines."""

from __future__ import annotations

import json

import pytest

from skillassay.definitions.agent_eval import Criterion
from skillassay.graders import judge
from skillassay.graders.base import HarnessFault
from skillassay.graders.judge import JudgeConfig
from skillassay.testing.model_server import ModelServer
from skillassay.testing.script import Script

APP = {"calc.py": "def add(a, b):\n    return a + b\n"}
CHANGED = {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}
CRITERION = Criterion(
    id="follows_style",
    description="Follows the module's style",
    weight=10,
    grader="llm_judge",
    options={"question": "Does the new function follow the existing style?"},
)


def judgement(score=0.75, quotes=("return a - b",), reasoning="Same style as add."):
    return {"score": score, "quotes": list(quotes), "reasoning": reasoning}


def anthropic_script(sid: str, verdict: dict) -> Script:
    return Script.model_validate(
        {"id": sid, "turns": [[{"tool_use": {"name": "record_judgement", "input": verdict}}]]}
    )


def openai_script(sid: str, verdict: dict) -> Script:
    return Script.model_validate(
        {"id": sid, "turns": [[{"function_call": {"name": "record_judgement", "arguments": verdict}}]]}
    )


@pytest.fixture(scope="module")
def server():
    with ModelServer() as s:
        yield s


def grade(make_ctx, config):
    ctx = make_ctx(APP, CHANGED)
    ctx.judge_config = config
    return judge.grade(CRITERION, ctx)


def test_anthropic_judge_with_a_verified_quote(server, make_ctx, monkeypatch):
    sid = server.add_script(anthropic_script("judge-ok", judgement()))
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test-123")
    config = JudgeConfig(
        provider="anthropic", model="claude-test", base_url=server.base_url(sid), api_key_env="TEST_JUDGE_KEY"
    )
    r = grade(make_ctx, config)
    assert r.fraction == 0.75, r.evidence
    assert 'quote: "return a - b"' in r.evidence
    (req,) = server.conversation_requests(sid)
    assert req.api == "anthropic" and req.body["stream"] is True
    assert req.body["tool_choice"] == {"type": "tool", "name": "record_judgement"}
    assert (
        "Does the new function follow the existing style?" in req.text() and "+    return a - b" in req.text()
    )


def test_openai_responses_judge(server, make_ctx):
    sid = server.add_script(openai_script("judge-openai", judgement(score=1.0, quotes=["def sub(a, b):"])))
    config = JudgeConfig(provider="openai-responses", model="gpt-test", base_url=server.base_url(sid) + "/v1")
    r = grade(make_ctx, config)
    assert r.fraction == 1.0, r.evidence
    (req,) = server.conversation_requests(sid)
    assert req.api == "openai" and req.body["stream"] is True


# A judge that fails is the harness's failure: it raises HarnessFault, which the engine records as a harness
# failure (the run becomes a harness_error, never a zero for the agent).
def test_quote_not_found_verbatim_is_a_harness_failure(server, make_ctx):
    sid = server.add_script(anthropic_script("judge-liar", judgement(quotes=["return a * b"])))
    with pytest.raises(HarnessFault, match=r"quoted something not in the material.*a \* b"):
        grade(make_ctx, JudgeConfig(model="claude-test", base_url=server.base_url(sid)))


def test_judgement_without_quotes_is_a_harness_failure(server, make_ctx):
    sid = server.add_script(anthropic_script("judge-noquote", judgement(quotes=[])))
    with pytest.raises(HarnessFault, match="not a valid judgement"):
        grade(make_ctx, JudgeConfig(model="claude-test", base_url=server.base_url(sid)))


def test_judge_http_error_is_a_harness_failure(server, make_ctx):
    sid = server.add_script(Script.model_validate({"id": "judge-500", "turns": [{"error": 500}]}))
    with pytest.raises(HarnessFault, match="HTTP 500"):
        grade(make_ctx, JudgeConfig(model="claude-test", base_url=server.base_url(sid)))


def test_unreachable_judge_is_a_harness_failure(make_ctx):
    with pytest.raises(HarnessFault, match="could not reach the judge"):
        grade(make_ctx, JudgeConfig(model="m", base_url="http://127.0.0.1:9", timeout=2))


def test_no_judge_configured(make_ctx):
    with pytest.raises(HarnessFault, match="no LLM judge configured"):
        grade(make_ctx, None)


def test_no_judge_configured_through_evaluate(tmp_path):
    from process_helpers import make_definition, write_tree

    from skillassay.graders import evaluate

    d = make_definition(tmp_path, criteria=[CRITERION])
    r = evaluate(
        d, write_tree(tmp_path / "p", APP), write_tree(tmp_path / "m", CHANGED), None, tmp_path / "w"
    )
    [failure] = r.failures
    assert failure.stage == "grader:follows_style" and "no LLM judge configured" in failure.message


def test_config_from_env():
    assert JudgeConfig.from_env({}) is None
    c = JudgeConfig.from_env(
        {
            "SKILLASSAY_JUDGE_MODEL": "m",
            "SKILLASSAY_JUDGE_PROVIDER": "openai-chat",
            "SKILLASSAY_JUDGE_BASE_URL": "http://127.0.0.1:1/v1",
            "SKILLASSAY_JUDGE_API_KEY_ENV": "MY_KEY",
        }
    )
    assert c.url == "http://127.0.0.1:1/v1/chat/completions"
    assert c.headers({"MY_KEY": "k"})["authorization"] == "Bearer k"
    assert JudgeConfig(model="m").url == "https://api.anthropic.com/v1/messages"
    assert "x-api-key" not in JudgeConfig(model="m").headers({})


def test_openai_chat_stream():
    chunks = [
        {
            "choices": [
                {
                    "delta": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "record_judgement", "arguments": ""},
                            }
                        ],
                    }
                }
            ]
        },
        {
            "choices": [
                {"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"score": 0.5, '}}]}}
            ]
        },
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "function": {"arguments": '"quotes": ["x"], "reasoning": "r"}'}}
                        ]
                    }
                }
            ]
        },
    ]
    lines = [line for c in chunks for line in (f"data: {json.dumps(c)}", "")] + ["data: [DONE]", ""]
    raw, _text = judge.read_stream("openai-chat", judge.sse_events(iter(lines)))
    assert judge.Judgement.model_validate_json(raw).score == 0.5


def test_sse_parsing_and_text_fallback():
    lines = [
        "event: content_block_delta",
        'data: {"type": "content_block_delta", "index": 0, "delta": {"type": '
        '"text_delta", "text": "{\\"score\\": 1, \\"quotes\\": [\\"q\\"]}"}}',
        "",
        ": keep-alive",
        "",
    ]
    raw, text = judge.read_stream("anthropic", judge.sse_events(iter(lines)))
    assert raw is None and judge._json_in_text(text) == '{"score": 1, "quotes": ["q"]}'


def test_quotes_of_several_diff_lines_without_markers():
    material = (
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,5 @@\n def add(a, b):\n+def sub(a, b):\n+    return a - b\n"
    )
    ok = judge.Judgement(score=1, quotes=["def sub(a, b):\n    return a - b", "+def sub"], reasoning="")
    assert judge.unverified_quotes(ok, material) == []
    bad = judge.Judgement(score=1, quotes=["def sub(a, b):\n    return b - a"], reasoning="")
    assert judge.unverified_quotes(bad, material) == bad.quotes
