"""A skill folder (``SKILL.md`` with ``name`` and ``description`` front matter), read the same way by the
agents that install it and by the definitions that name it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from skillassay.errors import SkillassayError


class SkillError(SkillassayError):
    """A skill folder is missing SKILL.md or its front matter is unreadable."""


@dataclass
class Skill:
    name: str
    description: str
    body: str  # SKILL.md without its front matter
    text: str  # the whole SKILL.md
    path: Path  # the folder


def load_skill(skill_dir: Path) -> Skill:
    skill_md = Path(skill_dir) / "SKILL.md"
    if not skill_md.is_file():
        raise SkillError(f"{skill_md}: no SKILL.md in the skill folder")
    text = skill_md.read_text(encoding="utf-8")
    meta: dict = {}
    body = text
    found = re.match(r"^---\s*\n(.*?)\n---\s*(?:\n|$)", text, re.DOTALL)
    if found:
        try:
            meta = yaml.safe_load(found.group(1)) or {}
        except yaml.YAMLError as exc:
            raise SkillError(f"{skill_md}: front matter is not valid YAML: {exc}") from exc
        if not isinstance(meta, dict):
            raise SkillError(f"{skill_md}: front matter must be a mapping with name and description")
        body = text[found.end() :]
    name = str(meta.get("name") or Path(skill_dir).name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise SkillError(f"{skill_md} at /name: {name!r} is not a usable skill folder name")
    return Skill(
        name=name, description=str(meta.get("description") or ""), body=body, text=text, path=skill_dir
    )
