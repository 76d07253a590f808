"""CLI command: ``init``, a starter suite, or an eval around the user's own app."""

from __future__ import annotations

from pathlib import Path

import typer

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


@commands.command("init")
def init(
    directory: Path = typer.Argument(Path("evals"), help="The suite folder to write (created if missing)."),
    app: Path | None = typer.Option(
        None,
        "--app",
        help="Scaffold an eval around this application folder (copied "
        "into DIRECTORY/fixtures/NAME/app) instead of writing the "
        "starter suite.",
    ),
    name: str | None = typer.Option(
        None, "--name", help="With --app: the eval's name (default: the app folder's)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Write into a folder that is not empty / replace an eval."
    ),
) -> None:
    """Start a suite.

    Without --app: write the starter suite (the shipped Seam evals, the agent eval, the example skill and a
    README) into DIRECTORY, so that `skillassay run DIRECTORY --agent reference` works at once.

    With --app PATH: add an eval for your own application. The stack, port, routes and the handlers to change
    are read with the rubric's own parsers and written into eval_config.json and answer_key.json (SCAFFOLD.md
    says what was inferred, from where); `skillassay check DIRECTORY` then names what is left to write.

    [bold]Examples[/bold]

      skillassay init my-suite && skillassay run my-suite --agent reference

      skillassay init my-suite --app ../my-pms --name my-pms && skillassay check my-suite
    """
    from skillassay.scaffold import scaffold_app, write_starter

    if app is None:
        written = write_starter(directory, force=force)
        typer.echo(f"wrote the starter suite into {directory}/ ({len(written)} entries). Next:")
        typer.echo(f"  skillassay check {directory} --controls")
        typer.echo(f"  skillassay run {directory} --agent reference")
        return
    directory.mkdir(parents=True, exist_ok=True)
    fixture, found = scaffold_app(app, directory, name, force=force)
    typer.echo(
        f"wrote {fixture}/ ({found.language}, {found.framework}, port {found.port}; "
        f"{len(found.routes)} route(s) read, lifecycle: "
        f"{', '.join(f'{k} {v.method} {v.path}' for k, v in found.lifecycle.items()) or 'not found'})"
    )
    typer.echo(f"what was inferred and what is left: {fixture / 'SCAFFOLD.md'}")
    typer.echo(f"next: skillassay check {directory}   (names each missing piece by file and field)")
