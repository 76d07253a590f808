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
from typing import Any

from skillassay.services.seam.store import WorkspaceSnapshot

RESOURCES = (
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
)
_LINK_FIELDS = {"reservation_key", "access_grant_id", "access_method_id", "customer_key"}


class ConditionError(ValueError):
    pass


def _matches(record: Any, where: dict[str, Any], links: Any) -> bool:
    for key, expected in where.items():
        if key in _LINK_FIELDS and key not in record:
            actual = (links or {}).get(key)
        else:
            actual = record.get(key)
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


def compile_condition(cond: dict[str, Any]) -> Callable[[WorkspaceSnapshot], Any]:
    if "all" in cond:
        parts = [compile_condition(c) for c in cond["all"]]
        if not parts:
            raise ConditionError("`all` needs at least one condition")

        def all_of(snap: WorkspaceSnapshot) -> Any:
            results = [p(snap) for p in parts]
            return results if all(results) else None

        return all_of
    resource = cond.get("resource")
    if resource not in RESOURCES:
        raise ConditionError(f"condition.resource must be one of {', '.join(RESOURCES)}")
    where = cond.get("where") or {}
    if not isinstance(where, dict):
        raise ConditionError("condition.where must be an object")
    count = int(cond.get("count", 1))
    absent = bool(cond.get("absent", False))

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
