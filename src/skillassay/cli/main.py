"""The ``skillassay`` command line. Each subcommand lives in its own module and registers itself here."""

from __future__ import annotations

import typer

from skillassay import __version__

app = typer.Typer(
    name="skillassay",
    help="Measure how well AI coding agents, and the skills given to them, change real codebases.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillassay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Measure how well AI coding agents, and the skills given to them, change real codebases."""


def main() -> None:
    import sys

    from skillassay.cli import commands  # noqa: F401  (registers subcommands)
    from skillassay.errors import DefinitionError, SkillassayError

    try:
        app()
    except DefinitionError as exc:  # a command that did not handle it itself: still file + field, exit 2
        for p in exc.problems:
            print(f"error {p}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except SkillassayError as exc:
        print(f"error {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
