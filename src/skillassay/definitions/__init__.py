"""Eval definitions: one model (EvalDefinition), loaders per file format, and the definition linter.

The names below are imported on first use, so a light module of this package (``definitions.jsonfile``, which
the Seam wing's fast rubric command reads) does not drag in the loaders and pydantic.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "EvalDefinition": "skillassay.definitions.models",
    "load_suite": "skillassay.definitions.suite",
    "select": "skillassay.definitions.suite",
}

__all__ = ["EvalDefinition", "load_suite", "select"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
