"""How much source the harness's parsers take: the one bound every grader, detector and the rubric parse
under.

Whatever the agent wrote is read by the harness's own process, so a file must not be able to make a parser
raise what looks like the harness's failure (a 100,000-term expression: RecursionError; a long chain of signs:
MemoryError), nor take the harness's memory or time. A file over a bound raises ``Unparsable`` naming it and
the bound: nobody can say what it holds, and the graders turn that into "unmeasurable because of the change"
(graders/engine.py, orchestrator/grading.py; docs/results.md, "Unmeasurable because of the change").

- size: ``MAX_SOURCE_BYTES`` per file parsed;
- depth: ``MAX_DEPTH`` levels of syntax tree (Python refuses 200 nested parentheses itself; deeper trees break
  the recursive readers of ``ast``), and whatever a recursive reader of a tree cannot reach (RecursionError);
- memory: a parser running out of memory on one file (MemoryError);
- time: ``budget(seconds)`` of CPU time (the thread's own, so a loaded machine does not count) spent parsing,
  for one grader or detector.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

MAX_SOURCE_BYTES = 2_000_000  # larger files are bundles or generated code, never an edit worth reading
MAX_DEPTH = 200  # syntax-tree levels; real code nests tens
PARSE_CPU_SECONDS = 30.0  # of parsing, per grader or detector (an app parses in milliseconds)


class Unparsable(Exception):
    """``path`` is beyond what the harness's parsers take (``reason``): what it holds cannot be said."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


@dataclass
class _Budget:
    """The parse time a grade has, and what is left of it."""

    seconds: float
    left: float


_BUDGET: ContextVar[_Budget | None] = ContextVar("skillassay_parse_budget", default=None)


@contextmanager
def budget(seconds: float = PARSE_CPU_SECONDS) -> Iterator[None]:
    """Every parse inside shares ``seconds`` of CPU time; the parse that spends the last raises Unparsable."""
    token = _BUDGET.set(_Budget(seconds, seconds))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def check_size(path: str, size: int) -> None:
    if size > MAX_SOURCE_BYTES:
        raise Unparsable(path, f"{size:,} bytes, beyond the parsers' bound of {MAX_SOURCE_BYTES:,}")


@contextmanager
def parsing(path: str) -> Iterator[None]:
    """Around one file's parse and outline: what the file can provoke becomes Unparsable naming it."""
    started = time.thread_time()
    try:
        yield
    except RecursionError:
        raise Unparsable(path, "nested too deep for the parsers (RecursionError)") from None
    except MemoryError:
        raise Unparsable(path, "parsing it ran out of memory (MemoryError)") from None
    finally:
        spent = _BUDGET.get()
        if spent is not None:
            spent.left -= time.thread_time() - started
    if spent is not None and spent.left < 0:
        raise Unparsable(
            path, f"parsing the change took more CPU time than the bound of {spent.seconds:g} s per grader"
        )


_DEEP = threading.Lock()
_deep_users = 0
_saved_limit = 0


@contextmanager
def deep_recursion(limit: int) -> Iterator[None]:
    """The interpreter's recursion limit raised to at least ``limit`` while any thread is inside: set by the
    first to enter and put back by the last to leave (one thread putting it back under another's feet would
    make that one's file look too deep)."""
    global _deep_users, _saved_limit  # noqa: PLW0603 - the process-wide recursion limit, under _DEEP
    with _DEEP:
        if _deep_users == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, limit))
        _deep_users += 1
    try:
        yield
    finally:
        with _DEEP:
            _deep_users -= 1
            if _deep_users == 0:
                sys.setrecursionlimit(_saved_limit)
