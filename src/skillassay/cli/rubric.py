"""CLI commands: rubric (layer 1, the structural rubric graded from syntax trees)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, ValidationError

from skillassay.cli.main import app
from skillassay.definitions.models import AnswerKey, Rubric
from skillassay.errors import DefinitionError, Problem, SkillassayError


def _load(path: Path, model: type[BaseModel]) -> Any:
    """Read a JSON file into ``model``; every problem names the file and the field (a JSON pointer)."""
    if not path.is_file():
        raise DefinitionError([Problem(path, "", "file not found")])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DefinitionError([Problem(path, "", f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(path, "/" + "/".join(str(p) for p in err["loc"]), err["msg"]) for err in exc.errors()
        ]
        raise DefinitionError(problems) from None


def _expected_api_path(path: Path) -> str:
    """Only ``expected_api_path`` is needed from eval_config.json; the rest of the file is not validated here."""
    if not path.is_file():
        raise DefinitionError([Problem(path, "", "file not found")])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DefinitionError([Problem(path, "", f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")])
    value = data.get("expected_api_path") if isinstance(data, dict) else None
    if not isinstance(value, str):
        raise DefinitionError([Problem(path, "/expected_api_path", "missing or not a string")])
    return value


@app.command("rubric")
def rubric_command(
    pristine: Path = typer.Option(..., "--pristine", help="The app as it was before the agent worked (e.g. evals/fixtures/<name>/app).",
                                  file_okay=False),
    modified: Path = typer.Option(..., "--modified", help="The app after the agent worked (a workspace, or test_golden/).",
                                  file_okay=False),
    fixture_dir: Path = typer.Option(..., "--fixture-dir", file_okay=False,
                                     help="The fixture directory holding answer_key.json and eval_config.json "
                                          "(whose expected_api_path is used)."),
    rubric_file: Path | None = typer.Option(None, "--rubric", dir_okay=False,
                                            help="The rubric.json with the categories, weights and checks. Default: "
                                                 "rubric.json of the suite, two levels above the fixture dir "
                                                 "(evals/fixtures/<name> -> evals/rubric.json)."),
    plain: bool = typer.Option(False, "--plain", help="Print only the plan's keys (total, categories.<name>.score/"
                                                      "weighted), without the evidence."),
) -> None:
    """Grade a modified app with the structural rubric (layer 1) and print the result as JSON.

    The output has the plan's keys (total 0-100; per category score 0-1 and weighted points) plus, unless --plain,
    the evidence behind each score (file:line of each Seam call, the function it sits in, missing parameters,
    unexpected files). Bad input exits with status 2 and a message naming the file and field.
    """
    from skillassay.graders.rubric import CHECKS, PATH_SIGNATURES, grade
    from skillassay.graders.rubric.checks import canonical_path

    try:
        answer_key = _load(fixture_dir / "answer_key.json", AnswerKey)
        api_path = _expected_api_path(fixture_dir / "eval_config.json")
        rubric_path = rubric_file or fixture_dir.resolve().parent.parent / "rubric.json"
        rubric = _load(rubric_path, Rubric)
        problems = [
            Problem(rubric_path, f"/categories/{i}/check",
                    f"unknown check {c.check!r} (category {c.name!r}); known: {', '.join(sorted(CHECKS))}")
            for i, c in enumerate(rubric.categories) if c.check not in CHECKS
        ]
        if canonical_path(api_path) is None:
            problems.append(Problem(fixture_dir / "eval_config.json", "/expected_api_path",
                                    f"{api_path!r} is not one of {', '.join(sorted(PATH_SIGNATURES))} (or lower_level)"))
        if problems:
            raise DefinitionError(problems)
        for label, root in (("--pristine", pristine), ("--modified", modified)):
            if not root.is_dir():
                raise SkillassayError(f"{label} {root}: not a directory")
        result = grade(pristine, modified, answer_key, rubric, api_path)
    except SkillassayError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    data = result.plan_json() if plain else result.model_dump(mode="json")
    typer.echo(json.dumps(data, indent=2))

