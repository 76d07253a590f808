"""The latest result of a check of a suite (``check --mutants``: mutation.json, ``check --exploits``:
exploits.json), one file in the results folder: written whole or not at all, read back or None."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

_M = TypeVar("_M", bound=BaseModel)


def write(report: BaseModel, results_root: Path, name: str) -> Path:
    results_root.mkdir(parents=True, exist_ok=True)
    path = results_root / name
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def read(results_root: Path, name: str, model: type[_M]) -> _M | None:
    """The file ``name`` under ``results_root`` as ``model``, or None (never written, or unreadable)."""
    try:
        return model.model_validate_json((Path(results_root) / name).read_bytes())
    except (OSError, ValueError):
        return None
