"""Language stacks (Express, Next.js, Flask, FastAPI ...): one module each, found through the entry point
group ``skillassay.stacks`` (name: the stack's ``name``, value: ``"module:Class"``, a ``stacks.base.Stack``
subclass), so another package adds one without touching skillassay (docs/languages.md).

Everything that depends on an app's stack asks here: the definition loader and ``init`` (detection), the
sandbox and the app environment (runtime family, registries, runtime mounts, dependency folders), the mutants
(comment and literal syntax) and the Seam wing's rubric (HTTP client libraries, SDK family).
"""

from __future__ import annotations

import functools
from pathlib import Path

from skillassay import plugins
from skillassay.stacks.base import Dependencies, SourceSyntax, Stack, StackCommands

ENTRY_POINT_GROUP = "skillassay.stacks"

# the interface; the functions below are the registry
__all__ = ["Dependencies", "SourceSyntax", "Stack", "StackCommands"]


class StackError(plugins.PluginError):
    """A registered stack that is not a ``Stack``."""


@functools.cache
def all_stacks() -> tuple[Stack, ...]:
    """Every registered stack, in detection order (``Stack.order``, then name). Read through
    ``plugins.quick`` (no ``importlib.metadata``): the rubric asks for the stacks' syntaxes and must start
    fast."""
    found: list[Stack] = []
    for name in plugins.quick(ENTRY_POINT_GROUP):
        cls = plugins.load_entry(ENTRY_POINT_GROUP, name)
        if not (isinstance(cls, type) and issubclass(cls, Stack)):
            raise StackError(f"{ENTRY_POINT_GROUP} {name!r} is not a skillassay.stacks.base.Stack subclass")
        found.append(cls())
    return tuple(sorted(found, key=lambda s: (s.order, s.name)))


def refresh() -> None:
    """Forget the stacks found (after registering another one)."""
    all_stacks.cache_clear()
    families.cache_clear()
    syntax_of.cache_clear()
    http_clients.cache_clear()


def by_name(name: str) -> Stack:
    for stack in all_stacks():
        if stack.name == name:
            return stack
    raise plugins.PluginError(f"no stack {name!r}; available: {', '.join(s.name for s in all_stacks())}")


def detect(app: Path, strict: bool = False) -> Stack | None:
    """The first stack, in detection order, the app's files say it is (None: none). ``strict``: a framework
    counts when declared as a dependency (``init``), else when its name is in the manifest (the loader)."""
    return next((s for s in all_stacks() if s.detect(app, strict)), None)


@functools.cache
def families() -> tuple[Stack, ...]:
    """One stack per runtime family (its bare stack, named as the family, when registered), in mount order."""
    out: dict[str, Stack] = {}
    for stack in all_stacks():
        if stack.family not in out or stack.name == stack.family:
            out[stack.family] = stack
    return tuple(sorted(out.values(), key=lambda s: (s.mount_order, s.family)))


def family(name: str) -> Stack:
    """The stack speaking for the runtime family ``name`` ("node", "python")."""
    for stack in families():
        if stack.family == name:
            return stack
    raise plugins.PluginError(
        f"no stack of the runtime {name!r}; known: {', '.join(s.family for s in families())}"
    )


def family_of_image(image: str) -> str | None:
    """The runtime family whose Dockerfile base image ``image`` (a name, no registry or tag) is."""
    return next((s.family for s in families() if image in s.images), None)


def family_from_files(app_dir: Path) -> str | None:
    """The runtime family an app's files say, with no Dockerfile to ask: its stack's (``detect``), else the
    first family, in detection order, with one of its ``runtime_files``."""
    if (found := detect(app_dir)) is not None:
        return found.family
    for stack in sorted(families(), key=lambda s: s.order):
        if any((app_dir / f).exists() for f in stack.runtime_files):
            return stack.family
    return None


@functools.cache
def syntax_of(language: str) -> SourceSyntax | None:
    """The syntax of the parsed language ``language`` (``Module.language``), or None."""
    return next((x for s in all_stacks() for x in s.syntaxes if x.language == language), None)


def syntax_for(path: str) -> SourceSyntax:
    """The syntax a source file is written in, by its extension; a file no stack names is read as the first
    syntax in detection order (JavaScript for the shipped stacks, as the parsers read it)."""
    name = path.rsplit("/", 1)[-1].lower()
    every = [x for s in all_stacks() for x in s.syntaxes]
    return next((x for x in every if name.endswith(x.extensions)), every[0])


@functools.cache
def http_clients(sdk_family: str) -> frozenset[str]:
    """The HTTP client libraries of every source language whose code calls the ``sdk_family`` SDK."""
    return frozenset(
        c for s in all_stacks() for x in s.syntaxes if x.sdk_family == sdk_family for c in x.http_clients
    )


def registries(language: str) -> list[str]:
    """The registries the installs of an app written in the definition language ``language`` may reach."""
    stack = next((s for s in families() if language in s.definition_languages), None)
    return list(stack.registries) if stack is not None else []
