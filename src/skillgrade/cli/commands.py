"""Registers every subcommand module on the app."""
