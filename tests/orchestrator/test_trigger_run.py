"""A trigger suite run by `skillassay run` with the real CLIs against the scripted model server (one script
per prompt, chosen by the prompt's text): stored like any job (one run folder per prompt x run), resumable,
reported, and two versions of the skill compared prompt by prompt."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.testing import ModelServer, parse_scripts

pytestmark = pytest.mark.slow
runner = CliRunner()

SUITE = """
id = "demo"
title = "demo skill triggers"
skill = "../../skill"
runs = 2
[budget]
max_turns = 4

[[prompts]]
id = "explicit-greet"
category = "explicit"
should_trigger = true
fixture = "tiny"
prompt = "Use the demo-skill to write a greeting file. [p1]"

[[prompts]]
id = "implicit-late"
category = "implicit"
should_trigger = true
prompt = "Create a greeting file for the team. [p2]"

[[prompts]]
id = "negative-summary"
category = "negative"
should_trigger = false
prompt = "Summarise this repository. [p3]"
"""


def skill(folder: Path, description: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: demo-skill\ndescription: {description}\n---\n# Demo\nSay hi.\n"
    )
    return folder


def claude_scripts(version: str) -> list:
    """v1: the skill at once (p1); after two other tool calls (p2); never (p3). v2: p2 never, p3 falsely."""
    use = {"tool_use": {"name": "Skill", "input": {"skill": "demo-skill"}}}
    bash = lambda c: {"tool_use": {"name": "Bash", "input": {"command": c}}}  # noqa: E731
    p2 = (
        [[bash("ls")], [bash("git status")], [bash("cat ~/.claude/skills/demo-skill/SKILL.md")]]
        if version == "v1"
        else [[bash("ls")]]
    )
    p3 = [[bash("ls ~/.claude/skills")]] if version == "v1" else [[use]]
    return parse_scripts(
        [
            {"id": "p1", "match": "[p1]", "turns": [[use], [bash("ls")], [bash("pwd")], [bash("date")]]},
            {"id": "p2", "match": "[p2]", "turns": p2},
            {"id": "p3", "match": "[p3]", "turns": p3},
        ]
    )


@pytest.fixture(scope="module")
def server():
    with ModelServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("trigger")
    skill(root / "skill", "Writes greeting files. Use when asked to create a greeting file.")
    skill(root / "skill-v2", "Greeting helper.")
    (root / "suite" / "fixtures" / "tiny" / "app").mkdir(parents=True)
    (root / "suite" / "fixtures" / "tiny" / "app" / "main.py").write_text("print('hi')\n")
    (root / "suite" / "trigger-evals").mkdir()
    path = root / "suite" / "trigger-evals" / "demo.toml"
    path.write_text(textwrap.dedent(SUITE))
    return path


def run(args: list[str], server) -> dict:
    out = runner.invoke(
        app,
        [
            "run",
            *args,
            "--json",
            "--timeout",
            "120",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url()}",
            "--agent-env",
            "SKILLASSAY_MAX_RETRIES=0",
        ],
    )
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_claude_trigger_job_resume_report_and_compare(server, suite, tmp_path):
    results = tmp_path / "results"
    for s in claude_scripts("v1"):
        server.add_script(s)
    a = run([str(suite), "--agent", "claude-code", "--results", str(results)], server)
    runs = {(r["eval_id"], r["run_index"]): r for r in a["runs"]}
    assert len(runs) == 6 and all(r["outcome"] == "completed" for r in runs.values())
    # one run folder per prompt x run, the skill installed where Claude Code discovers it
    first = runs[("demo.implicit-late", 1)]
    assert (results / first["run_dir"] / "transcript.raw.jsonl").is_file()
    use = first["skill_use"]
    assert use["location"] == "$CLAUDE_CONFIG_DIR/skills/demo-skill" and use["listed"] is True
    # the case that defeats other tools: two other tool calls, then the skill read at the third turn
    assert (use["first"]["how"], use["first"]["call_index"], use["first"]["turn"]) == ("shell", 2, 3)
    assert use["first"]["seconds"] > 0 and use["first"]["tokens"] > 0
    assert first["trigger"]["triggered"] and first["verdict"]["passed"]
    # p1 used the skill at once: the run stopped there, not after its four scripted turns
    p1 = runs[("demo.explicit-greet", 1)]
    assert p1["trigger"]["stopped"] == "triggered" and p1["skill_use"]["first"]["turn"] == 1
    assert all(not r["trigger"]["triggered"] for (e, _), r in runs.items() if e == "demo.negative-summary")
    overall = a["trigger"]["overall"]
    assert overall["confusion"] == {"tp": 4, "fp": 0, "fn": 0, "tn": 2} and overall["f1"]["value"] == 1.0

    # resume: a run lost from the index and the disk is the only one run again
    lost = runs[("demo.negative-summary", 2)]
    with sqlite3.connect(results / "skillassay.db") as db:
        db.execute(
            "DELETE FROM runs WHERE job_id = ? AND eval_id = ? AND run_index = 2",
            (a["job_id"], "demo.negative-summary"),
        )
    (results / lost["run_dir"] / "run.json").unlink()
    before, others = len(server.conversation_requests("p3")), len(server.conversation_requests("p2"))
    out = runner.invoke(
        app,
        [
            "run",
            "--resume",
            a["job_id"],
            "--results",
            str(results),
            "--json",
            "--agent-env",
            f"SKILLASSAY_MODEL_BASE_URL={server.base_url()}",
        ],
    )
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["runs"]) == 6 and len(server.conversation_requests("p3")) == before + 2
    assert len(server.conversation_requests("p2")) == others  # the other prompts were not run again

    # a second version of the skill (another description), with which the model behaves differently
    for s in claude_scripts("v2"):
        server.add_script(s)
    b = run(
        [
            str(suite),
            "--agent",
            "claude-code",
            "--skill",
            str(suite.parents[2] / "skill-v2"),
            "--runs",
            "1",
            "--results",
            str(results),
        ],
        server,
    )
    assert b["trigger"]["overall"]["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 0}
    cmp = runner.invoke(app, ["compare", a["job_id"], b["job_id"], "--results", str(results), "--json"])
    assert cmp.exit_code == 0, cmp.output
    t = json.loads(cmp.stdout)["trigger"]
    assert t["pairs"] == 3
    assert [(f["prompt"], f["rate_a"], f["rate_b"], f["better"]) for f in t["flips"]] == [
        ("demo.implicit-late", 1.0, 0.0, False),
        ("demo.negative-summary", 0.0, 1.0, False),
    ]
    f1 = next(d for d in t["overall"] if d["metric"] == "f1")
    assert f1["a"] == 1.0 and f1["b"] == pytest.approx(0.5)
    text = runner.invoke(app, ["compare", a["job_id"], b["job_id"], "--results", str(results)])
    assert "flipped, now wrong" in text.output

    # the web report: a trigger page per job and the comparison with the flipped prompts
    site = tmp_path / "site"
    rep = runner.invoke(
        app, ["report", a["job_id"], b["job_id"], "--results", str(results), "--html", str(site)]
    )
    assert rep.exit_code == 0, rep.output
    job_page = (site / "jobs" / a["job_id"] / "index.html").read_text()
    assert "Does the agent pick the skill up?" in job_page and "Confusion per category" in job_page
    compare_page = next((site / "compare").glob("*.html")).read_text()
    assert "Prompts that flipped" in compare_page and "demo.negative-summary" in compare_page


def test_codex_trigger_job(server, suite, tmp_path):
    for s in parse_scripts(
        [
            {
                "id": "c1",
                "match": "[p1]",
                "turns": [[{"exec": "ls"}], [{"exec": "cat $CODEX_HOME/skills/demo-skill/SKILL.md"}]],
            },
            {
                "id": "c2",
                "match": "[p2]",
                "turns": [[{"exec": "ls ~/.codex/skills"}], [{"exec": "cat README.md"}]],
            },
        ]
    ):
        server.add_script(s)
    for sid in ("p1", "p2", "p3"):  # the Claude scripts answer the same prompts: out of the way
        server.add_script(parse_scripts({"id": sid, "match": f"unused-{sid}"})[0])
    out = run(
        [
            str(suite),
            "--agent",
            "codex",
            "--runs",
            "1",
            "--fixtures",
            "demo.explicit-greet,demo.implicit-late",
            "--results",
            str(tmp_path),
        ],
        server,
    )
    runs = {r["eval_id"]: r for r in out["runs"]}
    hit, miss = runs["demo.explicit-greet"], runs["demo.implicit-late"]
    assert hit["skill_use"]["location"] == "$CODEX_HOME/skills/demo-skill" and hit["skill_use"]["listed"]
    assert (hit["skill_use"]["first"]["turn"], hit["trigger"]["correct"]) == (2, True)
    assert not miss["skill_use"]["used"] and not miss["trigger"]["correct"]
    assert out["trigger"]["overall"]["confusion"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 0}


def test_trigger_jobs_refuse_what_cannot_measure_triggering(suite, tmp_path):
    for args, words in (
        (["--agent", "noop"], "transcript does not show tool calls"),
        (["--agent", "claude-code", "--baseline"], "--baseline"),
        (["--agent", "claude-code", "--skill-mode", "system-prompt"], "system-prompt"),
    ):
        out = runner.invoke(
            app,
            [
                "run",
                str(suite),
                *args,
                "--results",
                str(tmp_path),
                "--agent-env",
                "SKILLASSAY_MODEL_BASE_URL=http://127.0.0.1:9",
            ],
        )
        assert out.exit_code == 2 and words in out.output, out.output
