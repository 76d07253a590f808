"""`skillassay run` and the agent's path to its model: every run goes through the job's model proxy, which
holds the real key, meters and prices every call (run.json, job.json, summary, compare), stops the job at
--max-cost, and tells the trial when the provider (not the agent) failed a run, which is then tried again
from scratch.

The agent here is the command agent running a tiny Python client of the Anthropic Messages API (fast, and
it talks to whatever endpoint it is given, like any SDK-based agent); the real CLIs take the same path in
test_e2e_agents.py and tests/agents/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.agents.base import AgentResult
from skillassay.cli.main import app
from skillassay.orchestrator.attempts import RetryPolicy, judge, run_attempts
from skillassay.services.model_proxy import GrantReport
from skillassay.store.live import live_path, read_live
from skillassay.testing import ModelServer, parse_scripts
from skillassay.transcripts import Transcript
from skillassay.usage import ModelUsage, ProviderError

runner = CliRunner()
REAL_KEY = "sk-ant-" + "api03-operator-key-for-the-proxy-only-0123456789"
USAGE = {
    "input_tokens": 1000,
    "output_tokens": 100,
    "cache_read_input_tokens": 500,
    "cache_creation_input_tokens": 200,
}
# claude-opus-5-5 in the shipped prices: $4 in, $20 out, $0.20 cache read, $5 cache write per million tokens
CALL_COST = (1000 * 4 + 100 * 20 + 500 * 0.2 + 200 * 5) / 1e6

CLIENT = r"""
import json, os, sys, urllib.error, urllib.request
calls = int(sys.argv[1])
for i in range(calls):
    body = {"model": "claude-opus-5-5", "max_tokens": 50, "stream": False,
            "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "go"}] + [{"role": "assistant", "content": "ok"},
                                                               {"role": "user", "content": "more"}] * i}
    req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"],
                                          "content-type": "application/json", "anthropic-version": "2023-06-01"})
    try:
        urllib.request.urlopen(req, timeout=30).read()
    except urllib.error.HTTPError as exc:
        print("the model failed:", exc.code)
        sys.exit(1)
open("out.txt", "w").write("done\n")
print("wrote out.txt; my key was", os.environ["ANTHROPIC_API_KEY"])
"""  # noqa: E501 - code inside a string, kept as written


@pytest.fixture
def client(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("agent") / "client.py"  # outside the results: no mount may uncover them
    path.write_text(CLIENT)
    return path


@pytest.fixture
def server():
    with ModelServer() as s:
        yield s


def run(evals_dir, results, client, calls, upstream, *extra) -> tuple[int, dict]:
    result = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            f"{sys.executable} {client} {calls}",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(results),
            "--json",
            "--model-upstream",
            upstream,
            "--agent-env",
            f"ANTHROPIC_API_KEY={REAL_KEY}",
            "--retry-delay",
            "0",
            "--mount",
            str(client),
            *extra,
        ],
    )  # a sealed agent sees only what it is given: the client script too
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        raise AssertionError(result.output) from None


def test_cost_is_measured_per_run_and_per_job_and_no_key_is_stored(server, client, tmp_path, evals_dir):
    (script,) = parse_scripts({"id": "cost", "turns": [{"actions": [{"text": "ok"}], "usage": USAGE}] * 3})
    server.add_script(script)
    code, out = run(evals_dir, tmp_path, client, 3, server.base_url("cost"), "--runs", "2")
    assert code == 0, out
    for r in out["runs"]:
        assert r["outcome"] == "completed", r["error"]
        u = r["model_usage"]
        assert u["requests"] == 3 and u["cost_usd"] == pytest.approx(3 * CALL_COST)
        assert (u["input_tokens"], u["cache_read_input_tokens"]) == (3000, 1500)
        assert [a["status"] for a in r["attempts"]] == ["completed"]
        calls = (tmp_path / r["run_dir"] / "model_calls.jsonl").read_text().splitlines()
        assert [json.loads(c)["cost_usd"] for c in calls] == pytest.approx([CALL_COST] * 3)
    assert out["model_usage"]["cost_usd"] == pytest.approx(6 * CALL_COST)
    [summary] = out["evals"]
    assert summary["cost"]["total_usd"] == pytest.approx(6 * CALL_COST) and summary["cost"]["complete"]
    job = json.loads((tmp_path / out["job_id"] / "job.json").read_text())
    assert job["model_usage"]["requests"] == 6

    # the real key went upstream, from the proxy; the agent saw only its run's token (and printed it:
    # scrubbed)
    upstream = server.requests("cost", api="anthropic")
    assert {r.headers["x-api-key"] for r in upstream} == {REAL_KEY}
    assert "my key was [REDACTED]" in json.dumps(out["runs"][0]["transcript"])
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert REAL_KEY.encode() not in path.read_bytes(), path

    # compare: cost per pass, each side
    result = runner.invoke(
        app, ["compare", out["job_id"], out["job_id"], "--results", str(tmp_path), "--json"]
    )
    cost = json.loads(result.stdout)["cost"]["a"]
    assert cost["total_usd"] == pytest.approx(6 * CALL_COST) and cost["runs"] == 2
    passes = sum(1 for r in out["runs"] if r["verdict"] and r["verdict"]["passed"])
    assert cost["passes"] == passes
    assert cost["per_pass_usd"] == (pytest.approx(6 * CALL_COST / passes) if passes else None)


def test_a_run_the_provider_failed_is_tried_again_from_scratch(server, client, tmp_path, evals_dir):
    # the 2nd call answers 529 twice (first two attempts), then works: the third attempt completes
    turns = [
        {"actions": [{"text": "a"}], "usage": USAGE},
        {"error": 529, "fail_times": 2, "actions": [{"text": "b"}], "usage": USAGE},
    ]
    (script,) = parse_scripts({"id": "flaky", "turns": turns})
    server.add_script(script)
    code, out = run(evals_dir, tmp_path, client, 2, server.base_url("flaky"), "--retries", "2")
    assert code == 0, out
    [r] = out["runs"]
    assert r["outcome"] == "completed", r["error"]
    assert [(a["status"], a["agent_status"], a["error_kind"]) for a in r["attempts"]] == [
        ("provider_error", "agent_error", "overloaded"),
        ("provider_error", "agent_error", "overloaded"),
        ("completed", "completed", None),
    ]
    assert [a["kept"] for a in r["attempts"]] == ["attempt-1", "attempt-2", None]
    run_dir = tmp_path / r["run_dir"]
    assert "the model failed: 529" in (run_dir / "attempt-1" / "agent.stdout.log").read_text()
    # every attempt's calls were paid for: 2 + 2 + 2 calls, 4 of them answered
    u = r["model_usage"]
    assert u["requests"] == 6 and u["provider_error_count"] == 2
    assert u["cost_usd"] == pytest.approx(4 * CALL_COST)
    assert [a["model_usage"]["requests"] for a in r["attempts"]] == [2, 2, 2]


def test_retries_run_out_into_a_provider_error_that_resume_reruns(server, client, tmp_path, evals_dir):
    (script,) = parse_scripts({"id": "down", "turns": [{"error": 500}]})
    server.add_script(script)
    _code, out = run(evals_dir, tmp_path, client, 1, server.base_url("down"), "--retries", "1")
    [r] = out["runs"]
    # not scored, not counted
    assert r["outcome"] == "provider_error" and "provider error after 2 attempt(s)" in r["error"]
    assert r["verdict"] is None and len(r["attempts"]) == 2
    assert [e["kind"] for e in r["model_usage"]["provider_errors"]] == ["server_error"] * 2
    assert out["evals"][0]["graded"] == 0 and out["evals"][0]["outcomes"] == {"provider_error": 1}
    from skillassay.store import open as open_store

    # --resume reruns it
    assert open_store(tmp_path).missing_runs(out["job_id"]) == [("flask-py", 1, "skill")]


def test_an_agent_claiming_a_provider_error_gets_no_reroll(tmp_path, evals_dir, server):
    """A fake Claude Code that calls its model once, fine, then reports "API Error: 529 overloaded": the proxy
    saw no provider error, so the run is the agent's own failure, scored, not retried."""
    (script,) = parse_scripts({"id": "liar", "turns": [[{"text": "ok"}]]})
    server.add_script(script)
    fake = tmp_path / "claude"
    fake.write_text(
        f"#!{sys.executable}\n"
        + CLIENT.replace("calls = int(sys.argv[1])", "calls = 1").replace(
            'open("out.txt", "w").write("done\\n")',
            'print(json.dumps({"type": "result", "subtype": "success", "is_error": True, '
            '"api_error_status": 529, '
            '"result": "API Error: 529 Overloaded"}))\nsys.exit(1)',
        )
    )
    fake.chmod(0o755)
    result = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "claude-code",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "r"),
            "--json",
            "--model-upstream",
            server.base_url("liar"),
            "--retries",
            "2",
            "--retry-delay",
            "0",
        ],
        env={"SKILLASSAY_CLAUDE_BIN": str(fake)},
    )
    [r] = json.loads(result.stdout)["runs"]
    assert [(a["status"], a["agent_status"]) for a in r["attempts"]] == [("agent_error", "provider_error")]
    assert "never saw" in r["attempts"][0]["error"]
    assert r["outcome"] == "agent_error" and r["verdict"] is not None  # scored: the agent's failure


def test_max_cost_stops_starting_runs_and_resume_goes_on(server, client, tmp_path, evals_dir):
    (script,) = parse_scripts({"id": "budget", "turns": [{"actions": [{"text": "a"}], "usage": USAGE}]})
    server.add_script(script)
    # one run costs CALL_COST; the budget is spent by the first run, so the other two never start
    code, out = run(
        evals_dir,
        tmp_path,
        client,
        1,
        server.base_url("budget"),
        "--runs",
        "3",
        "--max-cost",
        f"{CALL_COST / 2:.8f}",
    )
    assert code == 0, out
    assert len(out["runs"]) == 1 and out["status"] == "stopped"
    assert "2 run(s) not started" in out["stop_reason"]
    job_id = out["job_id"]
    # the live view's state says so too: the proxy's spend against --max-cost, the runs kept from starting
    live = read_live(live_path(tmp_path, job_id))
    assert (live.status, live.done, live.not_started) == ("stopped", 1, 2)
    assert live.spent_usd == pytest.approx(CALL_COST) and live.max_cost == pytest.approx(CALL_COST / 2)
    # a higher limit on --resume: the rest run, and the job's spend adds up over both sessions
    result = runner.invoke(
        app,
        [
            "run",
            "--resume",
            job_id,
            "--results",
            str(tmp_path),
            "--json",
            "--max-cost",
            "1",
            "--agent-env",
            f"ANTHROPIC_API_KEY={REAL_KEY}",
        ],
    )
    out2 = json.loads(result.stdout)
    assert out2["status"] == "finished" and len(out2["runs"]) == 3
    assert out2["model_usage"]["cost_usd"] == pytest.approx(3 * CALL_COST)


def test_a_job_without_a_key_for_the_agents_provider_is_refused(tmp_path, evals_dir, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    result = runner.invoke(app, ["run", str(evals_dir), "--agent", "codex", "--results", str(tmp_path)])
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output and "model proxy" in result.output


# -- the retry rule, unit by unit ----------------------------------------------------------------------------


def _result(status="agent_error", kind=None, is_error=True):
    return AgentResult(status=status, error_kind=kind, transcript=Transcript(agent="x", is_error=is_error))


def _report(*errors: ProviderError, calls: int = 1, paths: tuple[str, ...] = ()) -> GrantReport:
    from datetime import UTC, datetime

    from skillassay.usage import ModelCall

    usage = ModelUsage()
    out = []
    for i in range(calls):
        err = errors[i] if i < len(errors) else None  # None among them: a call that succeeded
        path = paths[i] if i < len(paths) else "/v1/messages"
        call = ModelCall(
            at=datetime(2026, 1, 1, 0, 0, i, tzinfo=UTC),
            api="anthropic",
            path=path,
            status=err.http_status if err else 200,
            error=err,
        )
        usage.add_call(call)
        out.append(call)
    return GrantReport(run_id="r", usage=usage, calls=out)


def test_the_proxy_is_the_authority_on_provider_errors():
    overloaded = ProviderError(kind="overloaded", http_status=529)
    refused = ProviderError(kind="auth_failed", http_status=401)
    # the CLI died right after the provider failed it, without saying so: a provider error
    assert judge(_result(), _report(overloaded))[0] == "provider_error"
    # the CLI says provider error, the proxy agrees
    assert judge(_result("provider_error", "overloaded"), _report(overloaded))[0] == "provider_error"
    # the CLI says provider error, the proxy saw none: the agent's own failure
    assert judge(_result("provider_error", "overloaded"), _report())[0] == "agent_error"
    # ... or it never reached the proxy at all: the harness's (its path to the model is the harness's job)
    assert judge(_result("provider_error", "connection"), _report(calls=0))[0] == "harness_error"
    # an error the agent recovered from does not make its later crash the provider's
    assert judge(_result(), _report(overloaded, calls=2))[0] == "agent_error"
    # the operator's key refused: the harness's, never retried
    assert judge(_result(), _report(refused))[0] == "harness_error"
    # a side route the agent burst until the provider said 429: the agent's, whatever the CLI says
    limited = ProviderError(kind="rate_limited", http_status=429)
    side = _report(None, limited, calls=2, paths=("/v1/messages", "/v1/messages/count_tokens"))
    assert judge(_result(), side)[0] == "agent_error"
    assert judge(_result("provider_error", "rate_limited"), side)[0] == "agent_error"
    # a flood of model calls the proxy had to hold back, then the provider's 429: the flood spent the limit
    flooded = _report(limited)
    assert judge(_result("provider_error", "rate_limited"), flooded)[0] == "provider_error"
    flooded.usage.refused_requests = 12
    assert judge(_result("provider_error", "rate_limited"), flooded)[0] == "agent_error"
    # a success stays a success, and a timeout the agent's
    assert judge(_result("completed", is_error=False), _report(overloaded))[0] == "completed"
    assert judge(_result("timed_out"), _report(overloaded))[0] == "timed_out"


def test_backoff_is_exponential_capped_and_jittered():
    import random

    policy = RetryPolicy(retries=5, base_delay=2, max_delay=10)
    rng = random.Random(7)
    for retry, cap in [(1, 2), (2, 4), (3, 8), (4, 10), (5, 10)]:
        delays = [policy.delay(retry, rng) for _ in range(200)]
        assert cap / 2 <= min(delays) and max(delays) <= cap
        assert max(delays) - min(delays) > cap / 4  # jittered, not in lockstep

    slept: list[float] = []
    outcome = run_attempts(
        lambda n: (
            _result("provider_error", "rate_limited"),
            _report(ProviderError(kind="rate_limited", http_status=429)),
        ),
        RetryPolicy(retries=3, base_delay=1, max_delay=100),
        sleep=slept.append,
        rng=rng,
    )
    assert len(outcome.attempts) == 4 and outcome.status == "provider_error"
    assert len(slept) == 3 and all(
        lo <= s <= hi for s, (lo, hi) in zip(slept, [(0.5, 1), (1, 2), (2, 4)], strict=False)
    )
    # the job's budget ends retries early
    outcome = run_attempts(
        lambda n: (
            _result("provider_error", "rate_limited"),
            _report(ProviderError(kind="rate_limited", http_status=429)),
        ),
        RetryPolicy(retries=3, base_delay=0),
        may_retry=lambda: False,
        sleep=slept.append,
    )
    assert len(outcome.attempts) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "key_env", "header"),
    [("claude-code", "ANTHROPIC_API_KEY", "x-api-key"), ("codex", "OPENAI_API_KEY", "authorization")],
)
def test_the_real_clis_through_the_proxy(server, tmp_path, evals_dir, agent, key_env, header):
    real = ("sk-ant-" if agent == "claude-code" else "sk-proj-") + "operator-real-key-0123456789abcdef"
    (script,) = parse_scripts(
        {
            "id": agent,
            "turns": [{"actions": [{"text": "Looked; nothing to change."}], "usage": USAGE}],
            "usage": USAGE,
        }
    )
    server.add_script(script)
    result = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            agent,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path),
            "--json",
            "--model-upstream",
            server.base_url(agent),
            "--agent-env",
            f"{key_env}={real}",
            "--agent-env",
            "SKILLASSAY_MAX_RETRIES=0",
        ],
    )
    [r] = json.loads(result.stdout)["runs"]
    assert r["outcome"] == "completed" and r["empty_diff"], r["error"]
    calls = server.conversation_requests(agent)
    model = calls[0].body["model"]
    from skillassay.usage import load_prices

    price = load_prices().price(model)
    assert price is not None, f"{model}: the CLI's default model should be in the shipped price table"
    from skillassay.usage import TokenCounts

    per_call = price.cost(
        TokenCounts(
            input_tokens=1000 - (500 if agent == "codex" else 0),
            output_tokens=100,
            cache_read_input_tokens=500,
            cache_creation_input_tokens=200 if agent == "claude-code" else 0,
        )
    )
    u = r["model_usage"]
    assert u["requests"] == len(server.requests(agent)) and u["cost_usd"] == pytest.approx(
        len(calls) * per_call
    )
    expected = real if header == "x-api-key" else f"Bearer {real}"
    assert {c.headers.get(header) for c in server.requests(agent)} == {expected}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert real.encode() not in path.read_bytes(), path
