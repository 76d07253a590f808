"""What the tree-sitter language modules (``typescript.py``, ``ruby.py``, ``php.py``) share: a grammar
loaded without its package's extras, a parser per thread, and a node's text, byte span and line."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import cast

import tree_sitter as ts

from skillassay.languages.base import Span


def grammar(package: str, function: str) -> ts.Language:
    """The grammar ``package._binding.function()`` (``tree_sitter_ruby``, ``language``). Only the compiled
    binding is loaded: the package's ``__init__`` imports ``importlib.resources`` for its query files, and
    with it tempfile, shutil and the compression modules, about 12 ms a ``skillassay rubric`` process never
    needs. A binding already loaded (the package imported) is reused; a package laid out otherwise is
    imported as usual."""
    name = f"{package}._binding"
    binding = sys.modules.get(name)
    if binding is None:
        binding = _load_binding(package, name)
    return ts.Language(getattr(binding, function)())


def _load_binding(package: str, name: str) -> ModuleType:
    found = importlib.machinery.PathFinder.find_spec(package)  # finds the package without running it
    folders = found.submodule_search_locations if found is not None else None
    for folder in folders or []:
        located = importlib.machinery.PathFinder.find_spec("_binding", [folder])
        if located is None or located.origin is None:
            continue
        spec = importlib.util.spec_from_file_location(name, located.origin)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
            return module
    return importlib.import_module(name)


class ThreadParsers:
    """One parser of a grammar per thread (a tree-sitter parser is not safe to share between threads); the
    grammar is loaded on the first parse."""

    def __init__(self, language: Callable[[], ts.Language]):
        self._language = language
        self._local = threading.local()

    def get(self) -> ts.Parser:
        parser = getattr(self._local, "parser", None)
        if parser is None:
            parser = self._local.parser = ts.Parser(self._language())
        return parser


def text(node: ts.Node) -> str:
    return cast(bytes, node.text).decode("utf-8", "replace")


def span(node: ts.Node) -> Span:
    return node.start_byte, node.end_byte


def line(node: ts.Node) -> int:
    return node.start_point[0] + 1
