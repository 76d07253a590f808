"""Registers every subcommand module on the app (each module decorates ``skillassay.cli.main.app``)."""

from skillassay.cli import definitions, model_server, results, rubric, run, sandbox, seam_emulator  # noqa: F401
