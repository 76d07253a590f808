"""Reading definition files with errors that name the file, the field (JSON pointer) and what was expected.

Definition files are input a user may get wrong in any way, including sizes and depths no one writes by hand:
a file larger than ``MAX_FILE_BYTES`` or nested deeper than ``MAX_DEPTH`` is a problem like any other (exit 2,
no traceback), never a crash of the parser or of the validation after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from skillassay.errors import Problem

M = TypeVar("M")

MAX_FILE_BYTES = 32 * 1024 * 1024  # far above any real definition; reading stops here
MAX_DEPTH = 64  # arrays/objects/tables within each other; the formats need fewer than 10


def pointer(loc: tuple[Any, ...] | list[Any]) -> str:
    """A pydantic error location as a JSON pointer (RFC 6901)."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in loc]
    return "/" + "/".join(parts) if parts else ""


def depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (iterative, so any depth is safe to measure)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def read_text(path: Path, problems: list[Problem]) -> str | None:
    """A definition file's text; a problem (and None) when it is missing, too large or not UTF-8."""
    if not path.is_file():
        problems.append(Problem(path, "", "file is missing"))
        return None
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(
                Problem(
                    path,
                    "",
                    f"file is {size / 1024 / 1024:.0f} MB; definition files are limited "
                    f"to {MAX_FILE_BYTES // 1024 // 1024} MB",
                )
            )
            return None
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(path, "", f"not UTF-8 text: {exc}"))
    except OSError as exc:
        problems.append(Problem(path, "", f"cannot be read: {exc.strerror or exc}"))
    return None


def too_deep(path: Path, data: Any, problems: list[Problem]) -> bool:
    if depth(data) > MAX_DEPTH:
        problems.append(
            Problem(path, "", f"nested more than {MAX_DEPTH} levels deep; no definition needs that")
        )
        return True
    return False


def read_json(path: Path, problems: list[Problem]) -> Any | None:
    """Parse a JSON file; on failure add a problem (missing file, or line and column of the syntax error)."""
    text = read_text(path, problems)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(path, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
        )
        return None
    except RecursionError:
        problems.append(
            Problem(path, "", f"nested more than {MAX_DEPTH} levels deep; no definition needs that")
        )
        return None
    return None if too_deep(path, data, problems) else data


def validate(
    model: type[M],
    data: Any,
    path: Path,
    problems: list[Problem],
    exact: Callable[[type[M], Any], M | None] | None = None,
) -> M | None:
    """Validate ``data`` against ``model`` (a pydantic model, or a dataclass pydantic reads); each pydantic
    error becomes a problem at its pointer. ``exact``: a reader that answers the model for input that
    already has its exact shape, without importing pydantic (the Seam wing's ``plan.exact``: its rubric
    command starts fast that way), and None for anything else, which pydantic then judges."""
    if exact is not None:
        found = exact(model, data)
        if found is not None:
            return found
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        for err in exc.errors():
            msg = err["msg"]
            if err["type"] == "value_error":
                # our validators' words, without pydantic's prefix
                msg = str(err.get("ctx", {}).get("error", msg))
            elif err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
                msg = "unknown field (not part of this format)"
            elif err["type"] in ("missing", "missing_argument"):
                msg = "required field is missing"
            problems.append(Problem(path, pointer(err["loc"]), msg))
        return None
