"""The windows of the endpoint calls a grader drives against a running app: when each call's window opened
(just before the request was sent) and closed (when the grader stopped waiting for its effects), on one
monotonic clock. What the app does inside a window is that call's; what it does outside every window (at
start-up, between calls, from a timer afterwards) is no call's and earns no call credit.
"""

from __future__ import annotations

import time

from pydantic import BaseModel


class EndpointWindow(BaseModel):
    """One endpoint call: its name (a step: create, update, ...) and its window, seconds after the origin."""

    endpoint: str
    start_s: float
    end_s: float


class WindowClock:
    """Opens and closes endpoint windows, one at a time, on a monotonic clock from ``origin``."""

    def __init__(self, origin: float | None = None):
        self.origin = time.monotonic() if origin is None else origin
        self.windows: list[EndpointWindow] = []
        self._open: tuple[str, float] | None = None

    def open(self, endpoint: str) -> None:
        self._open = (endpoint, time.monotonic())

    def close(self) -> None:
        if self._open is None:
            return
        endpoint, start = self._open
        self._open = None
        end = time.monotonic()
        self.windows.append(
            EndpointWindow(
                endpoint=endpoint, start_s=round(start - self.origin, 6), end_s=round(end - self.origin, 6)
            )
        )


def window_of(at_s: float, windows: list[EndpointWindow]) -> str | None:
    """The endpoint whose window holds ``at_s`` (its edges included), or None: outside every window."""
    for w in windows:
        if w.start_s <= at_s <= w.end_s:
            return w.endpoint
    return None
