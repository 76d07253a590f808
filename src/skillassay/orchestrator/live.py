"""The job's live state on disk (``store/live.py``), kept by the process running the job: each run's phase
as it changes (heard through ``phases``: the runs of this process, and a Ray executor's runs relayed from its
workers), each run as it finishes, the money spent, and a heartbeat. A fault here never fails the job."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from skillassay.orchestrator.model_access import BudgetSpent
from skillassay.phases import RunKey
from skillassay.secrets import Redactor
from skillassay.store.live import FINISHED_KEPT, HEARTBEAT_S, LiveJob, LiveLane, LiveRun, write_live
from skillassay.store.records import RunRecord

log = logging.getLogger(__name__)
LaneKey = tuple[str, str, int]  # (eval id, variant, run index)


class LiveRecorder:
    def __init__(
        self,
        results_root: Path,
        job_id: str,
        *,
        planned: int,
        executor: str,
        max_cost: float | None,
        spent: Callable[[], float],
        redactor: Redactor,
        heartbeat_s: float = HEARTBEAT_S,
    ):
        now = datetime.now(UTC)
        self.root, self.redactor, self.spent = results_root, redactor, spent
        self.state = LiveJob(
            job_id=job_id,
            started_at=now,
            heartbeat=now,
            planned=planned,
            executor=executor,
            max_cost=max_cost,
        )
        self.lanes: dict[LaneKey, LiveLane] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat_s = heartbeat_s
        self._thread = threading.Thread(target=self._beat, name="skillassay-live", daemon=True)

    def start(self) -> LiveRecorder:
        self._write()
        self._thread.start()
        return self

    # ------------------------------------------------------------------------------ what the job hears
    def phase(self, key: RunKey, name: str) -> None:
        if key.job_id != self.state.job_id:
            return
        lane_key = (key.eval_id, key.variant, key.run_index)
        now = datetime.now(UTC)
        with self._lock:
            lane = self.lanes.get(lane_key)
            if lane is None:
                self.lanes[lane_key] = LiveLane(
                    eval_id=key.eval_id,
                    variant="baseline" if key.variant == "baseline" else "skill",
                    run_index=key.run_index,
                    phase=name,
                    started_at=now,
                    phase_at=now,
                )
            elif lane.phase != name:
                lane.phase, lane.phase_at = name, now
        self._write()

    def came_back(self, lane_key: LaneKey, result: RunRecord | BaseException) -> None:
        """A run came back from the executor: its lane goes, and it is counted (a run --max-cost kept from
        starting, as not started; one that came back without a record, as a harness error)."""
        with self._lock:
            self.lanes.pop(lane_key, None)
            state = self.state
            if isinstance(result, BudgetSpent):
                state.not_started += 1
            else:
                record = result if isinstance(result, RunRecord) else getattr(result, "record", None)
                state.done += 1
                outcome = record.outcome if isinstance(record, RunRecord) else "harness_error"
                state.outcomes[outcome] = state.outcomes.get(outcome, 0) + 1
                if isinstance(record, RunRecord):
                    state.finished.insert(0, _finished_run(record))
                    del state.finished[FINISHED_KEPT:]
        self._write()

    def close(self, status: str) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        with self._lock:
            self.state.status, self.state.ended_at = status, datetime.now(UTC)
            self.lanes.clear()
        self._write()

    # ------------------------------------------------------------------------------ on disk
    def _beat(self) -> None:
        while not self._stop.wait(self._heartbeat_s):
            self._write()

    def _write(self) -> None:
        spent: float | None = None
        with contextlib.suppress(Exception):  # the cost is read from the proxy: it may be stopping
            spent = self.spent()
        with self._lock:
            self.state.heartbeat = datetime.now(UTC)
            if spent is not None:
                self.state.spent_usd = round(spent, 6)
            self.state.lanes = sorted(self.lanes.values(), key=lambda lane: lane.started_at)
            try:
                write_live(self.root, self.state, self.redactor)
            except Exception as exc:  # noqa: BLE001 - a live view's fault is never the job's
                log.warning("could not write the job's live state: %s", exc)


def _finished_run(record: RunRecord) -> LiveRun:
    verdict = record.verdict
    cost = record.model_usage.cost_usd if record.model_usage is not None else record.transcript.cost_usd
    return LiveRun(
        eval_id=record.eval_id,
        variant=record.variant,
        run_index=record.run_index,
        outcome=record.outcome,
        passed=verdict.passed if verdict is not None and record.scored else None,
        score=verdict.score if verdict is not None and record.scored else None,
        cost_usd=cost,
        seconds=round((record.finished_at - record.started_at).total_seconds(), 1),
        run_dir=record.run_dir,
        finished_at=record.finished_at,
    )
