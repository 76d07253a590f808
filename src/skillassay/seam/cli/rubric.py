"""CLI command: rubric (layer 1, the structural rubric graded from syntax trees).

The options and help live here; the work is ``seam/cli/fast.py``'s, which also runs it without typer for plain
arguments.
"""

from __future__ import annotations

from pathlib import Path

import typer

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


@commands.command("rubric")
def rubric_command(
    pristine: Path = typer.Option(
        ...,
        "--pristine",
        help="The app as it was before the agent worked (e.g. evals/fixtures/<name>/app).",
        file_okay=False,
    ),
    modified: Path = typer.Option(
        ...,
        "--modified",
        help="The app after the agent worked (a workspace, or test_golden/).",
        file_okay=False,
    ),
    fixture_dir: Path = typer.Option(
        ...,
        "--fixture-dir",
        file_okay=False,
        help="The fixture directory holding answer_key.json and eval_config.json "
        "(whose expected_api_path is used).",
    ),
    rubric_file: Path | None = typer.Option(
        None,
        "--rubric",
        dir_okay=False,
        help="The rubric.json with the categories, weights and checks. Default: "
        "rubric.json of the suite, two levels above the fixture dir "
        "(evals/fixtures/<name> -> evals/rubric.json).",
    ),
    plain: bool = typer.Option(
        False,
        "--plain",
        help="Print only the plan's keys (total, categories.<name>.score/weighted), without the evidence.",
    ),
) -> None:
    """Grade a modified app with the structural rubric (layer 1) and print the result as JSON.

    The output has the plan's keys (total 0-100; per category score 0-1 and weighted points) plus, unless
    --plain, the evidence behind each score (file:line of each Seam call, the function it sits in, missing
    parameters, unexpected files). Bad input exits with status 2 and a message naming the file and field.
    """
    from skillassay.seam.cli.fast import grade_rubric

    code = grade_rubric(pristine, modified, fixture_dir, rubric_file, plain)
    if code:
        raise typer.Exit(code)
