"""Registers every subcommand module on the app (each module decorates ``skillgrade.cli.main.app``)."""

from skillgrade.cli import definitions, model_server, results, rubric, run, sandbox, seam_emulator  # noqa: F401
