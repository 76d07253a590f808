"""Templates, dot paths and time comparison used by the checks; the result's plan JSON."""

from __future__ import annotations

from datetime import UTC, datetime

from skillassay.seam.behaviour.endpoint_checks import _MISSING, dot_get, render, same_time, time_templates
from skillassay.seam.behaviour.result import SandboxResult


def test_time_templates_are_whole_seconds_utc_with_the_plans_offsets():
    t = time_templates(datetime(2026, 11, 29, 22, 30, 15, 123456, tzinfo=UTC))
    assert t == {
        "STARTS_AT": "2026-11-29T23:30:15Z",
        "ENDS_AT": "2026-11-30T23:30:15Z",
        "NEW_ENDS_AT": "2026-12-01T23:30:15Z",
    }


def test_render_walks_payloads_and_keeps_unknown_names():
    payload = {"email": "eval_{{RUN_ID}}@x.com", "when": ["{{ STARTS_AT }}"], "n": 3, "other": "{{NOPE}}"}
    assert render(payload, {"RUN_ID": "r1", "STARTS_AT": "T"}) == {
        "email": "eval_r1@x.com",
        "when": ["T"],
        "n": 3,
        "other": "{{NOPE}}",
    }
    assert render("/api/reservations/{{RESERVATION_ID}}", {"RESERVATION_ID": "42"}) == "/api/reservations/42"


def test_dot_paths():
    body = {"reservation": {"id": "r-1"}, "data": {"items": [{"id": 7}, {"id": 8}]}}
    assert dot_get(body, "reservation.id") == "r-1"
    assert dot_get(body, "data.items.0.id") == 7
    assert dot_get(body, "data.items.-1.id") == 8
    assert dot_get(body, "data.items.5.id") is _MISSING
    assert dot_get(body, "reservation.missing") is _MISSING
    assert dot_get([{"id": 1}], "0.id") == 1


def test_same_time_tolerates_format_not_a_different_instant():
    assert same_time("2026-11-30T23:30:15.000Z", "2026-11-30T23:30:15Z")
    assert same_time("2026-11-30T18:30:15-05:00", "2026-11-30T23:30:15Z")
    assert not same_time("2026-11-29T23:30:15Z", "2026-11-30T23:30:15Z")
    assert not same_time(None, "2026-11-30T23:30:15Z")
    assert not same_time("tomorrow", "2026-11-30T23:30:15Z")


def test_plan_json_shape():
    r = SandboxResult(fixture="f", run_id="r", seam_mode="emulator", backend="host")
    r.checks["build"].ok()
    r.checks["create"].ok()
    r.checks["update"].fail("code ends_at mismatch")
    assert r.finish().plan_json() == {
        "total": 40,
        "checks": {"build": 10, "create": 30, "update": 0, "cancel": 0},
    }
