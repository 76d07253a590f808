"""The run's Seam trace: each request credited only to the step whose window it arrived in, and a full log
counted, never silently cut."""

from __future__ import annotations

from dataclasses import dataclass

from skillassay.apps.windows import EndpointWindow
from skillassay.seam.behaviour.session import EmulatorSession
from skillassay.seam.behaviour.trace import build_trace
from skillassay.seam.emulator.store import REQUEST_LOG_SIZE


@dataclass
class _Record:
    seq: int
    at: float
    method: str = "POST"
    path: str = "/access_codes/create"
    query: str = ""
    status: int | None = 200
    error: str | None = None
    answered_at: float | None = None


WINDOWS = [
    EndpointWindow(endpoint="create", start_s=1.0, end_s=2.0),
    EndpointWindow(endpoint="update", start_s=3.0, end_s=4.0),
]


def test_only_a_request_inside_a_window_is_credited_to_its_step():
    origin = 100.0
    arrivals = {1: 0.5, 2: 1.0, 3: 2.0, 4: 2.5, 5: 3.5, 6: 4.01, 7: 9.0}
    trace = build_trace([_Record(seq=s, at=origin + t) for s, t in arrivals.items()], WINDOWS, origin)
    assert {r.seq: r.endpoint for r in trace.requests} == {
        1: None,  # at start-up, before any step
        2: "create",  # the window's edges belong to it
        3: "create",
        4: None,  # between create and update: a timer, a background task
        5: "update",
        6: None,
        7: None,  # after the last step
    }
    assert [r.seq for r in trace.unattributed] == [1, 4, 6, 7]
    assert [r.seq for r in trace.for_endpoint("create")] == [2, 3]


def test_a_log_that_overflowed_is_counted_and_what_it_lost_is_never_credited(emulator):
    session = EmulatorSession(emulator, "overflow1")
    origin = session.trace_origin()
    assert origin is not None
    ws = emulator.store.get(session.workspace_id)
    for _ in range(REQUEST_LOG_SIZE + 7):
        ws.log_request("POST", "/access_codes/create", "")
    window = EndpointWindow(endpoint="create", start_s=0.0, end_s=1e9)
    trace = session.trace(origin, [window])
    assert trace is not None
    assert trace.dropped == 7
    assert len(trace.requests) == REQUEST_LOG_SIZE
    assert len(trace.for_endpoint("create")) == REQUEST_LOG_SIZE  # never more than was kept
