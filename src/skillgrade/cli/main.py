"""The ``skillgrade`` command line. Each subcommand lives in its own module and registers itself here."""

from __future__ import annotations

import typer

from skillgrade import __version__

app = typer.Typer(
    name="skillgrade",
    help="Measure how well AI coding agents, and the skills given to them, change real codebases.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillgrade {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Measure how well AI coding agents, and the skills given to them, change real codebases."""


def main() -> None:
    from skillgrade.cli import commands  # noqa: F401  (registers subcommands)

    app()
