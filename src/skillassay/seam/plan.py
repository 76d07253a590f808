"""The plan's ``rubric.json`` and ``answer_key.json``, modelled as written, as plain dataclasses.

They are the structural rubric's only inputs, and that grader must start in a few hundredths of a second (it
runs once per graded app, in CI loops and shell pipelines), which importing pydantic alone would exceed. So
they are stdlib dataclasses: pydantic validates the very same classes wherever a definition is loaded
(``definitions/loader.py``, ``EvalDefinition``), and ``exact`` reads a file that is already well-formed
without it. ``exact`` never judges: it accepts only input that pydantic would accept with the same result, and
answers None otherwise, so every error a user sees comes from pydantic (``definitions/jsonfile.py:
validate``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

# unknown keys are an error, as in every other definition file (pydantic reads this off the class)
_FORBID_EXTRA = {"extra": "forbid"}

# ----------------------------------------------------------------------------- the plan's rubric.json
# the checks a category may name: the rubric's registry (``seam/rubric/checks.py: check``) takes these and no
# other
PATH_ALIASES = {"lower_level": "access_codes"}  # the plan's older name of the access-codes path
RUBRIC_CHECKS = (
    "api_path_match",
    "files_modified_match",
    "calls_in_expected_functions",
    "required_params_present",
    "all_handlers_modified",
    "webhook_route_added",
)


@dataclass
class RubricCategory:
    """One category of the plan's rubric.json: its name, its weight in the total and the check that scores
    it."""

    name: str
    weight: float
    check: str

    __pydantic_config__ = _FORBID_EXTRA


@dataclass
class Rubric:
    """The plan's rubric.json: the categories, in order."""

    categories: list[RubricCategory]

    __pydantic_config__ = _FORBID_EXTRA


# ----------------------------------------------------------------------------- the plan's answer_key.json
@dataclass
class AnswerKey:
    """The plan's answer_key.json of one fixture: the files, calls and placements the change should have."""

    expected_files_modified: list[str] = field(default_factory=list)
    expected_new_files_allowed: list[str] = field(default_factory=list)
    # lifecycle phase ("create" | "update" | "cancel") -> SDK calls, e.g. "customers.push_data"
    expected_calls: dict[str, list[str]] = field(default_factory=dict)
    # SDK call -> names of functions the call must sit in (directly or through a wrapper)
    expected_placements: dict[str, list[str]] = field(default_factory=dict)
    # SDK method (last segment, e.g. "push_data") -> parameter names; nested as "reservations[].space_keys"
    required_parameters: dict[str, list[str]] = field(default_factory=dict)
    # manifest file -> packages that must be added to it
    expected_package_additions: dict[str, list[str]] = field(default_factory=dict)

    __pydantic_config__ = _FORBID_EXTRA


# ----------------------------------------------------------------------------- reading without pydantic
T = TypeVar("T")


class _NotExact(Exception):
    pass


def _convert(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is str:
        if isinstance(value, str):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif origin is list:
        if isinstance(value, list):
            (item,) = typing.get_args(tp)
            return [_convert(item, v) for v in value]
    elif origin is dict:
        if isinstance(value, dict):
            key, item = typing.get_args(tp)
            if key is str and all(isinstance(k, str) for k in value):
                return {k: _convert(item, v) for k, v in value.items()}
    elif origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _convert(inner[0], value)
    elif dataclasses.is_dataclass(tp):
        return _dataclass(typing.cast("type[Any]", tp), value)
    raise _NotExact


def _dataclass(cls: type[T], value: Any) -> T:
    if not isinstance(value, dict):
        raise _NotExact
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    if not set(value) <= set(fields):
        raise _NotExact
    kwargs = {}
    for name, f in fields.items():
        if name in value:
            kwargs[name] = _convert(hints[name], value[name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise _NotExact
    return cls(**kwargs)


def exact(cls: type[T], data: Any) -> T | None:
    """``data`` (parsed JSON) as ``cls`` when it has exactly the declared shape, else None (ask pydantic
    why).
    """
    try:
        return _dataclass(cls, data)
    except _NotExact:
        return None
