"""Parsing source code into the language-neutral outline of ``languages.base`` (one module per language).

The rubric's checks and ``skillassay check`` both read this outline, so parsing sits below both. A language
module is imported only when a file of its kind is parsed: grading a Python app never loads the tree-sitter
grammars.

A language outside this package is one module with a ``parse(source: bytes, path: str) -> Module`` function
and one entry point per file extension in the group ``skillassay.languages`` (name: the extension, value:
``"module:parse"``); see docs/languages.md. The built-in table below wins for the extensions it lists.
"""

from __future__ import annotations

import importlib

from skillassay import plugins
from skillassay.languages.base import Parser

ENTRY_POINT_GROUP = "skillassay.languages"

# file extension -> "module:function", imported on first use
PARSERS: dict[str, str] = {
    ".py": "skillassay.languages.python:parse",
    ".rb": "skillassay.languages.ruby:parse",
    ".php": "skillassay.languages.php:parse",
    ".ts": "skillassay.languages.typescript:parse_typescript",
    ".mts": "skillassay.languages.typescript:parse_typescript",
    ".cts": "skillassay.languages.typescript:parse_typescript",
    ".tsx": "skillassay.languages.typescript:parse_tsx",
    ".js": "skillassay.languages.typescript:parse_javascript",
    ".mjs": "skillassay.languages.typescript:parse_javascript",
    ".cjs": "skillassay.languages.typescript:parse_javascript",
    ".jsx": "skillassay.languages.typescript:parse_javascript",
}

_loaded: dict[str, Parser] = {}


def _load(target: str) -> Parser:
    parser = _loaded.get(target)
    if parser is None:
        module, _, name = target.partition(":")
        parser = _loaded[target] = getattr(importlib.import_module(module), name)
    return parser


def plugin_extensions() -> frozenset[str]:
    """Extensions that installed packages' ``skillassay.languages`` entry points name (nothing imported;
    read through ``plugins.quick``, without ``importlib.metadata``)."""
    return frozenset(n.lower() for n in plugins.quick(ENTRY_POINT_GROUP) if n.startswith("."))


def parser_for(path: str) -> Parser | None:
    """The parser for ``path`` (relative, POSIX) by its extension, or None for a file no language reads.
    Raises ``plugins.PluginError`` naming an entry point that cannot be loaded."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".d.ts"):
        return None  # declarations hold no code
    dot = name.rfind(".")
    if dot <= 0:
        return None
    ext = name[dot:].lower()
    target = PARSERS.get(ext)
    if target is not None:
        return _load(target)
    if ext in plugin_extensions():
        return plugins.load_entry(
            ENTRY_POINT_GROUP, next(n for n in plugins.quick(ENTRY_POINT_GROUP) if n.lower() == ext)
        )
    return None


def extensions() -> frozenset[str]:
    """Every file extension some language reads (built in or from an entry point)."""
    return frozenset(PARSERS) | plugin_extensions()
