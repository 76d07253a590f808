"""Executors by name: the built-in ones, plus any a package declares under the ``skillassay.executors`` entry points
(``name = "module:Class"``, the class an ``Executor``). Modules are imported on first use, so Ray is imported only
when the Ray executor is asked for."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from skillassay.errors import SkillassayError
from skillassay.orchestrator.executors.base import Executor, JobWork

ENTRY_POINT_GROUP = "skillassay.executors"
_BUILTIN = {
    "local": "skillassay.orchestrator.executors.local:LocalExecutor",
    "ray": "skillassay.orchestrator.executors.ray:RayExecutor",
}


def _registry() -> dict[str, str]:
    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def available_executors() -> list[str]:
    return list(_registry())


def executor_class(name: str) -> type[Executor]:
    registry = _registry()
    if name not in registry:
        raise SkillassayError(f"--executor {name}: unknown executor; available: {', '.join(registry)}")
    module, cls = registry[name].split(":")
    return getattr(importlib.import_module(module), cls)


def create_executor(name: str, opts: Any) -> Executor:
    return executor_class(name).from_options(opts)


__all__ = ["Executor", "JobWork", "available_executors", "create_executor", "executor_class"]
