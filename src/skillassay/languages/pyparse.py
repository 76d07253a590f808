"""Parsing Python source with ``ast``, safely from several threads, within the parsers' bounds
(``languages.bounds``).

CPython 3.11 can fail with ``SystemError: AST constructor recursion depth mismatch`` when two threads build
AST objects at once (graders run in parallel with ``--jobs`` and when controls are checked). Parsing is fast,
so one lock around it costs nothing measurable and makes every grader that reads Python deterministic.

A file larger than ``bounds.MAX_SOURCE_BYTES``, nested deeper than the parser itself goes (RecursionError) or,
with ``max_depth``, than that many levels, or that exhausts its memory raises ``bounds.Unparsable``; a syntax
error stays a SyntaxError (the file does not parse: the callers' own rule). The depth is counted only for
callers that hand the tree to recursive readers (``ast.dump``, ``ast.unparse``, visitors): it costs about as
much as the parse.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

from skillassay.languages import bounds

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", max_depth: int | None = None) -> ast.Module:
    bounds.check_size(filename, len(source))
    with bounds.parsing(filename):
        with _LOCK:
            tree = ast.parse(source, filename=filename)
        if max_depth is not None and tree_depth(tree, max_depth) > max_depth:
            raise bounds.Unparsable(
                filename, f"its syntax tree nests more than {max_depth} levels deep (the parsers' bound)"
            )
    return tree


def compile_tree(tree: ast.Expression, filename: str) -> CodeType:
    """``compile(tree, filename, "eval")`` under the parse lock: CPython 3.11 converts and validates a tree
    built in Python with the same interpreter-wide depth counter ``ast.parse`` uses."""
    with _LOCK:
        return compile(tree, filename, "eval")


def tree_depth(tree: ast.AST, limit: int) -> int:
    """How many levels ``tree`` nests, counted without recursion; stops one past ``limit``."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest
