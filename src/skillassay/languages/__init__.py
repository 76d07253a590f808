"""Parsing source code into the language-neutral outline of ``languages.base`` (one module per language).

The rubric's checks and ``skillassay check`` both read this outline, so parsing sits below both. A language module
is imported only when a file of its kind is parsed: grading a Python app never loads the tree-sitter grammars.
"""

from __future__ import annotations

import importlib

from skillassay.languages.base import Parser

# file extension -> "module:function", imported on first use
PARSERS: dict[str, str] = {
    ".py": "skillassay.languages.python:parse",
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


def parser_for(path: str) -> Parser | None:
    """The parser for ``path`` (relative, POSIX) by its extension, or None for a file no language reads."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".d.ts"):
        return None  # declarations hold no code
    dot = name.rfind(".")
    target = PARSERS.get(name[dot:].lower()) if dot > 0 else None
    return _load(target) if target else None
