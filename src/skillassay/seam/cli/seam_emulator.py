"""CLI commands: seam_emulator (``skillassay seam-emulator``: the embedded Seam sandbox as a server)."""

from __future__ import annotations

import typer

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


@commands.command("seam-emulator")
def seam_emulator(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (keep it local)."),
    port: int = typer.Option(0, "--port", help="Port to listen on (0: a free port)."),
    workspace: list[str] = typer.Option(
        [], "--workspace", help="Create a workspace with this name (repeatable). Default: one workspace."
    ),
    async_delay: float = typer.Option(
        1.0, "--async-delay", help="Seconds for setting->set and removing->gone."
    ),
) -> None:
    """Run the Seam API emulator: official SDKs work against it with SEAM_ENDPOINT and SEAM_API_KEY."""
    from skillassay.services import service_class

    seam_emulator = service_class("seam")

    emu = seam_emulator(async_delay=async_delay).start(host=host, port=port)
    typer.echo(f"Seam emulator (spec @seamapi/types {emu.spec_version}) listening on {emu.base_url}")
    for name in workspace or ["default"]:
        ws = emu.create_workspace(name=name)
        typer.echo(f"workspace {ws.name}: workspace_id={ws.workspace_id}")
        typer.echo(f"  export SEAM_ENDPOINT={emu.base_url}")
        typer.echo(f"  export SEAM_API_KEY={ws.api_key}")
    # The operator is the harness here: the admin credential opens /_emulator; never give it to an app.
    typer.echo("control routes (/_emulator), for the harness only, never for an app:")
    typer.echo(f"  export SEAM_EMULATOR_ADMIN={emu.admin_token}")
    typer.echo(
        'More workspaces (each with its own key): curl -X POST -H "authorization: Bearer '
        '$SEAM_EMULATOR_ADMIN" '
        f"{emu.base_url}/_emulator/workspaces"
    )
    typer.echo("Ctrl-C to stop.")
    emu.serve_forever()
