"""Arm integrity: the skills an agent actually had, and whether user-level configuration could steer it.

A comparison of a skill run against a baseline run means something only if the skill run had exactly the skill
under test and the baseline had none. Two witnesses are kept:
- the skill folders visible to the agent when its first process started (in its private home, where skillassay
  installs a skill, and in the workspace, where a fixture could ship one), each with a hash of its files;
- what the CLI itself reported loading (Claude Code's ``system/init`` ``skills``; the skills Codex listed to
  the model in its session file), when it reports it.

A baseline run that sees the skill under test, or any installed skill; a skill run whose folders are not
exactly the skill under test (same hash), or whose CLI did not list it: the run is a harness error, never
scored. User-level configuration (memory files, settings, hooks outside the workspace) is recorded, not
judged: a sealed run sees only its private home, where skillassay writes none.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, Field

# where the CLIs discover skills, relative to the run's home and to the workspace
HOME_SKILL_DIRS = (".claude/skills", ".codex/skills", ".agents/skills", "skills")
WORKSPACE_SKILL_DIRS = (".claude/skills", ".codex/skills", ".agents/skills")
# user-level files that instruct or hook the CLIs, relative to the run's home
HOME_CONFIG = (
    ".claude/CLAUDE.md",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks",
    ".claude/agents",
    ".claude/commands",
    ".codex/AGENTS.md",
    ".codex/AGENTS.override.md",
    ".codex/hooks.json",
    ".codex/prompts",
    "CLAUDE.md",
    "AGENTS.md",
    ".config/claude",
    ".config/codex",
)
# machine-wide (managed) settings: visible only without isolation
SYSTEM_CONFIG = ("/etc/claude-code", "/etc/codex", "/Library/Application Support/ClaudeCode")
IGNORED = {".git", "__pycache__", "node_modules", ".DS_Store"}


class InstalledSkill(BaseModel):
    name: str
    where: str  # "home:.claude/skills/demo", "workspace:.claude/skills/x"
    hash: str


class ArmSnapshot(BaseModel):
    """What the agent could see when its first process started."""

    installed: list[InstalledSkill] = Field(default_factory=list)
    user_config: list[str] = Field(default_factory=list)


class ArmRecord(BaseModel):
    """run.json's account of the arm: what the run was meant to have and what it had."""

    expected: str | None = None  # the skill under test, when the run should see it
    mode: str = "none"  # "native" | "system-prompt" | "none" (baseline)
    installed: list[InstalledSkill] = Field(default_factory=list)
    reported: list[str] | None = None  # the CLI's own list (built-in skills included); None: it does not say
    reported_source: str | None = None
    user_config: list[str] = Field(default_factory=list)
    ok: bool = True
    problem: str | None = None


def tree_hash(root: Path) -> str:
    """sha256 over a folder's files (relative path and content), skipping what skill installs skip."""
    h = hashlib.sha256()
    files = sorted(
        p for p in Path(root).rglob("*") if p.is_file() and not (set(p.relative_to(root).parts) & IGNORED)
    )
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def _skills_in(base: Path, rels: tuple[str, ...], label: str) -> list[InstalledSkill]:
    out = []
    for rel in rels:
        folder = base / rel
        if not folder.is_dir():
            continue
        for skill in sorted(folder.iterdir()):
            # Codex keeps its own bundled skills under skills/.system: part of the CLI, not installed by
            # anyone
            if skill.name.startswith(".") or not (skill / "SKILL.md").is_file():
                continue
            out.append(
                InstalledSkill(name=skill.name, where=f"{label}:{rel}/{skill.name}", hash=tree_hash(skill))
            )
    return out


def snapshot(workspace: Path, home: Path, sealed: bool) -> ArmSnapshot:
    installed = _skills_in(home, HOME_SKILL_DIRS, "home") + _skills_in(
        workspace, WORKSPACE_SKILL_DIRS, "workspace"
    )
    config = [f"home:{rel}" for rel in HOME_CONFIG if (home / rel).exists()]
    if not sealed:
        config += [p for p in SYSTEM_CONFIG if Path(p).exists()]
    return ArmSnapshot(installed=installed, user_config=config)


def check(
    snap: ArmSnapshot | None,
    *,
    skill_name: str | None,
    skill_dir: Path | None,
    variant: str,
    mode: str,
    reported: list[str] | None,
    reported_source: str | None,
) -> ArmRecord:
    """Compare what the run had with what it should have had. ``skill_name`` is the skill under test (known in
    a baseline run too); ``reported`` is None when the CLI does not report its skills."""
    native = variant == "skill" and mode == "native" and skill_name is not None
    record = ArmRecord(
        expected=skill_name if native else None,
        mode=("native" if native else mode) if variant == "skill" and skill_name else "none",
        installed=snap.installed if snap else [],
        reported=reported,
        reported_source=reported_source,
        user_config=snap.user_config if snap else [],
    )
    if snap is None:
        return record  # no process ran (a harness agent): nothing could see anything
    problems: list[str] = []
    names = sorted({s.name for s in snap.installed})
    if native:
        if names != [skill_name]:
            problems.append(
                f"the skill run saw the skill folders {names or 'none'}, not exactly [{skill_name!r}]"
            )
        elif skill_dir is not None:
            want = tree_hash(skill_dir)
            wrong = [s.where for s in snap.installed if s.hash != want]
            if wrong:
                problems.append(f"the installed skill differs from the skill under test: {', '.join(wrong)}")
        if reported is not None and skill_name not in reported:
            problems.append(f"the CLI did not report loading {skill_name!r} ({reported_source})")
    else:
        if names:
            problems.append(f"a run without the skill saw installed skills: {', '.join(names)}")
        if skill_name and reported is not None and skill_name in reported:
            problems.append(f"a run without the skill had {skill_name!r} loaded ({reported_source})")
    if problems:
        record.ok = False
        record.problem = "; ".join(problems)
    return record
