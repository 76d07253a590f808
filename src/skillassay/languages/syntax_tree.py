"""What the tree-sitter language modules (``ruby.py``, ``php.py``) share: a parser per thread, and a node's
text, byte span and line."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

import tree_sitter as ts

from skillassay.languages.base import Span


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
