"""The Ray executor: one job's runs spread over a Ray cluster (KubeRay, plain VMs with ``ray start``, or a
local one).

Each run is a Ray task that reserves what the run declares (CPUs and memory: the eval's ``resources``, raised
to its agent's). The agent, the app build and the graders all run on the worker, exactly as on one machine;
the driver keeps the results store. Nothing assumes a shared filesystem:

- the files the runs read (each eval's part of the suite, the skill) go into Ray's object store once, as one
  archive; a worker unpacks it once per machine (``shipping``);
- the run-level services (the Seam emulator) are opened on the worker (``services.on_worker``);
- a run's phases stream back as it enters them (the driver relays them: ``phases.relay``, for the progress
  and the job's live state);
- a finished run comes back as an archive of its folder, which the driver writes into the results root before
  it yields the record; the job then indexes it, as runs finish.

Failures. A task first reports where it runs (a streaming task: that report, then the result). A worker or
node that dies mid-run loses that attempt: its orphaned process groups are killed (``ledger``) and the run
starts again, from scratch, on another node, up to ``max_attempts`` in all; when they run out the run is
recorded as a harness error (so ``--resume`` reruns it). Only a finished attempt's folder is ever written, so
a run is never counted twice.

Ctrl-C. Pending tasks are cancelled; running ones get a KeyboardInterrupt (their runs kill their own groups),
every node is swept with a stop mark (nothing new starts there), tasks still running after a grace period are
force-killed, and every node is swept again.
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from skillassay import phases, reaper
from skillassay.definitions.models import EvalDefinition
from skillassay.definitions.resources import Resources
from skillassay.errors import SkillassayError
from skillassay.orchestrator.config import JobOptions
from skillassay.orchestrator.executors import ledger, shipping
from skillassay.orchestrator.executors.base import Executor, Finished, JobWork
from skillassay.orchestrator.model_access import BudgetSpent
from skillassay.orchestrator.trial import RunSpec, harness_failure, run_trial
from skillassay.store.files import claim_run_dir, write_run_file
from skillassay.store.records import RunRecord

log = logging.getLogger(__name__)

NODE_LABEL = "ray.io/node-id"
STOP_POLL = 0.2  # seconds: how often a running task looks for Ctrl-C's stop mark


def _ray():
    try:
        import ray
    except ImportError:
        raise SkillassayError("--executor ray needs Ray: pip install 'skillassay[ray]'") from None
    return ray


_remote: dict[str, Any] = {}


def _remote_fn(ray, fn) -> Any:
    """The Ray remote function for ``fn``, made once per process (each new one would be exported again)."""
    if fn.__name__ not in _remote:
        _remote[fn.__name__] = ray.remote(fn)
    return _remote[fn.__name__]


# ============================================================================================== on the worker
def run_attempt(
    work: JobWork,
    spec: RunSpec,
    inputs_key: str,
    inputs: list,
    session: tuple[str, str],
) -> Iterator[dict]:
    """One attempt at one run, as a streaming Ray task: first where it runs, then the finished run."""
    ray = _ray()
    yield {"node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}

    book = ledger.Ledger(*session, spec.rel_dir)
    if book.stopped():
        raise KeyboardInterrupt  # the job is being cancelled: this run must not start
    scratch = Path(tempfile.mkdtemp(prefix="skillassay-ray-run-"))
    reaper.add_watcher(book.watch)
    try:
        here = shipping.unpack_inputs(inputs_key, lambda: ray.get(inputs[0]))
        original = work.definitions[spec.eval_id]
        definition = shipping.definition_here(original, here)
        from skillassay.orchestrator.run_services import on_worker

        services = on_worker(work.services)
        done: dict[str, Any] = {}

        def body() -> None:
            try:
                done["record"] = run_trial(
                    spec,
                    definition,
                    scratch,
                    services=services,
                    skill_dir=shipping.skill_here(work.skill, here),
                    definition_source=original.source,
                )
            except BaseException as exc:  # noqa: BLE001 - handed to the task's thread below
                done["error"] = exc

        # The run goes on in a thread; this (the task's main) thread stays free to receive Ray's cancellation
        # (KeyboardInterrupt, delivered only between bytecodes: a main thread blocked in waitpid would never
        # see it), to notice the stop mark of a Ctrl-C sweep, and to stream the run's phases to the driver.
        key = phases.RunKey(spec.job_id, spec.eval_id, spec.variant, spec.run_index)
        heard: queue.SimpleQueue[str] = queue.SimpleQueue()
        thread = threading.Thread(target=body, name=f"skillassay-{spec.eval_id}", daemon=True)
        try:
            with phases.listening(lambda k, name: heard.put(name) if k == key else None):
                thread.start()
                while thread.is_alive():
                    thread.join(STOP_POLL)
                    if book.stopped():
                        raise KeyboardInterrupt
                    while not heard.empty():
                        yield {"phase": heard.get()}
                while not heard.empty():  # a last phase begun within the last poll
                    yield {"phase": heard.get()}
        except KeyboardInterrupt:
            with reaper.stopping():
                reaper.kill_all(grace=1.0)
                thread.join(30)
            raise
        if isinstance(done.get("error"), BudgetSpent):
            # --max-cost spent: not a failure, nothing to rerun here
            yield {"not_started": str(done["error"])}
            return
        if "error" in done:
            raise done["error"]
        record: RunRecord = done["record"]
        archive = shipping.pack_run(scratch / spec.rel_dir)
        yield {"record": record.model_dump_json(), "archive": archive}
    finally:
        reaper.remove_watcher(book.watch)
        shutil.rmtree(scratch, ignore_errors=True)


def sweep_node(
    session: tuple[str, str],
    stop: bool,
    orphans_only: bool,
    runs: list[str],
    remove: bool,
    inputs_key: str | None,
) -> int:
    """Kill what the job's runs left on this machine (see ``ledger.sweep``); at the job's end, drop its
    inputs.
    """
    killed = ledger.sweep(*session, stop=stop, orphans_only=orphans_only, runs=runs, remove=remove)
    if remove and inputs_key:
        shipping.drop_inputs(inputs_key)
    return killed


# ============================================================================================== on the driver
@dataclass
class _Attempt:
    spec: RunSpec
    n: int  # 1-based
    submitted: float  # monotonic, driver
    excluded: list[str] = field(default_factory=list)  # nodes this attempt may not use
    node: str | None = None
    host: str | None = None
    dispatched: float | None = None  # monotonic, driver: when the task said it was running


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, address: str | None = None, max_attempts: int = 3, grace: float = 5.0):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.address = address
        self._owned = False  # this executor opened the Ray connection (and closes it)
        self.max_attempts = max_attempts
        self.grace = grace  # seconds a cancelled run gets to end itself before its worker is killed
        # per finished attempt: timings seen from the driver (benchmarks)
        self.stats: list[dict[str, Any]] = []

    @classmethod
    def from_options(cls, opts: JobOptions) -> RayExecutor:
        return cls(address=opts.ray_address)

    def describe(self) -> str:
        return f"ray ({self.address or os.environ.get('RAY_ADDRESS') or 'local cluster'})"

    # ------------------------------------------------------------------------------------------ connecting
    def _connect(self) -> Any:
        """Ray, connected: to the cluster at ``address`` (or RAY_ADDRESS), else to a new local one. A
        connection this process already had is used and left open; one opened here is closed by
        ``close()``."""
        ray = _ray()
        if ray.is_initialized():
            return ray
        address = self.address or os.environ.get("RAY_ADDRESS") or "local"
        kwargs: dict[str, Any] = {"address": address, "log_to_driver": False, "logging_level": logging.ERROR}
        if address == "local":
            kwargs["include_dashboard"] = False
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            hint = (
                ""
                if os.environ.get("RAY_AUTH_MODE")
                else (
                    "; a cluster with token authentication needs RAY_AUTH_MODE=token and its token here too"
                )
            )
            raise SkillassayError(
                f"--ray-address {address}: cannot connect to a Ray cluster ({exc}){hint}"
            ) from None
        self._owned = True
        return ray

    def close(self) -> None:
        if self._owned:
            self._owned = False
            _ray().shutdown()

    def service_host(self) -> str | None:
        # this machine's address in the cluster, as Ray itself reaches it (never loopback: workers are
        # elsewhere)
        return self._connect().util.get_node_ip_address()

    def prepare(self, definitions: list[EvalDefinition], agent: str) -> None:
        self._check_fits(self._connect(), definitions, agent)

    # ------------------------------------------------------------------------------------------ resources
    @staticmethod
    def _resources(definition: EvalDefinition, agent: str) -> Resources:
        from skillassay.agents import agent_class

        return definition.resources.merged(agent_class(agent).resources)

    def _needs(self, work: JobWork, spec: RunSpec) -> Resources:
        return self._resources(work.definitions[spec.eval_id], spec.config.agent)

    @staticmethod
    def _alive_nodes(ray) -> list[dict]:
        return [n for n in ray.nodes() if n.get("Alive")]

    def _check_fits(self, ray, definitions: list[EvalDefinition], agent: str) -> None:
        """A run no node can hold would wait forever: say so before starting."""
        nodes = self._alive_nodes(ray)
        for definition in definitions:
            need = self._resources(definition, agent)
            fits = any(
                n["Resources"].get("CPU", 0) >= need.cpus
                and (need.memory is None or n["Resources"].get("memory", 0) >= need.memory)
                for n in nodes
            )
            if not fits:
                biggest = max((n["Resources"].get("CPU", 0) for n in nodes), default=0)
                raise SkillassayError(
                    f"{definition.source}: a run of {definition.id} with agent {agent} needs "
                    f"{need.describe()} "
                    f"(resources), and no node of the Ray cluster has that much (largest: {biggest:g} CPU)"
                )

    def _submit(
        self,
        ray,
        work_ref,
        work: JobWork,
        spec: RunSpec,
        inputs_key: str,
        inputs_ref,
        session: tuple[str, str],
        n: int,
        excluded: list[str],
    ) -> tuple[Any, _Attempt]:
        need = self._needs(work, spec)
        options: dict[str, Any] = {
            "num_cpus": need.cpus,
            "num_returns": "streaming",
            "max_retries": 0,
            "retry_exceptions": False,
            "name": f"skillassay-run {spec.eval_id} {spec.variant} {spec.run_index}",
        }
        if need.memory is not None:
            options["memory"] = int(need.memory)
        if excluded:
            options["label_selector"] = {NODE_LABEL: f"!in({','.join(excluded)})"}
        task = _remote_fn(ray, run_attempt).options(**options)
        # the inputs travel inside a list, so a worker fetches them only when its machine has no copy yet
        gen = task.remote(work_ref, spec, inputs_key, [inputs_ref], session)
        return gen, _Attempt(spec=spec, n=n, submitted=time.monotonic(), excluded=excluded)

    def _sweep(
        self,
        ray,
        session: tuple[str, str],
        *,
        stop: bool = False,
        orphans_only: bool = False,
        runs: list[str] | None = None,
        remove: bool = False,
        inputs_key: str | None = None,
        wait: float = 15.0,
    ) -> None:
        """Sweep every live node (zero-CPU tasks, so they run even on a full cluster) and wait for them."""
        task = _remote_fn(ray, sweep_node)
        refs = []
        for node in self._alive_nodes(ray):
            refs.append(
                task.options(
                    num_cpus=0,
                    max_retries=0,
                    label_selector={NODE_LABEL: node["NodeID"]},
                    name="skillassay-sweep",
                ).remote(session, stop, orphans_only, runs or [], remove, inputs_key)
            )
        if not refs:
            return
        ready, pending = ray.wait(refs, num_returns=len(refs), timeout=wait)
        for ref in pending:  # a node that died meanwhile: nothing left to sweep there
            ray.cancel(ref, force=True)
        for ref in ready:
            try:
                ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a sweep that failed must not hide the job's own outcome
                log.warning("sweeping a node failed: %s", exc)

    # ------------------------------------------------------------------------------------------ the job
    def run(self, work: JobWork, specs: list[RunSpec]) -> Finished:
        if not specs:
            return
        ray = self._connect()  # open until close(), at the job's end
        self._check_fits(ray, list(work.definitions.values()), specs[0].config.agent)
        # the ledger's folder on each node, and the key its entries are signed with (see ledger.py)
        session = (f"{work.job_id}-{secrets.token_hex(4)}", secrets.token_hex(16))
        inputs_key, archive = shipping.pack_inputs(list(work.definitions.values()), work.skill)
        inputs_ref = ray.put(archive)
        del archive
        work_ref = ray.put(work)
        running: dict[Any, _Attempt] = {}
        try:
            for spec in specs:
                gen, attempt = self._submit(ray, work_ref, work, spec, inputs_key, inputs_ref, session, 1, [])
                running[gen] = attempt
            while running:
                ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
                for gen in ready:
                    attempt = running[gen]
                    try:
                        item = ray.get(next(gen))
                    except StopIteration:
                        item = None
                        failure: BaseException | None = RuntimeError("the task ended without a result")
                    except KeyboardInterrupt:
                        raise
                    except Exception as exc:  # noqa: BLE001 - classified below
                        item, failure = None, exc
                    else:
                        failure = None
                    if item is not None and "node" in item:
                        attempt.node, attempt.host = item["node"], item["host"]
                        attempt.dispatched = time.monotonic()
                        continue
                    if item is not None and "phase" in item:  # heard here as a local run's phases are
                        run = attempt.spec
                        key = phases.RunKey(run.job_id, run.eval_id, run.variant, run.run_index)
                        phases.relay(key, str(item["phase"]))
                        continue
                    del running[gen]
                    if failure is None:
                        answer = cast("dict[str, Any]", item)  # set by ray.get: no failure
                        if "not_started" in answer:
                            yield attempt.spec, BudgetSpent(answer["not_started"])
                            continue
                        yield attempt.spec, self._collect(work, attempt, answer)
                        continue
                    outcome = self._failed(
                        ray, work, work_ref, attempt, failure, inputs_key, inputs_ref, session
                    )
                    if isinstance(outcome, tuple):
                        running[outcome[0]] = outcome[1]
                    else:
                        yield attempt.spec, outcome
        except BaseException:
            self._cancel(ray, running, session)
            raise
        finally:
            self._sweep(ray, session, remove=True, inputs_key=inputs_key)

    def _collect(self, work: JobWork, attempt: _Attempt, item: dict) -> RunRecord:
        """Write the run's folder into the results root; return its record with where and how long it waited.
        A folder that cannot be written is the harness's failure, recorded as such (the job goes on)."""
        try:
            return self._write(work, attempt, item)
        except Exception as exc:  # noqa: BLE001
            where = {"ray_node": attempt.node, "host": attempt.host, "attempt": attempt.n}
            record = harness_failure(
                attempt.spec,
                work.definitions[attempt.spec.eval_id].source,
                f"the finished run could not be written into the results: {_describe(exc)}",
                datetime.now(UTC),
                machine=where,
            )
            # a graded run is never overwritten; others kept aside
            claim_run_dir(work.results_root, record.run_dir)
            write_run_file(work.results_root, record)
            return record

    def _write(self, work: JobWork, attempt: _Attempt, item: dict) -> RunRecord:
        record = RunRecord.model_validate_json(item["record"])
        took = (record.finished_at - record.started_at).total_seconds()
        dispatched = attempt.dispatched or attempt.submitted
        # queued: submitted -> running on a worker (waiting for a free CPU, then Ray's scheduling); overhead:
        # what running it on Ray added to the trial's own time (inputs, results' round trip, writing the
        # folder)
        record.timings["ray_queued"] = round(dispatched - attempt.submitted, 3)
        record.machine = {
            **record.machine,
            "ray_node": attempt.node,
            "host": attempt.host,
            "attempt": attempt.n,
        }
        # claimed like a local run's folder: a graded run is never overwritten, an unscored one is kept aside
        dest = claim_run_dir(work.results_root, record.run_dir)
        shipping.unpack_run(item["archive"], dest, run_json=record.model_dump_json(indent=2))
        overhead = round(max(0.0, time.monotonic() - dispatched - took), 3)
        record.timings["ray_overhead"] = overhead
        write_run_file(work.results_root, record)
        self.stats.append(
            {
                "eval_id": record.eval_id,
                "run": took,
                "queued": record.timings["ray_queued"],
                "overhead": overhead,
                "node": attempt.node,
            }
        )
        return record

    def _failed(
        self,
        ray,
        work: JobWork,
        work_ref,
        attempt: _Attempt,
        failure: BaseException,
        inputs_key: str,
        inputs_ref,
        session: tuple[str, str],
    ) -> tuple[Any, _Attempt] | RunRecord:
        """An attempt that never finished: sweep its orphans, then run it again elsewhere or record it as
        lost.
        """
        what = _describe(failure)
        where = f" on {attempt.host} (node {attempt.node[:12]})" if attempt.node else ""
        log.warning("run %s: attempt %d failed%s: %s", attempt.spec.rel_dir, attempt.n, where, what)
        self._sweep(ray, session, orphans_only=True, runs=[attempt.spec.rel_dir])
        if attempt.n < self.max_attempts:
            excluded = list(attempt.excluded)
            alive = [n["NodeID"] for n in self._alive_nodes(ray)]
            if attempt.node and attempt.node in alive and attempt.node not in excluded:
                excluded.append(attempt.node)
            # exclude only live nodes, and never all the nodes that could hold the run
            excluded = [e for e in excluded if e in alive]
            need = self._needs(work, attempt.spec)
            if not [
                n
                for n in self._alive_nodes(ray)
                if n["NodeID"] not in excluded and n["Resources"].get("CPU", 0) >= need.cpus
            ]:
                excluded = []
            return self._submit(
                ray, work_ref, work, attempt.spec, inputs_key, inputs_ref, session, attempt.n + 1, excluded
            )
        definition = work.definitions[attempt.spec.eval_id]
        record = harness_failure(
            attempt.spec,
            definition.source,
            f"the run never finished: its Ray worker or node failed on all {attempt.n} attempts; "
            f"last{where}: {what}",
            datetime.now(UTC),
            machine={"ray_node": attempt.node, "host": attempt.host, "attempt": attempt.n},
        )
        # a graded run is never overwritten; others kept aside
        claim_run_dir(work.results_root, record.run_dir)
        write_run_file(work.results_root, record)
        return record

    def _cancel(self, ray, running: dict[Any, _Attempt], session: tuple[str, str]) -> None:
        """Ctrl-C (or the job giving up): end every run of the job on every node, and wait until they are
        gone.
        """
        with _ignoring_sigint():
            gens = list(running)
            for gen in gens:
                with suppress(Exception):  # already finished
                    ray.cancel(gen)  # pending: dropped; running: KeyboardInterrupt in the task
            self._sweep(ray, session, stop=True)
            left = gens
            deadline = time.monotonic() + self.grace
            while left and time.monotonic() < deadline:
                left = [g for g in left if not _finished(ray, g)]
                if left:
                    time.sleep(0.1)
            for gen in left:
                with suppress(Exception):  # ended meanwhile
                    ray.cancel(gen, force=True)  # kills the worker process
            if left:
                self._sweep(ray, session, stop=True)
            running.clear()


def _finished(ray, gen) -> bool:
    """Has the task behind a streaming generator ended (by result, error or cancellation)?"""
    try:
        ready, _ = ray.wait([gen], timeout=0)
        if not ready:
            return False
        ray.get(next(gen))
        return False  # it produced another item: it is still going
    except StopIteration:
        return True
    except Exception:  # noqa: BLE001 - cancelled or died: ended
        return True


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:500]


@contextmanager
def _ignoring_sigint() -> Iterator[None]:
    """A second Ctrl-C must not cut the cleanup short (that would leave runs behind on the nodes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
