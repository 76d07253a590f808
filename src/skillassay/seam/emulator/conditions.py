"""Declarative wait conditions for ``POST /_emulator/wait`` (an out-of-process harness cannot send a lambda).

A condition::

    {"resource": "access_codes",            # any list in the snapshot: access_grants, events, ...
     "where": {"device_id": "...", "status": "set", "reservation_key": "res-1"},
     "count": 1,                             # at least this many matches (default 1)
     "absent": false}                        # true: wait until nothing matches

``where`` compares fields for equality (a list value means "any of"). For access codes, ``reservation_key``,
``access_grant_id``, ``access_method_id`` and ``customer_key`` match the code's links. ``{"all": [c1, c2]}``
waits for several conditions at once. The wait answers the matching records (or ``true`` for ``absent``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillassay.seam.emulator.store import WorkspaceSnapshot

Resource = Literal[
    "devices",
    "spaces",
    "customers",
    "user_identities",
    "access_grants",
    "access_methods",
    "access_codes",
    "events",
    "webhooks",
    "action_attempts",
    "acs_credentials",
]
RESOURCES: tuple[str, ...] = get_args(Resource)
_LINK_FIELDS = {"reservation_key", "access_grant_id", "access_method_id", "customer_key"}


class ConditionError(ValueError):
    pass


def _matches(record: Any, where: dict[str, Any], links: Any) -> bool:
    for key, expected in where.items():
        actual = (links or {}).get(key) if key in _LINK_FIELDS and key not in record else record.get(key)
        if isinstance(expected, list):
            if actual not in expected:
                return False
        elif actual != expected:
            return False
    return True


def _plain(record: Any) -> Any:
    if hasattr(record, "items"):
        return {k: _plain(v) for k, v in record.items()}
    if isinstance(record, (list, tuple)):
        return [_plain(v) for v in record]
    return record


class ResourceCondition(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    resource: Resource
    where: dict[str, Any] = Field(default_factory=dict)
    count: int = Field(default=1, ge=1)
    absent: bool = False


class AllCondition(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    all: list[ResourceCondition | AllCondition] = Field(min_length=1)


def compile_condition(cond: Any) -> Callable[[WorkspaceSnapshot], Any]:
    """A predicate over snapshots from a condition (a JSON object); ConditionError names what is wrong."""
    if not isinstance(cond, dict):
        raise ConditionError("condition must be an object")
    try:
        parsed: ResourceCondition | AllCondition = (
            AllCondition.model_validate(cond) if "all" in cond else ResourceCondition.model_validate(cond)
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("condition", *err["loc"]))
        raise ConditionError(f"{where}: {err['msg']}") from None
    return _compile(parsed)


def _compile(cond: ResourceCondition | AllCondition) -> Callable[[WorkspaceSnapshot], Any]:
    if isinstance(cond, AllCondition):
        parts = [_compile(c) for c in cond.all]

        def all_of(snap: WorkspaceSnapshot) -> Any:
            results = [p(snap) for p in parts]
            return results if all(results) else None

        return all_of
    resource, where, count, absent = cond.resource, cond.where, cond.count, cond.absent

    def predicate(snap: WorkspaceSnapshot) -> Any:
        records = getattr(snap, resource)
        found = []
        for record in records:
            links = (
                snap.access_code_links.get(record["access_code_id"]) if resource == "access_codes" else None
            )
            if _matches(record, where, links):
                found.append(_plain(record))
        if absent:
            return not found
        return found if len(found) >= count else None

    return predicate
