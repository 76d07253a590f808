"""What each run is doing now (workspace, agent, install, build, start, checks, grading), for the progress
display.

A run names its phases with ``phase(name)`` from wherever it is (the trial, the sandbox's backend); the run it
belongs to is the one ``running`` entered in this thread. Listeners (the CLI's progress, the job's live
state) hear every phase of the runs of this process, and those an executor ``relay``s from elsewhere (the
Ray executor's, from its workers). A listener never fails a run."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class RunKey:
    job_id: str
    eval_id: str
    variant: str
    run_index: int

    def label(self) -> str:
        return f"{self.eval_id}{' baseline' if self.variant == 'baseline' else ''} run {self.run_index}"


Listener = Callable[[RunKey, str], None]
_listeners: list[Listener] = []
_run: ContextVar[RunKey | None] = ContextVar("skillassay_run", default=None)


@contextmanager
def listening(fn: Listener) -> Iterator[None]:
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)


@contextmanager
def running(key: RunKey) -> Iterator[None]:
    token = _run.set(key)
    try:
        yield
    finally:
        _run.reset(token)


def phase(name: str) -> None:
    key = _run.get()
    if key is None:
        return
    relay(key, name)


def relay(key: RunKey, name: str) -> None:
    """Tell the listeners run ``key`` is in phase ``name`` (``phase`` for a run of this thread; an executor
    for a run it carries out elsewhere)."""
    for fn in _listeners.copy():  # another thread may add or remove one meanwhile
        with contextlib.suppress(Exception):  # a display's fault is never the run's
            fn(key, name)
