"""Python parsing is serialised: CPython 3.11 keeps the AST converter's recursion depth in module state shared
by all threads, so two conversions interleaving (a GC finaliser can release the GIL mid-conversion) end in
"SystemError: AST constructor recursion depth mismatch" (seen once in CI, in the controls' thread pool)."""

from __future__ import annotations

import threading

from skillassay.languages import pyparse


def test_a_parse_waits_for_the_one_in_progress() -> None:
    done = threading.Event()

    def parse() -> None:
        pyparse.parse("x = 1")
        done.set()

    with pyparse._LOCK:  # another thread's parse is "in progress"
        t = threading.Thread(target=parse)
        t.start()
        assert not done.wait(0.3)
    assert done.wait(5)
    t.join()


def test_parses() -> None:
    tree = pyparse.parse("def f(a):\n    return a\n", filename="m.py")
    assert tree.body[0].name == "f"
