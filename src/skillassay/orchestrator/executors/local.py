"""The local executor: runs on this machine, ``--jobs`` at a time, in a thread pool (the work is subprocesses
and I/O). The job's services (the emulator) live in this process for the job's length."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, as_completed

from skillassay import reaper
from skillassay.orchestrator.config import JobOptions
from skillassay.orchestrator.executors.base import Executor, Finished, JobWork
from skillassay.orchestrator.trial import RunSpec, run_trial
from skillassay.store.records import RunRecord


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, jobs: int = 1):
        if jobs < 1:
            raise ValueError("--jobs must be at least 1")
        self.jobs = jobs

    @classmethod
    def from_options(cls, opts: JobOptions) -> LocalExecutor:
        return cls(opts.jobs)

    def describe(self) -> str:
        return f"local, --jobs {self.jobs}"

    def run(self, work: JobWork, specs: list[RunSpec]) -> Finished:
        services = work.services.open()
        try:

            def one(spec: RunSpec) -> RunRecord:
                return run_trial(spec, work.definitions[spec.eval_id], work.results_root, services=services)

            yield from self._map(one, specs)
        finally:
            services.close()

    def _map(self, fn, items: list[RunSpec]) -> Finished:
        if self.jobs == 1:
            # serial: no thread at all, so Ctrl-C lands in the running step directly
            for item in items:
                try:
                    yield item, fn(item)
                except Exception as exc:  # noqa: BLE001
                    yield item, exc
            return
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="skillassay-run")
        futures: dict[Future, RunSpec] = {pool.submit(fn, item): item for item in items}
        try:
            for fut in as_completed(futures):
                item = futures[fut]
                failed = fut.exception()
                yield item, (failed if failed is not None else fut.result())
        except BaseException:
            # Ctrl-C (or the consumer giving up: GeneratorExit) lands here, never in the worker threads, and
            # their agents and apps run in their own process groups, out of the terminal's reach. Kill those
            # groups so the threads return now; while waiting for them, new groups are refused and the runs
            # abandoned.
            for fut in futures:
                fut.cancel()
            with reaper.stopping():
                reaper.kill_all()
                pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            for fut in futures:
                fut.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
