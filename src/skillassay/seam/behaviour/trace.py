"""The complete trace of what the app sent to Seam during a sandbox run, each request attributed to the
endpoint call (a sandbox step: create, update, cancel, ...) whose window it arrived in.

A request counts for an endpoint only when it arrived inside that step's window (from just before the
harness sent the step's request to the end of the step's wait); a request outside every window (sent at
start-up, between steps, from a timer after the step ended) is unattributed and never credited to any
endpoint. Times are seconds after the trace's origin (after the Seam bootstrap, before the app started).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel, Field

from skillassay.apps.windows import EndpointWindow, window_of


class TraceOrigin(BaseModel):
    """Where a trace starts: the emulator's last request then, how many it had logged, and the clock."""

    seq: int
    logged: int
    at: float  # time.monotonic()


class TraceRequest(BaseModel):
    """One request the emulator received with the run's key."""

    seq: int  # the emulator's order of arrival
    method: str
    path: str
    query: str = ""
    status: int | None = None  # None: never answered while the run lasted
    error: str | None = None
    start_s: float  # arrived, seconds after the origin
    end_s: float | None = None  # answered
    endpoint: str | None = None  # the step whose window it arrived in; None: unattributed


class SeamTrace(BaseModel):
    windows: list[EndpointWindow] = Field(default_factory=list)
    requests: list[TraceRequest] = Field(default_factory=list)  # every request kept, oldest first
    # requests the emulator's per-workspace log no longer held (its oldest): counted, never credited
    dropped: int = 0

    def for_endpoint(self, endpoint: str) -> list[TraceRequest]:
        return [r for r in self.requests if r.endpoint == endpoint]

    @property
    def unattributed(self) -> list[TraceRequest]:
        return [r for r in self.requests if r.endpoint is None]


class RequestLike(Protocol):
    seq: int
    method: str
    path: str
    query: str
    at: float
    status: int | None
    error: str | None
    answered_at: float | None


def build_trace(
    records: Iterable[RequestLike], windows: list[EndpointWindow], origin: float, dropped: int = 0
) -> SeamTrace:
    """The trace of ``records`` (the emulator's log after the origin), each attributed by arrival time."""
    requests = []
    for r in records:
        at_s = round(r.at - origin, 6)
        requests.append(
            TraceRequest(
                seq=r.seq,
                method=r.method,
                path=r.path,
                query=r.query[:300],
                status=r.status,
                error=(r.error or None) and r.error[:300],
                start_s=at_s,
                end_s=None if r.answered_at is None else round(r.answered_at - origin, 6),
                endpoint=window_of(at_s, windows),
            )
        )
    return SeamTrace(windows=list(windows), requests=requests, dropped=max(0, dropped))
