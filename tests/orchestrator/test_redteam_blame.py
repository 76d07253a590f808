"""Red team: an agent that fails must not be able to make its failure look like the provider's or the
operator's (an unscored run, rerun by --resume: a free reroll). The model proxy's record decides, so the
record must not be something the agent can write into.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from parts import needs
from providers import StubProvider
from typer.testing import CliRunner

from skillassay.agents.codex import CodexAgent
from skillassay.cli.main import app
from skillassay.testing import ModelServer, Script

runner = CliRunner()

# the agent's last act: a model call whose error answer echoes what it asked for, then a failing exit
ECHO = r"""
import json, os, sys, urllib.request, urllib.error
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", method="POST",
    data=json.dumps({"model": "credit balance is too low", "max_tokens": 8,
                     "messages": [{"role": "user", "content": "hi"}]}).encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
             "content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=30)
except urllib.error.HTTPError as exc:
    print("answered", exc.code, exc.read().decode())
sys.exit(1)
"""


def test_an_echoed_quota_phrase_does_not_make_a_failed_run_unscored(tmp_path: Path, evals_dir: Path) -> None:
    """The provider answers an unknown model with 404 "model: <name>"; the proxy read "credit balance"
    anywhere in the message as the operator's quota running out, so the failed run became a harness error
    (never scored)."""
    blob = base64.b64encode(ECHO.encode()).decode()
    command = f"{sys.executable} -c \"import base64; exec(base64.b64decode('{blob}'))\""
    with ModelServer() as server:
        sid = server.add_script(Script.model_validate({"id": "echo", "models": ["claude-test"], "turns": []}))
        out = runner.invoke(
            app,
            [
                "run",
                str(evals_dir),
                "--agent",
                "command",
                "--command",
                command,
                "--fixtures",
                "flask-py",
                "--layers",
                "rubric",
                "--results",
                str(tmp_path / "r"),
                "--json",
                "--retries",
                "0",
                "--agent-env",
                f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
            ],
        )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    stdout = (tmp_path / "r" / run["run_dir"] / "agent.stdout.log").read_text()
    assert "answered 404" in stdout and "credit balance is too low" in stdout
    calls = [
        json.loads(line)
        for line in (tmp_path / "r" / run["run_dir"] / "model_calls.jsonl").read_text().splitlines()
    ]
    assert [c["error"]["kind"] for c in calls] == ["bad_request"]
    assert run["outcome"] == "agent_error", (run["outcome"], run.get("error"))


# one good model turn, then a burst of token counts until the provider says 429, then a failing exit
BURST = r"""
import json, os, sys, urllib.request, urllib.error

def call(path):
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + path, method="POST",
        data=json.dumps({"model": "claude-opus-5-5", "max_tokens": 8,
                         "messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
                 "content-type": "application/json"})
    try:
        return urllib.request.urlopen(request, timeout=30).status
    except urllib.error.HTTPError as exc:
        return exc.code

print("turn", call("/v1/messages"))
print("counts", [call("/v1/messages/count_tokens") for _ in range(30)].count(429), "answered 429")
sys.exit(1)
"""


def test_a_burst_of_token_counts_does_not_make_a_failed_run_unscored(tmp_path: Path, evals_dir: Path) -> None:
    """An agent bursts /v1/messages/count_tokens until the provider answers 429, then exits 1: the run was a
    provider error (retried, unscored) and the operator's shared rate limit was spent for every other run.
    Only the conversation route decides now, and the proxy rate-limits a run's side routes itself."""
    from skillassay.services.model_proxy.proxy import SIDE_BURST

    blob = base64.b64encode(BURST.encode()).decode()
    command = f"{sys.executable} -c \"import base64; exec(base64.b64decode('{blob}'))\""
    with StubProvider() as provider:
        out = runner.invoke(
            app,
            [
                "run",
                str(evals_dir),
                "--agent",
                "command",
                "--command",
                command,
                "--fixtures",
                "flask-py",
                "--layers",
                "rubric",
                "--json",
                "--results",
                str(tmp_path / "r"),
                "--retries",
                "1",
                "--retry-delay",
                "0",
                "--model-upstream",
                provider.url,
            ],
        )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    assert "counts 30 answered 429" in (tmp_path / "r" / run["run_dir"] / "agent.stdout.log").read_text()
    assert run["outcome"] == "agent_error", (run["outcome"], run.get("error"))
    assert len(run["attempts"]) == 1 and run["verdict"] is not None  # scored, not retried
    # past the run's burst (and what refilled meanwhile, one every 2 s) the rest never left the proxy
    reached = provider.paths.count("/v1/messages/count_tokens")
    assert SIDE_BURST <= reached < 30 and reached + run["model_usage"]["refused_requests"] == 30


def test_the_providers_own_quota_answers_still_read_as_quota() -> None:
    """What the providers really send when the operator's account is out of credit stays the operator's
    problem.
    """
    from skillassay.usage import classify_answer

    anthropic = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Your credit balance is too low to access the Anthropic API.",
        },
    }
    openai = {
        "error": {
            "type": "insufficient_quota",
            "code": "insufficient_quota",
            "message": "You exceeded your current quota, please check your plan and billing details.",
        }
    }
    echo = {
        "error": {
            "type": "invalid_request_error",
            "code": "model_not_found",
            "message": "The model `you exceeded your current quota` does not exist.",
        }
    }
    assert classify_answer(400, json.dumps(anthropic).encode()) == "quota_exceeded"
    assert classify_answer(429, json.dumps(openai).encode()) == "quota_exceeded"
    assert classify_answer(404, json.dumps(echo).encode()) == "bad_request"
    assert (
        classify_answer(529, b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
        == "overloaded"
    )


@needs(CodexAgent().binary is not None, "the pinned codex CLI (npm ci --prefix node)")
def test_a_rewritten_session_file_does_not_make_a_skill_run_unscored(
    tmp_path: Path, evals_dir: Path, repo_root
) -> None:
    """Codex lists the skills it has to the model, and records that in its session file, in the agent's own
    home. A command that deletes the skill's line from that file made the arm check fail ("the CLI did not
    report loading the skill"): a harness error, never scored, rerun by --resume. The list is now read from
    the first model request as the proxy received it."""
    rewrite = (
        'f=$(find "$CODEX_HOME/sessions" -name "rollout-*.jsonl" | head -1); '
        'grep -v "SKILL.md" "$f" > "$f.new"; mv "$f.new" "$f"; echo rewritten'
    )
    with ModelServer() as server:
        sid = server.add_script(
            Script.model_validate({"id": "arm", "turns": [[{"exec": rewrite}]], "final_text": "Done."})
        )
        out = runner.invoke(
            app,
            [
                "run",
                str(evals_dir),
                "--agent",
                "codex",
                "--skill",
                str(repo_root / "examples" / "skills" / "seam-lock-access"),
                "--fixtures",
                "flask-py",
                "--layers",
                "rubric",
                "--results",
                str(tmp_path / "r"),
                "--json",
                "--timeout",
                "120",
                "--retries",
                "0",
                "--agent-env",
                f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
                "--agent-env",
                "SKILLASSAY_MAX_RETRIES=1",
            ],
        )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    # rewritten
    assert "SKILL.md" not in (tmp_path / "r" / run["run_dir"] / "codex.session.jsonl").read_text()
    assert run["outcome"] == "completed", (run["outcome"], run.get("error"))
    assert run["arm"]["ok"] and run["arm"]["reported_source"] == "model request"
    assert "seam-lock-access" in run["arm"]["reported"]


CHAIN = r"""
import os, sys
for _ in range(1100):  # each process forks the next and exits: a chain 1,100 deep, never 2 alive at once
    if os.fork():
        os._exit(0)
os.path.exists(sys.argv[1])  # the last of them reaches for the golden solution
open("chain-done", "w").write("ok")
"""


def test_a_deep_fork_chain_neither_breaks_the_audit_nor_hides_a_reach_for_the_suite(
    tmp_path: Path, evals_dir: Path
) -> None:
    """The syscall audit walked the agent's process tree recursively: a chain of 1,100 forks (each process
    forks the next and exits) raised RecursionError, a harness error: the run was never scored, and what
    the chain did (here: reach for the golden solution, forbidden in every eval) was never seen."""
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(evals_dir, suite)
    golden = suite / "fixtures" / "flask-py" / "test_golden" / "app.py"
    blob = base64.b64encode(CHAIN.encode()).decode()
    command = "bash -c " + json.dumps(
        f"{sys.executable} -c \"import base64; exec(base64.b64decode('{blob}'))\" {golden}; "
        "while [ ! -f chain-done ]; do sleep 0.2; done"
    )
    out = runner.invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            "command",
            "--command",
            command,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "r"),
            "--json",
            "--timeout",
            "120",
        ],
    )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    assert run["outcome"] == "completed", (run["outcome"], run.get("error"))
    assert "reached_for_suite" in run["verdict"]["forbidden_observed"]
