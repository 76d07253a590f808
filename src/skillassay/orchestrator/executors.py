"""Where runs execute. The job hands each run to an executor; the local one uses a thread pool (the work is
subprocesses and I/O). A distributed backend implements the same two methods."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import TypeVar

from skillassay import reaper

T = TypeVar("T")
R = TypeVar("R")


class Executor(ABC):
    @abstractmethod
    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | BaseException]]:
        """Run ``fn`` on every item; yield (item, result or exception) as each finishes."""

    def shutdown(self) -> None:  # pragma: no cover - nothing to release locally
        return None


class LocalExecutor(Executor):
    def __init__(self, jobs: int = 1):
        if jobs < 1:
            raise ValueError("--jobs must be at least 1")
        self.jobs = jobs
        self._pool: ThreadPoolExecutor | None = None

    def map_unordered(self, fn, items):
        items = list(items)
        if self.jobs == 1:
            # serial: no thread at all, so Ctrl-C lands in the running step directly
            for item in items:
                try:
                    yield item, fn(item)
                except Exception as exc:  # noqa: BLE001
                    yield item, exc
            return
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="skillassay-run")
        futures: dict[Future, object] = {self._pool.submit(fn, item): item for item in items}
        try:
            for fut in as_completed(futures):
                item = futures[fut]
                exc = fut.exception()
                yield item, (exc if exc is not None else fut.result())
        except BaseException:
            # Ctrl-C (or the consumer giving up: GeneratorExit) lands here, never in the worker threads, and their
            # agents and apps run in their own process groups, out of the terminal's reach. Kill those groups so the
            # threads return now; while waiting for them, new groups are refused and the runs abandoned.
            for fut in futures:
                fut.cancel()
            with reaper.stopping():
                reaper.kill_all()
                self._pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            for fut in futures:
                fut.cancel()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
