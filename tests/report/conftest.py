"""Fixtures for the report tests (the data builders live in report_data.py)."""

from report_data import definitions, results_tree  # noqa: F401  (pytest fixtures)
