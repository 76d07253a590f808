"""Run-level services: what a run obtains from the place it executes.

The job describes the services its runs need in a ``JobServices`` (a picklable recipe, built on the driver
from the job's options); executors ship it with every run. Where a run executes, ``JobServices.open()`` gives
the live ``RunServices`` the trial asks for what it needs:

- the Seam emulator: the sandbox grader talks to it in-process, so it lives in the process that grades, on
  whichever machine that is;
- the job's model proxy (one per job, on the driver: it holds the provider keys and meters every call),
  reached over HTTP through its admin client from wherever the run executes, for per-attempt grants and the
  job's spending;
- the golden canary (orchestrator/canary.py): each eval's golden checked once where its runs execute, before
  the first of them is scored; the other runs of the eval wait for it.

Lifetimes: the local executor opens one ``RunServices`` per job and closes it when the job ends. A Ray worker
process keeps one per recipe (``on_worker``) for as long as the process lives, so the runs it executes one
after another share one emulator (each still gets its own emulator workspace) instead of paying a start each.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from skillassay.orchestrator.canary import CanaryPlan
from skillassay.services import Service
from skillassay.services.model_proxy import ModelGrants, ModelProxyClient
from skillassay.store.records import CanaryCheck

if TYPE_CHECKING:
    from skillassay.definitions.models import EvalDefinition

# the service the plan's sandbox layer talks to (the ``skillassay.services`` entry point of the Seam wing)
EMULATOR_SERVICE = "seam"


class EmulatorRecipe(BaseModel):
    async_delay: float = 1.0  # seconds a code spends "setting" (or "removing")
    automation_delay: float = 0.5  # seconds before pushed data takes effect


class JobServices(BaseModel):
    """The run-level services of one job, as a recipe: nothing here is live, so it travels to any worker."""

    emulator: EmulatorRecipe | None = None  # None: the job uses live Seam, or no run has a sandbox layer
    # the job's model proxy (None: the agent talks to no model); its admin token stays in the harness
    model_proxy: ModelProxyClient | None = None
    max_cost: float | None = None  # --max-cost, USD
    spent_before: float = 0.0  # USD the job spent in its earlier sessions (before a --resume)
    canary: CanaryPlan | None = None  # None: no canary (--canary-runs 0, or a trigger suite)

    def open(self) -> RunServices:
        return RunServices(self)

    def key(self) -> str:
        return self.model_dump_json()


class RunServices:
    """The live services, where runs execute. Each is started on first use; thread-safe (parallel runs
    share it).
    """

    def __init__(self, recipe: JobServices):
        self.recipe = recipe
        self._lock = threading.Lock()
        self._emulator: Service | None = None
        self._closed = False
        self._canaries: dict[str, CanaryCheck] = {}
        self._canary_locks: dict[str, threading.Lock] = {}

    def emulator(self) -> Service | None:
        """This place's emulator (started on the first call), or None when the job uses none."""
        spec = self.recipe.emulator
        if spec is None:
            return None
        with self._lock:
            if self._closed:
                raise RuntimeError("the job's services are closed")
            if self._emulator is None:
                from skillassay.services import service_class

                # loopback: the app under test and the grader run on this same machine
                self._emulator = service_class(EMULATOR_SERVICE)(
                    async_delay=spec.async_delay, automation_delay=spec.automation_delay
                ).start(host="127.0.0.1", port=0)
            return self._emulator

    def canary(self, definition: EvalDefinition, policy: Any = None) -> CanaryCheck | None:
        """The eval's canary here, checked by the first run that asks (the others wait for it); None: the job
        runs none. ``policy``: the run's sealing policy, which the golden's grading uses too."""
        plan = self.recipe.canary
        if plan is None:
            return None
        with self._lock:
            lock = self._canary_locks.setdefault(definition.id, threading.Lock())
        with lock:
            found = self._canaries.get(definition.id)
            if found is None:
                from skillassay.orchestrator import canary

                emulator = (
                    self.emulator()
                    if plan.seam == "emulator" and plan.layers != "rubric" and definition.has_sandbox
                    else None
                )
                found = self._canaries[definition.id] = canary.check(
                    definition, plan, policy=policy, emulator=emulator
                )
            return found

    def model_grants(self) -> ModelGrants | None:
        """Per-attempt endpoints and tokens from the job's model proxy (None: no model for this job)."""
        return self.recipe.model_proxy

    def budget_left(self) -> bool:
        """May the job still spend (start a run, retry one)? Asks the proxy what the job has spent so far."""
        if self.recipe.max_cost is None:
            return True
        spent = self.recipe.model_proxy.job_usage().cost_usd if self.recipe.model_proxy is not None else 0.0
        return self.recipe.spent_before + spent < self.recipe.max_cost

    def started(self) -> dict[str, Any]:
        """What is running now (for tests and diagnostics)."""
        with self._lock:
            return {"emulator": self._emulator} if self._emulator is not None else {}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            emulator, self._emulator = self._emulator, None
        if emulator is not None:
            emulator.stop()


_worker_lock = threading.Lock()
_on_worker: dict[str, RunServices] = {}


def on_worker(recipe: JobServices) -> RunServices:
    """The live services for ``recipe`` in this (worker) process: opened once, kept while the process
    lives.
    """
    key = recipe.key()
    with _worker_lock:
        live = _on_worker.get(key)
        if live is None:
            live = _on_worker[key] = recipe.open()
        return live


@atexit.register
def _close_worker_services() -> None:
    with _worker_lock:
        live = list(_on_worker.values())
        _on_worker.clear()
    for services in live:
        services.close()
