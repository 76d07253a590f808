"""What the distributions on ``sys.path`` register, read straight from their ``entry_points.txt``:
``importlib.metadata`` costs about 0.2 s to import and scan, more than the whole of a fast command
(``skillassay rubric``). This module imports nothing beyond ``os`` and ``sys``, so a fast command's
process pays for nothing else; ``plugins.py`` holds the full lookup, conflicts and errors.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OWN_DISTRIBUTION = "skillassay"

_entries: dict[str, tuple[tuple[str, str], ...]] = {}
_files: list[tuple[tuple[bool, str], ...]] = []


def forget() -> None:
    """Read the files again on next use (after installing a package into the running environment)."""
    _entries.clear()
    _files.clear()


def quick(group: str) -> dict[str, str]:
    """``name -> "module:attr"`` of ``group``, read straight from the ``entry_points.txt`` of the
    distributions on ``sys.path``: ``importlib.metadata`` costs about 0.2 s to import and scan, more than
    the whole of a fast command (``skillassay rubric``). skillassay's own names win, as in ``names``;
    between others, the first found wins. Read once per group (``plugins.refresh`` forgets it)."""
    return dict(quick_entries(group))


def quick_entries(group: str) -> tuple[tuple[str, str], ...]:
    """``quick``'s ``(name, value)`` pairs, in the order found (other packages', then skillassay's)."""
    if group in _entries:
        return _entries[group]
    header = f"[{group}]"
    own: dict[str, str] = {}
    others: dict[str, str] = {}
    for is_own, text in _entry_point_files():
        if header not in text:
            continue
        into = own if is_own else others
        for name, value in _section(text, header):
            into.setdefault(name, value)
    _entries[group] = tuple({**others, **own}.items())
    return _entries[group]


def _entry_point_files() -> tuple[tuple[bool, str], ...]:
    """(skillassay's own?, text) of every ``entry_points.txt`` of the distributions on ``sys.path``, in
    order: read once for every group ``quick`` is asked about (a rubric run asks three)."""
    if _files:
        return _files[0]
    found: list[tuple[bool, str]] = []
    for entry in sys.path:
        try:
            folders = [n for n in os.listdir(entry or ".") if n.endswith(".dist-info")]
        except OSError:
            continue
        for folder in folders:
            try:
                with open(os.path.join(entry or ".", folder, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            found.append((folder.split("-", 1)[0].lower() == OWN_DISTRIBUTION, text))
    _files.append(tuple(found))
    return _files[0]


def _section(text: str, header: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == header
        elif inside and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def load_quick(value: str) -> Any:
    """The object a ``quick`` value names (``module:attr`` or ``module``), imported now."""
    import importlib

    module, _, attr = value.partition(":")
    found: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else []:
        found = getattr(found, part)
    return found
