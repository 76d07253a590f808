"""``skillassay check``: every problem with the definitions under a path, each naming the file, the field and
what was expected. The checks themselves are ``skillassay.definitions.validation`` and each format's own,
the same that ``run`` passes every definition through (``suite.load_one``), so ``check`` and ``run`` cannot
disagree."""

from __future__ import annotations

from pathlib import Path

from skillassay.definitions.suite import definition_sources, inspect_one
from skillassay.errors import DefinitionError, Problem


def check_path(path: Path) -> list[Problem]:
    """Every problem of every definition under ``path`` (errors and warnings), each once."""
    try:
        sources = definition_sources(path)
    except DefinitionError as exc:
        return exc.problems
    problems: list[Problem] = []
    for kind, source, suite_dir in sources:
        problems.extend(inspect_one(kind, source, suite_dir)[1])
    return list(dict.fromkeys(problems))  # a suite's rubric.json is every fixture's
