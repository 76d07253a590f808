"""File formats of eval definitions that a wing brings (the Seam wing: the plan's fixture folders), found
through the ``skillassay.definitions`` entry points. The native and trigger formats are the harness's own
(``definitions/suite.py``); a wing's format says which paths are its definitions, and loads and lints one.
How its evals run and are graded is its kind's (``kinds/base.py``: ``EvalKind``, which also loads one again
on a worker)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from skillassay.definitions.models import FORMATS_GROUP, EvalDefinition
from skillassay.errors import Problem

GROUP = FORMATS_GROUP


class DefinitionFormat(ABC):
    name: str  # EvalDefinition.format of what it loads
    where: str  # where a suite folder holds its definitions, for messages: "fixtures/<name>/eval_config.json"
    named_as: str  # what names one definition, for messages: "a fixture folder, an eval_config.json"
    # the values of EvalDefinition.api_path it loads (``--api-path``)
    api_paths: ClassVar[tuple[str, ...]] = ()
    api_path_aliases: ClassVar[dict[str, str]] = {}  # another name -> the api path it means

    @abstractmethod
    def named(self, path: Path) -> tuple[Path, Path] | None:
        """(source, suite folder) when ``path`` names one definition of this format (a file or a folder)."""

    @abstractmethod
    def in_suite(self, suite: Path) -> list[Path]:
        """The sources of this format's definitions in the suite folder ``suite``."""

    @abstractmethod
    def inspect(self, source: Path, suite_dir: Path) -> tuple[EvalDefinition | None, list[Problem]]:
        """The definition (None when it cannot load) and every problem with it, errors and warnings."""

    def source_id(self, source: Path) -> str:
        """The eval id ``source`` loads as."""
        return source.name


def formats() -> list[DefinitionFormat]:
    """Every registered format (imported now)."""
    from skillassay import plugins

    return [format_named(name) for name in plugins.names(GROUP)]


def format_named(name: str) -> DefinitionFormat:
    from skillassay import plugins

    found = plugins.load(GROUP, name)
    if not isinstance(found, DefinitionFormat):
        raise plugins.PluginError(f"{GROUP} {name!r} is not a DefinitionFormat")
    return found


def api_paths() -> list[str]:
    """Every api path a registered format loads (``--api-path`` takes these and their aliases)."""
    return [p for form in formats() for p in form.api_paths]


def api_path_aliases() -> dict[str, str]:
    return {alias: path for form in formats() for alias, path in form.api_path_aliases.items()}
