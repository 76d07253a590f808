"""Reading definition files with errors that name the file, the field (JSON pointer) and what was expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from skillassay.errors import Problem

M = TypeVar("M", bound=BaseModel)


def pointer(loc: tuple[Any, ...] | list[Any]) -> str:
    """A pydantic error location as a JSON pointer (RFC 6901)."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in loc]
    return "/" + "/".join(parts) if parts else ""


def read_json(path: Path, problems: list[Problem]) -> Any | None:
    """Parse a JSON file; on failure add a problem (missing file, or line and column of the syntax error)."""
    if not path.is_file():
        problems.append(Problem(path, "", "file is missing"))
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        problems.append(Problem(path, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"))
    except UnicodeDecodeError as exc:
        problems.append(Problem(path, "", f"not UTF-8 text: {exc}"))
    return None


def validate(model: type[M], data: Any, path: Path, problems: list[Problem]) -> M | None:
    """Validate ``data`` against ``model``; each pydantic error becomes a problem at its pointer."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown field (not part of this format)"
            elif err["type"] == "missing":
                msg = "required field is missing"
            problems.append(Problem(path, pointer(err["loc"]), msg))
        return None
