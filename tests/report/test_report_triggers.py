"""Report pages for skill use: a trigger job's confusion tables and prompts, two versions compared with the
prompts that flipped, and the share of ordinary runs that used the skill with the pass rate either way.
Everything the agent wrote is escaped; the policy that forbids scripts stays on every page."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from skillassay import store
from skillassay.cli.main import app
from skillassay.report.site import CSP, build_site
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.files import run_dir_rel, write_job_file, write_run_file
from skillassay.store.records import JobRecord, RunRecord, TranscriptSummary, TriggerOutcome
from skillassay.triggers import SkillEvent, SkillUse, TriggerBudget

HOSTILE = "cat ~/.claude/skills/demo/SKILL.md <script>alert(1)</script>"
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
runner = CliRunner()

# prompt -> (category, should trigger, triggered per run) for two versions of a skill
VERSIONS = {
    "a": {
        "demo.explicit": ("explicit", True, [True, True]),
        "demo.implicit": ("implicit", True, [False, False]),
        "demo.contextual": ("contextual", True, [True, False]),
        "demo.negative": ("negative", False, [True, True]),
    },
    "b": {
        "demo.explicit": ("explicit", True, [True, True]),
        "demo.implicit": ("implicit", True, [True, True]),
        "demo.contextual": ("contextual", True, [True, False]),
        "demo.negative": ("negative", False, [False, False]),
    },
}


def use(used: bool, turn: int = 2) -> SkillUse:
    event = SkillEvent(
        how="shell",
        tool="Bash",
        call_id="c1",
        call_index=turn,
        path="SKILL.md",
        evidence=HOSTILE,
        turn=turn,
        seconds=3.5,
        tokens=1200,
    )
    return SkillUse(
        skill="demo",
        location="$CLAUDE_CONFIG_DIR/skills/demo",
        listed=True,
        used=used,
        first=event if used else None,
        events=[event] if used else [],
        tool_calls=4,
    )


def job(root: Path, job_id: str, suite: str) -> JobRecord:
    j = JobRecord(
        job_id=job_id,
        created_at=T0,
        suite=suite,
        agent="claude-code",
        skill_path="skills/demo",
        skill_hash="sha256:" + "1" * 64,
        status="finished",
        finished_at=T0 + timedelta(minutes=5),
    )
    return j


def write_trigger_job(root: Path, job_id: str, version: str) -> None:
    j = job(root, job_id, "evals/trigger-evals/demo.toml")
    for eval_id, (cat, should, hits) in VERSIONS[version].items():
        for i, hit in enumerate(hits, 1):
            j.planned.append((eval_id, i, "skill"))
            crit = [
                CriterionResult(
                    id="trigger_decision", weight=1, fraction=float(hit == should), grader="trigger"
                )
            ]
            write_run_file(
                root,
                RunRecord(
                    job_id=job_id,
                    eval_id=eval_id,
                    run_index=i,
                    run_dir=run_dir_rel(job_id, eval_id, i),
                    agent="claude-code",
                    skill_path="skills/demo",
                    outcome="completed",
                    started_at=T0,
                    finished_at=T0,
                    criteria=crit,
                    verdict=decide(crit, threshold=1.0),
                    skill_use=use(hit),
                    trigger=TriggerOutcome(
                        suite="demo",
                        prompt=eval_id.split(".")[1],
                        category=cat,
                        should_trigger=should,
                        triggered=hit,
                        correct=hit == should,
                        budget=TriggerBudget(max_turns=8),
                        stopped="triggered" if hit else None,
                    ),
                ),
            )
    write_job_file(root, j)


def write_ordinary_job(root: Path, job_id: str) -> None:
    """Two evals; the skill used in 3 of 4 runs; passed in 2 of the 3 that used it, 0 of the 1 that did
    not.
    """
    j = job(root, job_id, "evals")
    for eval_id, i, used, passed in (
        ("e1", 1, True, True),
        ("e1", 2, False, False),
        ("e2", 1, True, True),
        ("e2", 2, True, False),
    ):
        j.planned.append((eval_id, i, "skill"))
        crit = [CriterionResult(id="works", weight=1, fraction=1.0 if passed else 0.0, grader="diff")]
        write_run_file(
            root,
            RunRecord(
                job_id=job_id,
                eval_id=eval_id,
                run_index=i,
                run_dir=run_dir_rel(job_id, eval_id, i),
                agent="claude-code",
                skill_path="skills/demo",
                outcome="completed",
                started_at=T0,
                finished_at=T0,
                criteria=crit,
                verdict=decide(crit),
                skill_use=use(used),
                transcript=TranscriptSummary(skill_loaded=True, skill_invoked=used),
            ),
        )
    write_job_file(root, j)


def test_trigger_pages_compare_and_skill_use(tmp_path):
    root = tmp_path / "results"
    write_trigger_job(root, "job-a", "a")
    write_trigger_job(root, "job-b", "b")
    write_ordinary_job(root, "job-c")
    with store.open(root) as st:
        st.rebuild_index()
    out = tmp_path / "site"
    build_site(root, out, job_ids=["job-a", "job-b", "job-c"], definitions=[])

    for page in out.rglob("*.html"):
        text = page.read_text()
        assert f'content="{CSP}"' in text, page
        assert "<script>" not in text, page
    a = (out / "jobs" / "job-a" / "index.html").read_text()
    assert "Does the agent pick the skill up?" in a and "Confusion per category" in a
    # version a: TP 3 (explicit 2, contextual 1), FN 3, FP 2, TN 0 -> recall 50%, precision 60%
    row = re.search(r"<th>all prompts</th>(.*?)</tr>", a, re.DOTALL).group(1)
    assert re.findall(r'<td class="n">(\d+)</td>', row) == ["4", "8", "3", "2", "3", "0"]
    assert "<b>50.0%</b>" in row and "<b>60.0%</b>" in row
    assert "missed: <b>demo.implicit</b>" in a and "false trigger: <b>demo.negative</b>" in a
    assert "flips between runs" in a  # contextual: one run of two

    run_page = (out / "jobs" / "job-a" / "demo.explicit" / "run_1.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run_page
    assert "$CLAUDE_CONFIG_DIR/skills/demo" in run_page and "model turn 2" in run_page

    cmp = (out / "compare" / "job-a--job-b.html").read_text()
    assert "Prompts that flipped" in cmp
    flipped = re.findall(
        r"<tr><td>(demo\.\w+)</td><td>\w+</td><td>[^<]+</td><td class=\"n\">(\d+)%</td>"
        r"<td class=\"n\">(\d+)%</td><td><span class=\"badge pass\">now right",
        cmp,
    )
    assert flipped == [("demo.implicit", "0", "100"), ("demo.negative", "100", "0")]

    c = (out / "jobs" / "job-c" / "index.html").read_text()
    assert "Was the skill used?" in c
    assert "<b>3 of 4</b>" in c and "<b>66.7%</b> (2/3)" in c and "<b>0.0%</b> (0/1)" in c

    # the same figures in the terminal and in JSON
    res = runner.invoke(app, ["compare", "job-a", "job-b", "--results", str(root), "--json"])
    assert res.exit_code == 0, res.output
    assert [f["prompt"] for f in json.loads(res.stdout)["trigger"]["flips"]] == [
        "demo.implicit",
        "demo.negative",
    ]
    res = runner.invoke(app, ["compare", "job-c", "job-c", "--results", str(root)])
    assert "the skill was used in 3 of 4 run(s)" in res.output
    assert runner.invoke(app, ["compare", "job-a", "job-c", "--results", str(root)]).exit_code == 2
    res = runner.invoke(app, ["report", "job-a", "--results", str(root), "--json", "-"])
    assert json.loads(res.stdout)["trigger"]["overall"]["confusion"] == {"tp": 3, "fp": 2, "fn": 3, "tn": 0}
    res = runner.invoke(app, ["report", "job-a", "--results", str(root)])
    assert res.exit_code == 0 and "demo.implicit" in res.output and "missed" in res.output
