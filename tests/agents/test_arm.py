"""Arm integrity: a baseline run that sees a skill, or a skill run that does not have exactly the skill under
test, is a harness error (never scored); the record says what the agent had."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from typer.testing import CliRunner

from skillassay.agents import arm
from skillassay.cli.main import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "examples" / "skills" / "seam-lock-access"


def _skill(folder: Path, name: str, marker: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: test\n---\n{marker}\n")
    return folder


def test_check_rules(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    under_test = _skill(tmp_path / "src" / "demo", "demo")
    shutil.copytree(under_test, home / ".claude" / "skills" / "demo")
    snap = arm.snapshot(ws, home, sealed=True)
    assert [s.where for s in snap.installed] == ["home:.claude/skills/demo"]
    ok = arm.check(
        snap,
        skill_name="demo",
        skill_dir=under_test,
        variant="skill",
        mode="native",
        reported=["demo", "debug"],
        reported_source="cli",
    )
    assert ok.ok and ok.expected == "demo"
    # the CLI did not list it
    missed = arm.check(
        snap,
        skill_name="demo",
        skill_dir=under_test,
        variant="skill",
        mode="native",
        reported=["debug"],
        reported_source="cli",
    )
    assert not missed.ok and "did not report" in missed.problem
    # another version of the skill than the one under test
    (home / ".claude" / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nchanged\n")
    changed = arm.check(
        arm.snapshot(ws, home, sealed=True),
        skill_name="demo",
        skill_dir=under_test,
        variant="skill",
        mode="native",
        reported=None,
        reported_source=None,
    )
    assert not changed.ok and "differs" in changed.problem
    # a baseline that sees the skill
    base = arm.check(
        snap,
        skill_name="demo",
        skill_dir=under_test,
        variant="baseline",
        mode="native",
        reported=["demo"],
        reported_source="cli",
    )
    assert (
        not base.ok and "saw installed skills: demo" in base.problem and "had 'demo' loaded" in base.problem
    )
    # user-level configuration is recorded (Codex's own bundled skills under .system are not installed skills)
    (home / ".claude" / "CLAUDE.md").write_text("always cheat\n")
    _skill(home / ".codex" / "skills" / ".system" / "imagegen", "imagegen")
    snap = arm.snapshot(ws, home, sealed=True)
    assert snap.user_config == ["home:.claude/CLAUDE.md"] and {s.name for s in snap.installed} == {"demo"}


def _run(args: list[str]) -> list[dict]:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["runs"]


def test_a_fixture_that_ships_a_skill_makes_both_arms_harness_errors(tmp_path, evals_dir):
    """A project skill in the fixture's app: the baseline would see a skill, and the skill run would not have
    exactly the skill under test. Neither is scored."""
    suite = tmp_path / "suite"
    shutil.copytree(evals_dir, suite)
    _skill(suite / "fixtures" / "flask-py" / "app" / ".claude" / "skills" / "stowaway", "stowaway")
    runs = _run(
        [
            str(suite),
            "--agent",
            "command",
            "--command",
            f"{sys.executable} -c pass",
            "--skill",
            str(SKILL),
            "--baseline",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert sorted(r["variant"] for r in runs) == ["baseline", "skill"]
    for r in runs:
        assert r["outcome"] == "harness_error", r
        assert [f["stage"] for f in r["harness_failures"]] == ["arm"]
        assert r["arm"]["ok"] is False and "stowaway" in r["arm"]["problem"]
        assert "workspace:.claude/skills/stowaway" in [s["where"] for s in r["arm"]["installed"]]


def test_a_clean_pair_records_what_each_arm_had(tmp_path, evals_dir):
    runs = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            f"{sys.executable} -c pass",
            "--skill",
            str(SKILL),
            "--baseline",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    by = {r["variant"]: r for r in runs}
    assert by["skill"]["arm"]["ok"] and by["baseline"]["arm"]["ok"]
    assert [s["where"] for s in by["skill"]["arm"]["installed"]] == ["home:skills/seam-lock-access"]
    assert by["skill"]["arm"]["installed"][0]["hash"] == arm.tree_hash(SKILL)
    assert by["baseline"]["arm"]["installed"] == [] and by["baseline"]["arm"]["expected"] is None
    assert by["skill"]["outcome"] != "harness_error" and by["baseline"]["outcome"] != "harness_error"
