"""``skillassay rubric`` without typer: the grader runs once per graded app (CI loops, the plan's shell
scripts), so its whole process must start about as fast as a bare Python checker
(``benchmarks/cli_startup.py``).

``rubric(argv)`` handles plain, well-formed arguments itself and answers None for anything else (``--help``,
an unknown or missing option), which then goes through typer like every other command: help and usage errors
come from one place. ``OPTIONS`` must name exactly the typer command's options (a test holds them equal).
Everything on this path imports neither typer, rich nor pydantic.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# option -> (parameter name, takes a value)
OPTIONS: dict[str, tuple[str, bool]] = {
    "--pristine": ("pristine", True),
    "--modified": ("modified", True),
    "--fixture-dir": ("fixture_dir", True),
    "--rubric": ("rubric_file", True),
    "--plain": ("plain", False),
}
REQUIRED = ("pristine", "modified", "fixture_dir")


def _parse(argv: list[str]) -> dict[str, Any] | None:
    values: dict[str, Any] = {"rubric_file": None, "plain": False}
    i = 0
    while i < len(argv):
        option, eq, value = argv[i].partition("=")
        spec = OPTIONS.get(option)
        if spec is None:
            return None
        name, takes_value = spec
        if not takes_value:
            if eq or (name in values and values[name] is True):
                return None
            values[name] = True
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        if values.get(name) is not None or not value:
            return None  # given twice or empty: typer says what is wrong
        values[name] = value
        i += 1
    if any(values.get(n) is None for n in REQUIRED):
        return None
    return values


def rubric(argv: list[str]) -> int | None:
    """Run ``skillassay rubric`` for plain arguments and return the exit code; None: let typer handle them."""
    values = _parse(argv)
    if values is None:
        return None
    for name in ("pristine", "modified", "fixture_dir"):
        if Path(values[name]).is_file():
            return None  # typer's "is a file" usage error
    if values["rubric_file"] is not None and Path(values["rubric_file"]).is_dir():
        return None
    return grade_rubric(
        Path(values["pristine"]),
        Path(values["modified"]),
        Path(values["fixture_dir"]),
        Path(values["rubric_file"]) if values["rubric_file"] else None,
        values["plain"],
    )


def _config(path: Path, problems: list) -> tuple[str | None, dict]:
    """Only ``expected_api_path`` and the test endpoints' methods and paths are needed from eval_config.json;
    the rest of the file is not validated here."""
    from skillassay.definitions.jsonfile import read_json
    from skillassay.errors import Problem
    from skillassay.seam.rubric.grade import endpoints_of

    data = read_json(path, problems)
    if data is None:
        return None, {}
    value = data.get("expected_api_path") if isinstance(data, dict) else None
    if not isinstance(value, str):
        problems.append(Problem(path, "/expected_api_path", "missing or not a string"))
        return None, {}
    return value, endpoints_of(data) if isinstance(data, dict) else {}


def grade_rubric(
    pristine: Path, modified: Path, fixture_dir: Path, rubric_file: Path | None, plain: bool
) -> int:
    """Grade and print the result as JSON (exit 0), or print every problem with the input (exit 2)."""
    from skillassay.definitions.jsonfile import read_json, validate
    from skillassay.errors import DefinitionError, Problem, SkillassayError
    from skillassay.seam.plan import AnswerKey, Rubric, exact
    from skillassay.seam.rubric import CHECKS, PATH_SIGNATURES, grade
    from skillassay.seam.rubric.checks import canonical_path

    try:
        for label, root in (
            ("--pristine", pristine),
            ("--modified", modified),
            ("--fixture-dir", fixture_dir),
        ):
            if not root.is_dir():  # before reading the fixture's files: one line saying which folder is wrong
                raise SkillassayError(f"{label} {root}: no such folder")
        problems: list[Problem] = []
        key_path = fixture_dir / "answer_key.json"
        key_data = read_json(key_path, problems)
        answer_key = (
            validate(AnswerKey, key_data, key_path, problems, exact) if key_data is not None else None
        )
        config_path = fixture_dir / "eval_config.json"
        api_path, endpoints = _config(config_path, problems)
        rubric_path = rubric_file or fixture_dir.resolve().parent.parent / "rubric.json"
        rubric_data = read_json(rubric_path, problems)
        rubric = (
            validate(Rubric, rubric_data, rubric_path, problems, exact) if rubric_data is not None else None
        )
        problems += [
            Problem(
                rubric_path,
                f"/categories/{i}/check",
                f"unknown check {c.check!r} (category {c.name!r}); known: {', '.join(sorted(CHECKS))}",
            )
            for i, c in enumerate(rubric.categories if rubric else [])
            if c.check not in CHECKS
        ]
        if api_path is not None and canonical_path(api_path) is None:
            problems.append(
                Problem(
                    config_path,
                    "/expected_api_path",
                    f"{api_path!r} is not one of {', '.join(sorted(PATH_SIGNATURES))} (or lower_level)",
                )
            )
        if problems:
            raise DefinitionError(problems)
        assert answer_key is not None and rubric is not None and api_path is not None
        result = grade(pristine, modified, answer_key, rubric, api_path, endpoints=endpoints)
    except DefinitionError as exc:  # every problem on its own line, each naming its file and field
        for p in exc.problems:
            print(f"error: {p}", file=sys.stderr)
        return exc.exit_code
    except SkillassayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    data = result.plan_json() if plain else result.to_json()
    print(json.dumps(data, indent=2))
    return 0
