"""The emulator shares the process with graders that parse Python in threads (``run --jobs``). Python code
run by the garbage collector (a ``gc.callbacks`` hook) lets another thread in while CPython 3.11 converts a
syntax tree, and two conversions at once fail with "AST constructor recursion depth mismatch": a grader's
error charged to a run (it happened in the README's first run with the emulator's own hook; a script
parsing under our lock beside unlocked traceback formatting failed that way within seconds with such a
hook, never without). Loading the emulator must leave the collector without a hook of ours."""

from __future__ import annotations

import gc

from skillassay.seam.emulator import app as emulator_app  # noqa: F401 - loaded for its side effects


def test_the_emulator_adds_no_collector_hook():
    ours = [cb for cb in gc.callbacks if getattr(cb, "__module__", "").startswith("skillassay")]
    assert ours == []
