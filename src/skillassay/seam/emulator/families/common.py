"""Small helpers the family handlers share: look-ups that answer Seam's ``<resource>_not_found`` and
``custom_metadata`` merged the way Seam merges it."""

from __future__ import annotations

from typing import Any

from skillassay.seam.emulator.errors import SeamApiError, invalid_input, not_found


def lookup(records: dict[str, dict], record_id: str | None, resource: str) -> dict:
    """The record with this id, or Seam's 404 ``<resource>_not_found``."""
    record = records.get(record_id or "")
    if record is None:
        raise not_found(resource, f"{resource.replace('_', ' ').capitalize()} not found: {record_id}")
    return record


def merge_metadata(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Seam's custom_metadata update: the keys given replace the stored ones, a null value removes its key."""
    merged = dict(current)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    if len(merged) > 50:
        raise invalid_input(
            "custom_metadata holds at most 50 keys",
            {"_errors": [], "custom_metadata": {"_errors": ["custom_metadata holds at most 50 keys"]}},
        )
    return merged


def one_of(params: dict, *names: str) -> None:
    """400 ``invalid_input`` unless at least one of ``names`` is given."""
    if not any(params.get(n) is not None for n in names):
        message = f"Must specify {' or '.join(names)}"
        raise invalid_input(message, {"_errors": [message]})


def conflict(type_: str, message: str) -> SeamApiError:
    return SeamApiError(400, type_, message)
