"""The plan's fixture folders as a definition format (``skillassay.definitions: plan-json``): a suite's
``fixtures/<name>/eval_config.json``, with the fixture's ``answer_key.json`` and the suite's
``rubric.json``."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from skillassay.definitions.formats import DefinitionFormat
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import Problem
from skillassay.seam.config import API_PATHS
from skillassay.seam.loader import CONFIG_FILE, FORMAT

FIXTURES_DIR = "fixtures"


class PlanFormat(DefinitionFormat):
    name = FORMAT
    where = f"{FIXTURES_DIR}/<name>/{CONFIG_FILE}"
    named_as = f"a fixture folder, an {CONFIG_FILE}"
    api_paths = API_PATHS
    # the plan's name of the lower-level path
    api_path_aliases: ClassVar[dict[str, str]] = {"lower_level": "access_codes"}

    def named(self, path: Path) -> tuple[Path, Path] | None:
        if path.is_file() and path.name == CONFIG_FILE:
            return path.parent, path.resolve().parent.parent.parent
        if path.is_dir() and ((path / CONFIG_FILE).is_file() or (path / "app").is_dir()):
            return path, path.resolve().parent.parent
        return None

    def in_suite(self, suite: Path) -> list[Path]:
        fixtures = suite / FIXTURES_DIR
        if not fixtures.is_dir():
            return []
        return [
            fx for fx in sorted(p for p in fixtures.iterdir() if p.is_dir()) if (fx / CONFIG_FILE).is_file()
        ]

    def inspect(self, source: Path, suite_dir: Path) -> tuple[EvalDefinition | None, list[Problem]]:
        from skillassay.seam.lint import inspect_plan

        return inspect_plan(source)


PLAN_FORMAT = PlanFormat()
