"""The starter suite ``skillassay init`` writes: the shipped evals, the example skill and a README.

In a wheel they are package data (``skillassay/starter/evals`` and ``skillassay/starter/examples/skills``,
mapped from the repository at build time, so the repository keeps one copy and relative paths between them
hold); from a checkout they are read in place.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from skillassay.errors import SkillassayError

# never copied into a starter: dependencies, build output, caches a checkout may hold
_IGNORED = ("node_modules", "dist", ".next", "__pycache__", ".venv", ".pytest_cache", "*.pyc")

STARTER_README = """\
# A skillassay suite

Written by `skillassay init`. Everything here is yours to change.

```
rubric.json            the six weighted rubric categories every Seam eval is graded on
fixtures/<name>/       one Seam eval each, in the plan's format: app/ (the pristine app the agent changes),
                       Dockerfile, eval_config.json (prompt, endpoints the sandbox drives), answer_key.json,
                       test_golden/ (a correct solution) and test_controls/ (flawed ones, with what they must score)
agent-evals/<id>.toml  agent evals: weighted criteria, forbidden behaviour, quality gates
trigger-evals/         does the agent pick the skill up when it should (when present)
skills/                the example skill (a folder with SKILL.md)
```

## Try it

```bash
skillassay check .                 # every definition is valid (exit 2 names the file and the field)
skillassay check . --controls      # each golden passes and each control scores as written beside it
skillassay run . --agent reference # the whole pipeline on the golden solutions: every eval should pass
skillassay report JOB --html site/ && skillassay serve site/
```

## Measure a real agent and a skill

```bash
skillassay install-agents          # the pinned Claude Code and Codex CLIs, into skillassay's cache
export ANTHROPIC_API_KEY=...       # held by skillassay's model proxy; the agent never sees it
skillassay run . --agent claude-code --skill skills/seam-lock-access --runs 5 --baseline
skillassay compare JOB:baseline JOB
```

## Make it yours

- Your own app: `skillassay init --app path/to/your/app .` adds `fixtures/<name>/` with what it could infer
  (stack, port, routes, the handlers to change) and `skillassay check .` lists exactly what is left to write:
  the prompt, the expected Seam calls, a golden solution, negative controls.
- Your own skill: point `--skill` at its folder.
- `skillassay doctor` says what this machine has and lacks for each feature.
"""  # noqa: E501 - code inside a string, kept as written


def starter_sources() -> tuple[Path, Path]:
    """(suite folder, skills folder) of the shipped starter."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "starter"
    if (packaged / "evals" / "rubric.json").is_file():
        return packaged / "evals", packaged / "examples" / "skills"  # the repository's layout, kept
    checkout = here.parents[3]
    if (checkout / "evals" / "rubric.json").is_file():
        return checkout / "evals", checkout / "examples" / "skills"
    raise SkillassayError(
        "this copy of skillassay has no starter suite (a wheel built without package data?)"
    )


def _point_trigger_suites_at(dest: Path, suite: Path, skills: Path) -> None:
    """A trigger suite names its skill by a path relative to its file; in the starter the skills sit in
    ``<suite>/skills/``, so a path that led into the shipped skills folder is pointed there."""
    import tomllib

    for toml in sorted((dest / "trigger-evals").glob("*.toml")):
        text = toml.read_text(encoding="utf-8")
        skill = tomllib.loads(text).get("skill")
        if not isinstance(skill, str):
            continue
        original = suite / toml.relative_to(dest).parent / skill  # where it pointed from the shipped suite
        try:
            rel = original.resolve().relative_to(skills.resolve())
        except ValueError:
            continue  # a skill outside the shipped skills folder: left as written
        moved = Path("..") / "skills" / rel
        if not (toml.parent / moved).is_dir():
            continue
        text = text.replace(f'skill = "{skill}"', f'skill = "{moved.as_posix()}"', 1)
        toml.write_text(text, encoding="utf-8")


def write_starter(dest: Path, *, force: bool = False) -> list[Path]:
    """Write the starter suite into ``dest``; returns the top-level entries written."""
    suite, skills = starter_sources()
    if dest.exists() and not dest.is_dir():
        raise SkillassayError(f"{dest}: exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise SkillassayError(f"{dest}: not empty; choose a new folder, or --force to write into it")
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    ignore = shutil.ignore_patterns(*_IGNORED)
    for entry in sorted(suite.iterdir()):
        target = dest / entry.name
        if entry.is_dir():
            shutil.copytree(entry, target, ignore=ignore, dirs_exist_ok=force)
        else:
            shutil.copy2(entry, target)
        written.append(target)
    shutil.copytree(skills, dest / "skills", ignore=ignore, dirs_exist_ok=force)
    written.append(dest / "skills")
    _point_trigger_suites_at(dest, suite, skills)
    (dest / "README.md").write_text(STARTER_README, encoding="utf-8")
    written.append(dest / "README.md")
    return written
