"""``skillassay rubric`` without typer: the grader runs once per graded app (CI loops, the plan's shell
scripts), so its whole process must start about as fast as a bare Python checker
(``benchmarks/cli_startup.py``).

``rubric(argv)`` handles plain, well-formed arguments itself and answers None for anything else (``--help``,
an unknown or missing option), which then goes through typer like every other command: help and usage errors
come from one place. ``OPTIONS`` must name exactly the typer command's options (a test holds them equal).
Everything on this path imports neither typer, rich nor pydantic.

A grade is kept under the bytes of all it read (``workspace/output_memo.py``): the same trees, answer key,
config, rubric and code print the same output again without the grader's imports or work.
``SKILLASSAY_RUBRIC_MEMO=off`` turns that off.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported on this path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from skillassay.workspace.output_memo import OutputMemo

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
        if os.path.isfile(values[name]):
            return None  # typer's "is a file" usage error
    if values["rubric_file"] is not None and os.path.isdir(values["rubric_file"]):
        return None
    return grade_rubric(
        values["pristine"], values["modified"], values["fixture_dir"], values["rubric_file"], values["plain"]
    )


def rubric_path(fixture_dir: str, rubric_file: str | None) -> str:
    """``--rubric``, else the suite's: ``rubric.json`` two levels above the fixture dir (evals/fixtures/<name>
    -> evals/rubric.json)."""
    suite = os.path.dirname(os.path.dirname(os.path.realpath(fixture_dir)))
    return rubric_file or os.path.join(suite, "rubric.json")


def _memo() -> OutputMemo | None:
    if os.environ.get("SKILLASSAY_RUBRIC_MEMO", "").lower() in ("off", "0", "no", "false"):
        return None
    from skillassay.paths import cache_folder
    from skillassay.workspace.output_memo import OutputMemo

    return OutputMemo(os.path.join(cache_folder(), "rubric-memo"))


def _memo_key(
    memo: OutputMemo, pristine: str, modified: str, fixture_dir: str, rubric_file: str | None, plain: bool
) -> bytes | None:
    """Everything a grade reads: the arguments, the fixture's two files, the rubric, both trees; None (no
    memo) when the working folder is gone (relative paths would mean nothing)."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    return memo.key(
        [cwd, pristine, modified, fixture_dir, rubric_file or "", str(plain)],
        [
            os.path.join(fixture_dir, "answer_key.json"),
            os.path.join(fixture_dir, "eval_config.json"),
            rubric_path(fixture_dir, rubric_file),
        ],
        [pristine, modified],
    )


def grade_rubric(
    pristine: str | Path,
    modified: str | Path,
    fixture_dir: str | Path,
    rubric_file: str | Path | None,
    plain: bool,
) -> int:
    """Grade and print the result as JSON (exit 0), or print every problem with the input (exit 2); the
    output of an earlier grade of the same inputs is printed as it was."""
    args = (os.fspath(pristine), os.fspath(modified), os.fspath(fixture_dir))
    rubric_arg = os.fspath(rubric_file) if rubric_file else None
    memo = _memo()
    key = _memo_key(memo, *args, rubric_arg, plain) if memo is not None else None
    kept = memo.load(key) if memo is not None and key is not None else None
    if kept is not None:
        sys.stdout.write(kept.decode())
        return 0
    code, text = _grade(*args, rubric_arg, plain)
    if code == 0:
        sys.stdout.write(text)
        if memo is not None and key is not None and _memo_key(memo, *args, rubric_arg, plain) == key:
            memo.save(key, text.encode())  # only when no input moved while it was graded
    return code


def _config(path: Path, problems: list[Any]) -> tuple[str | None, dict[str, Any]]:
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


def _grade(
    pristine_arg: str, modified_arg: str, fixture_arg: str, rubric_arg: str | None, plain: bool
) -> tuple[int, str]:
    """The exit code and the JSON to print (exit 0), or every problem with the input printed (exit 2)."""
    import json
    from pathlib import Path

    from skillassay.definitions.jsonfile import read_json, validate
    from skillassay.errors import DefinitionError, Problem, SkillassayError
    from skillassay.seam.plan import AnswerKey, Rubric, exact
    from skillassay.seam.rubric import CHECKS, PATH_SIGNATURES, grade
    from skillassay.seam.rubric.checks import canonical_path

    pristine, modified, fixture_dir = Path(pristine_arg), Path(modified_arg), Path(fixture_arg)
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
        rubric_at = Path(rubric_path(fixture_arg, rubric_arg))
        rubric_data = read_json(rubric_at, problems)
        rubric = (
            validate(Rubric, rubric_data, rubric_at, problems, exact) if rubric_data is not None else None
        )
        problems += [
            Problem(
                rubric_at,
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
        return exc.exit_code, ""
    except SkillassayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code, ""
    data = result.plan_json() if plain else result.to_json()
    return 0, json.dumps(data, indent=2) + "\n"
