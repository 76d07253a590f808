"""Nothing secret is stored, in any form: attacks by agents that leak every secret they can get into
everything a run keeps (files, file names, a binary file, a link, git history,
base64/hex/percent-encoded/reversed copies, their output), and by code of the agent that the graders run.
Each place is searched for every form (tests/leaks.py), the index and the HTML report included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from leaks import find_leaks
from parts import REPO, needs
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.testing import ModelServer, Script

runner = CliRunner()
LEAK_AGENT = Path(__file__).parent / "data" / "leak_agent.py"
ENV_DUMP = Path(__file__).parent / "data" / "env_dump.py.txt"  # not collected here: the agent adds it
# the operator's environment: a variable named like a key, and one whose name says nothing but holds a
# password in a URL
OPERATOR_TOKEN = "optok-Zq9vL2mXc8RtY4bNw"
DB_PASSWORD = "Hx7pQw2Lk9Vzr"
DB_URL = f"postgres://admin:{DB_PASSWORD}@db.example.invalid:5432/app"
AGENT_SECRET = "agsec-Mv3Nt8Kp1Wq6Yz0"  # given to the agent with --agent-env
SECRETS = [OPERATOR_TOKEN, DB_PASSWORD, AGENT_SECRET]


def _run(args: list[str]) -> tuple[dict, str]:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout), result.stdout


@pytest.fixture
def operator_env(monkeypatch) -> None:
    monkeypatch.setenv("LEAKTEST_SERVICE_TOKEN", OPERATOR_TOKEN)
    monkeypatch.setenv("LEAKTEST_DATABASE_URL", DB_URL)


def _report(results: Path, out: Path) -> Path:
    result = runner.invoke(app, ["report", "--results", str(results), "--html", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
def test_an_agent_that_leaks_every_secret_everywhere_stores_none(
    operator_env, tmp_path: Path, evals_dir: Path, isolation: str
) -> None:
    """Sealed, the agent has its --agent-env secret and what it is handed; unsealed, it also reads the
    harness's own environment through /proc."""
    results = tmp_path / "results"
    command = f"{sys.executable} {LEAK_AGENT} {{workspace}} {OPERATOR_TOKEN} {DB_URL} {AGENT_SECRET}"
    out, stdout = _run(
        [
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
            str(results),
            "--json",
            "--isolation",
            isolation,
            "--mount",
            str(LEAK_AGENT.parent),
            "--agent-env",
            f"LEAKTEST_DEPLOY_SECRET={AGENT_SECRET}",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed", run.get("error")
    assert find_leaks(results, SECRETS) == []
    assert find_leaks(_report(results, tmp_path / "report"), SECRETS) == []
    assert not any(s in stdout for s in SECRETS)  # the CLI's own output
    page = (tmp_path / "report" / "jobs" / out["job_id"] / "flask-py" / "run_1.html").read_text()
    assert "secrets removed" in page and "workspace/blob.bin</code>: content removed" in page

    run_dir = results / run["run_dir"]
    kept = run_dir / "workspace"
    # the attack happened and the run kept its work, minus the secrets
    assert (kept / "notes.txt").read_text().count("[REDACTED]") >= 4
    assert (kept / "config.py").is_file() and (kept / "encoded.txt").is_file()
    assert not (kept / "blob.bin").exists()  # a binary file holding a secret is not kept
    assert len(list(kept.glob("name-*.txt"))) >= 3 and len(list(kept.glob("dir-*/inside.txt"))) >= 3

    # run.json says what was done where, by kind; never the value
    stored = json.loads((run_dir / "run.json").read_text())
    done = {(r["where"], r["action"]) for r in stored["redactions"]}
    assert {
        ("name", "renamed"),
        ("link", "relinked"),
        ("content", "removed"),
        ("content", "replaced"),
        ("record", "replaced"),
    } <= done
    by_path = {r["path"]: r for r in stored["redactions"]}
    assert {"base64", "hex", "url", "reversed", "raw"} <= set(by_path["workspace/encoded.txt"]["forms"])
    assert by_path["workspace/blob.bin"]["action"] == "removed"
    sources = {s for r in stored["redactions"] for s in r["sources"]}
    assert {
        "env:LEAKTEST_SERVICE_TOKEN",
        "env:LEAKTEST_DATABASE_URL (URL credentials)",
        "agent-env:LEAKTEST_DEPLOY_SECRET",
    } <= sources
    assert "[REDACTED]" in stored["config"]["command"]
    # the kept repository is skillassay's: the pristine commit only, none of the agent's commits
    from skillassay.workspace.workspace import git

    assert git(kept, "log", "--all", "--format=%s").stdout.split() == ["pristine"]


def test_graders_run_the_agents_code_without_the_operators_secrets(
    operator_env, tmp_path: Path, evals_dir: Path
) -> None:
    """The agent's test dumps its whole environment, base64-encoded, into its output: gates and hidden tests
    run it, and their output is kept in process.json. No secret may be in that environment to begin with."""
    results = tmp_path / "results"
    command = f"cp {ENV_DUMP} {{workspace}}/tests/test_env_dump.py"
    out, _ = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            command,
            "--mount",
            str(ENV_DUMP),
            "--fixtures",
            "cancellation-support",
            "--results",
            str(results),
            "--json",
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] in ("completed", "crashed"), run.get("error")
    process = (results / run["run_dir"] / "process.json").read_text()
    assert "DUMPED " in process  # the dump ran, in the gate and the hidden tests
    assert find_leaks(results, [OPERATOR_TOKEN, DB_PASSWORD]) == []


@pytest.mark.slow
@needs((REPO / "node" / "node_modules" / ".bin" / "claude").exists(), "Claude Code (npm ci --prefix node)")
def test_claude_code_leaking_its_secret_stores_none(tmp_path: Path, evals_dir: Path) -> None:
    """The real Claude Code CLI, driven by the scripted model, writes its --agent-env secret into a file, a
    file name, a base64 file and a git commit, prints it, and ends with it in its final message."""
    leak = (
        'printf %s "$LEAKTEST_DEPLOY_SECRET" > leak.txt && touch "name-$LEAKTEST_DEPLOY_SECRET" && '
        'printf %s "$LEAKTEST_DEPLOY_SECRET" | base64 > leak.b64 && git add -A && '
        'git -c user.name=a -c user.email=a@b.invalid commit -qm "key $LEAKTEST_DEPLOY_SECRET" && '
        'echo "the key is $LEAKTEST_DEPLOY_SECRET"'
    )
    script = Script.model_validate(
        {
            "id": "leak",
            "turns": [
                [{"tool_use": {"name": "Bash", "input": {"command": leak, "description": "leak the key"}}}]
            ],
            "final_text": f"Done. For the record, the deploy key is {AGENT_SECRET}.",
        }
    )
    results = tmp_path / "results"
    with ModelServer() as server:
        sid = server.add_script(script)
        out, stdout = _run(
            [
                str(evals_dir),
                "--agent",
                "claude-code",
                "--fixtures",
                "flask-py",
                "--layers",
                "rubric",
                "--results",
                str(results),
                "--json",
                "--timeout",
                "180",
                "--agent-env",
                f"SKILLASSAY_MODEL_BASE_URL={server.base_url(sid)}",
                "--agent-env",
                "SKILLASSAY_MAX_RETRIES=1",
                "--agent-env",
                f"LEAKTEST_DEPLOY_SECRET={AGENT_SECRET}",
            ]
        )
    [run] = out["runs"]
    assert run["outcome"] == "completed", run.get("error")
    assert find_leaks(results, [AGENT_SECRET]) == []
    assert find_leaks(_report(results, tmp_path / "report"), [AGENT_SECRET]) == []
    assert AGENT_SECRET not in stdout
    kept = results / run["run_dir"] / "workspace"
    assert (kept / "leak.txt").read_text() == "[REDACTED]"  # the command ran, its output was scrubbed
    assert (kept / "name-REDACTED").exists()
    assert run["transcript"]["final_message"].endswith("the deploy key is [REDACTED].")
