"""Agents, graders, detectors and external services are found through entry points, so another package adds
one without forking skillassay. skillassay registers its own the same way (``pyproject.toml``).

Groups and what an entry point names:
- ``skillassay.agents``: an ``agents.base.Agent`` subclass (``name = "module:Class"``);
- ``skillassay.graders``: a criterion grader, ``(Criterion, ProcessContext) -> GradeResult``; an optional
  ``options`` attribute (a pydantic model) validates the criterion's ``options`` when a definition loads;
- ``skillassay.detectors``: a forbidden-behaviour detector, ``(ForbiddenBehaviour, ProcessContext) ->
  Detection``, ``options`` likewise;
- ``skillassay.services``: an emulator of an external service the apps under test talk to (``start``,
  ``stop``, ``base_url``);
- ``skillassay.executors``: an ``orchestrator.executors.base.Executor`` subclass: where a job's runs execute;
- ``skillassay.isolation``: an ``isolation.base.Isolation`` subclass: how agents, apps and graders' commands
  are sealed (``--isolation``);
- ``skillassay.stacks``: a ``stacks.base.Stack`` subclass: a language stack (Express, Flask ...): how its apps
  are recognised, installed, started and written (docs/languages.md);
- ``skillassay.commands``: a module exporting ``commands``, a ``typer.Typer`` holding the command of that name
  (``cli/main.py`` lists them after its own); ``skillassay.commands.fast``: ``(argv) -> int | None``, the same
  command run without typer for plain arguments (None: let typer handle them), found by ``quick`` without
  ``importlib.metadata``;
- ``skillassay.definitions``: a ``definitions.formats.DefinitionFormat``: a file format of eval definitions,
  its loader and its lint (``definitions/suite.py``, ``definitions/validation.py``);
- ``skillassay.kinds``: a ``kinds.base.EvalKind`` subclass: a kind of eval (how its runs are made and graded);
- ``skillassay.scaffolds``: a ``scaffold.AppScaffold``: the files of a kind's eval written around the user's
  app (``init --app``);
- ``skillassay.languages``: a parser ``(source: bytes, path: str) -> languages.base.Module`` named by the file
  extension it reads (``.rb``); skillassay's own languages are its ``languages.PARSERS`` table
  (docs/languages.md).

An entry point is imported only when its name is asked for. A name skillassay ships cannot be taken over by
another package (that entry point is ignored and listed by ``conflicts``); between two other packages, the
first found wins.
"""

from __future__ import annotations

import functools
from typing import Any

from skillassay import entry_point_text
from skillassay.entry_point_text import OWN_DISTRIBUTION, load_quick, quick
from skillassay.errors import SkillassayError

__all__ = ["OWN_DISTRIBUTION", "PluginError", "load_quick", "quick"]  # the quick readers: entry_point_text.py

GROUPS = (
    "skillassay.agents",
    "skillassay.graders",
    "skillassay.detectors",
    "skillassay.services",
    "skillassay.executors",
    "skillassay.isolation",
    "skillassay.stacks",
    "skillassay.kinds",
    "skillassay.commands",
    "skillassay.definitions",
    "skillassay.scaffolds",
)


class PluginError(SkillassayError):
    """An entry point that is not registered, or that cannot be imported."""


@functools.cache
def _scan(group: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    owners: dict[str, str] = {}
    conflicts: list[str] = []
    for ep in entry_points(group=group):
        dist = ep.dist.name if ep.dist is not None else "?"
        if ep.name in found:
            if dist == OWN_DISTRIBUTION and owners[ep.name] != OWN_DISTRIBUTION:
                conflicts.append(
                    f"{group}: {ep.name!r} of {owners[ep.name]} ignored (skillassay ships that name)"
                )
                found[ep.name], owners[ep.name] = ep, dist
            elif ep.value != found[ep.name].value:
                conflicts.append(
                    f"{group}: {ep.name!r} of {dist} ignored ({owners[ep.name]} registered it first)"
                )
            continue
        found[ep.name], owners[ep.name] = ep, dist
    if group in GROUPS and OWN_DISTRIBUTION not in owners.values():
        raise PluginError(
            f"no {group} entry points of skillassay itself: its installed metadata is out of date; "
            "reinstall it (pip install -e .)"
        )
    return found, tuple(conflicts)


def names(group: str) -> list[str]:
    """Every registered name of ``group``: skillassay's own first, then other packages', each sorted."""
    found, _ = _scan(group)
    own = sorted(n for n, ep in found.items() if ep.dist is not None and ep.dist.name == OWN_DISTRIBUTION)
    return own + sorted(n for n in found if n not in own)


def registered(group: str, name: str) -> bool:
    return name in _scan(group)[0]


def shipped(group: str, name: str) -> bool:
    ep = _scan(group)[0].get(name)
    return ep is not None and ep.dist is not None and ep.dist.name == OWN_DISTRIBUTION


def conflicts(group: str) -> list[str]:
    return list(_scan(group)[1])


@functools.cache
def load(group: str, name: str) -> Any:
    """The object the entry point ``name`` of ``group`` names (imported now). Raises PluginError."""
    ep = _scan(group)[0].get(name)
    if ep is None:
        raise PluginError(
            f"no {group.rsplit('.', 1)[-1][:-1]} {name!r}; available: {', '.join(names(group))}"
        )
    try:
        return ep.load()
    except Exception as exc:
        raise PluginError(
            f"{group} {name!r} ({ep.value}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc


def refresh() -> None:
    """Forget what was scanned and loaded (after installing a package into the running environment)."""
    _scan.cache_clear()
    load.cache_clear()
    entry_point_text.forget()
    load_entry.cache_clear()


@functools.cache
def load_entry(group: str, name: str) -> Any:
    """``load`` without ``importlib.metadata``: the object the entry point ``name`` of ``group`` names, as
    ``quick`` finds it (imported now). Raises PluginError as ``load`` does."""
    found = quick(group)
    value = found.get(name)
    if value is None:
        raise PluginError(
            f"no {group.rsplit('.', 1)[-1][:-1]} {name!r}; available: {', '.join(sorted(found))}"
        )
    try:
        return load_quick(value)
    except Exception as exc:
        raise PluginError(
            f"{group} {name!r} ({value}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc
