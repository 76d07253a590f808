"""CLI commands: definitions."""

from __future__ import annotations

from skillgrade.cli.main import app  # noqa: F401
