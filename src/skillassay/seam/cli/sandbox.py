"""CLI commands: sandbox (layer 2: build, run and drive a modified app; check what happened in Seam)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import typer

from skillassay.errors import DefinitionError, SkillassayError

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


@commands.command("sandbox")
def sandbox(
    modified_dir: Path = typer.Option(
        ...,
        "--modified-dir",
        help="The app as changed (a whole app folder, e.g. a fixture's test_golden/). Never modified.",
        exists=True,
        file_okay=False,
        dir_okay=True,
        resolve_path=True,
    ),
    fixture_dir: Path = typer.Option(
        ...,
        "--fixture-dir",
        help="The fixture folder: eval_config.json, Dockerfile, app/.",
        exists=True,
        file_okay=False,
        dir_okay=True,
        resolve_path=True,
    ),
    run_id: str = typer.Option(
        ..., "--run-id", help="Names this run's Seam workspace/keys, image tag and logs."
    ),
    seam: str = typer.Option(
        "emulator",
        "--seam",
        help="emulator: a local Seam emulator, one workspace per run (default). live: Seam's sandbox with "
        "SEAM_API_KEY (SEAM_ENDPOINT overrides the URL); only this run's data is created and cleaned up.",
    ),
    backend: str = typer.Option(
        "host",
        "--backend",
        help="host: run the app as a process group on this machine with cached dependencies (default). "
        "docker: docker build "
        "and docker run as the plan did (needs a running Docker engine).",
    ),
    logs: Path | None = typer.Option(
        None,
        "--logs",
        help="Folder for install/build/app logs (default: a new temporary folder, printed in the result).",
        file_okay=False,
        resolve_path=True,
    ),
    plain: bool = typer.Option(
        False,
        "--plain",
        help="Print only the plan's JSON {total, checks}; default prints the full result with evidence.",
    ),
) -> None:
    """Build, start and drive a modified app, and score what it did in Seam (build 10, create/update/cancel 30
    each).

    Prints JSON. Exit 0 when the validation ran (whatever the score), 2 when it could not run (no Docker
    engine, no SEAM_API_KEY for --seam live, a bad fixture).
    """
    from skillassay.definitions.models import stack_registries
    from skillassay.isolation import Policy
    from skillassay.seam.behaviour import validate
    from skillassay.seam.loader import load_fixture

    if seam not in ("emulator", "live"):
        raise typer.BadParameter("use emulator or live", param_hint="--seam")
    if backend not in ("host", "docker"):
        raise typer.BadParameter("use host or docker", param_hint="--backend")
    try:
        definition = load_fixture(fixture_dir)
        # sealed as `run` seals a run's app: the eval's registries reachable, so a cold cache installs
        result = validate(
            modified_dir,
            definition,
            run_id,
            seam=_lit(seam),
            backend=_lit_b(backend),
            logs_dir=logs,
            policy=Policy(registries=stack_registries(definition)),
        )
    except DefinitionError as e:  # every problem on its own line, each naming its file and field
        for p in e.problems:
            typer.echo(f"error: {p}", err=True)
        raise typer.Exit(e.exit_code) from None
    except SkillassayError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(e.exit_code) from None
    if plain:
        typer.echo(json.dumps(result.plan_json()))
    else:
        typer.echo(json.dumps({"plan": result.plan_json(), **result.model_dump(mode="json")}, indent=2))


def _lit(value: str) -> Literal["emulator", "live"]:
    return "live" if value == "live" else "emulator"


def _lit_b(value: str) -> Literal["host", "docker"]:
    return "docker" if value == "docker" else "host"
