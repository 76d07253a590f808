"""Endpoint windows (apps/windows.py): the harness's record of when each endpoint call it drove was open."""

from __future__ import annotations

import time

from skillassay.apps.windows import WindowClock, window_of


def test_windows_are_recorded_in_order_and_a_moment_between_them_is_no_ones():
    clock = WindowClock()
    clock.close()  # nothing open: nothing recorded
    clock.open("create")
    time.sleep(0.02)
    clock.close()
    time.sleep(0.02)
    clock.open("update")
    clock.close()
    create, update = clock.windows
    assert [create.endpoint, update.endpoint] == ["create", "update"]
    assert 0 <= create.start_s < create.end_s < update.start_s <= update.end_s
    gap = (create.end_s + update.start_s) / 2
    assert window_of(gap, clock.windows) is None
    assert window_of(create.end_s, clock.windows) == "create"
    assert window_of(update.end_s + 1, clock.windows) is None
