"""Executors by name, through the ``skillassay.executors`` entry points (``skillassay.plugins``): skillassay
ships ``local`` and ``ray``; another package adds one by declaring ``name = "module:Class"`` (an
``Executor``). Modules are imported on first use, so Ray is imported only when the Ray executor is asked
for."""

from __future__ import annotations

from skillassay import plugins
from skillassay.errors import SkillassayError
from skillassay.orchestrator.config import JobOptions
from skillassay.orchestrator.executors.base import Executor, JobWork

GROUP = "skillassay.executors"


def available_executors() -> list[str]:
    return plugins.names(GROUP)


def executor_class(name: str) -> type[Executor]:
    if not plugins.registered(GROUP, name):
        raise SkillassayError(
            f"--executor {name}: unknown executor; available: {', '.join(available_executors())}"
        )
    return plugins.load(GROUP, name)


def create_executor(name: str, opts: JobOptions) -> Executor:
    return executor_class(name).from_options(opts)


__all__ = ["Executor", "JobWork", "available_executors", "create_executor", "executor_class"]
