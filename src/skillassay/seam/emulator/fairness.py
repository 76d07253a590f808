"""A fair share of the emulator for every workspace.

All runs share one emulator process, so one run's app could starve the others of CPU (and of the interpreter
lock) with expensive requests: megabyte bodies that must be validated item by item, huge pushes. Each
workspace therefore has a CPU budget, a token bucket measured in CPU seconds of the worker threads that did
its requests: it refills at ``share`` seconds per second up to ``burst``; while a workspace is in debt its
next request waits (it is not refused). And at most ``concurrency`` of its requests are in work at once. A
normal integration (milliseconds per request) never notices; an abusive one slows itself down, not its
neighbours.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


def full_collections() -> int:
    """How many full collections the garbage collector has run in this process. Counted, not timed: timing
    them takes a ``gc.callbacks`` hook, and Python code run by the collector lets another thread in while
    CPython 3.11 converts a syntax tree (a grader's ``ast.parse``, a traceback's carets), which then fails
    with "AST constructor recursion depth mismatch"."""
    return gc.get_stats()[2]["collections"]


class WorkspaceBudget:
    def __init__(self, share: float, burst: float, concurrency: int):
        self.share = share
        self.burst = burst
        self._tokens = burst
        self._stamp = time.monotonic()
        self._lock = threading.Lock()  # charged from worker threads, read on the event loop
        self._slots = asyncio.Semaphore(concurrency)
        self._quick: set[str] = set()  # routes whose requests here were all quick so far
        self._slow: set[str] = set()  # routes that took long at least once here: never quick again

    def took(self, route: str, seconds: float, limit: float) -> None:
        (self._quick if seconds < limit and route not in self._slow else self._slow).add(route)
        if route in self._slow:
            self._quick.discard(route)

    def was_quick(self, route: str) -> bool:
        """Whether every request of ``route`` in this workspace so far was quick (False before the first, and
        for good after a slow one: an app cannot alternate cheap and costly requests to run the costly ones
        on the event loop)."""
        return route in self._quick

    def _refill(self) -> float:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.share)
        self._stamp = now
        return self._tokens

    def charge(self, cpu_seconds: float) -> None:
        with self._lock:
            self._refill()
            self._tokens -= cpu_seconds

    def debt_wait(self) -> float:
        """Seconds until the budget is out of debt (0 when it is not in debt)."""
        with self._lock:
            tokens = self._refill()
        return -tokens / self.share if tokens < 0 else 0.0

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for a slot and for the budget to be out of debt; the caller then does the work and
        ``charge``s it.
        """
        async with self._slots:
            wait = self.debt_wait()
            if wait > 0:
                await asyncio.sleep(wait)
            yield
