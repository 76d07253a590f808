"""The checks' verdicts and reasons, on a tiny stdlib app that is good or broken in one known way each."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillassay.seam.behaviour import validate


def _run(defn, emulator, tmp_path, run_id):
    return validate(defn.app_dir, defn, run_id, emulator=emulator, logs_dir=tmp_path / "logs")


def test_good_app_scores_100_and_records_evidence(tiny, emulator, tmp_path):
    d = tiny("good")
    r = _run(d, emulator, tmp_path, "good1")
    assert r.plan_json() == {"total": 100, "checks": {"build": 10, "create": 30, "update": 30, "cancel": 30}}
    create = r.checks["create"]
    assert create.requests[0].method == "POST" and create.requests[0].status == 201
    assert create.seam["times_match"] is True
    assert create.seam["found"][0]["ends_at"].startswith(r.templates["ENDS_AT"][:19])
    assert r.checks["update"].seam["expected"]["ends_at"] == r.templates["NEW_ENDS_AT"]
    assert r.emulator_spec_version == emulator.spec_version
    assert r.seam["workspace_id"] and r.seam["spaces"][0]["space_key"] == "unit-1"
    assert set(r.logs) >= {"stdout", "stderr"}
    assert {"install", "build", "start", "create", "update", "cancel", "total"} <= set(r.timings)


def test_presence_mode_accepts_a_code_that_kept_its_window(tiny, emulator, tmp_path):
    strict = _run(tiny("wrong_update"), emulator, tmp_path / "a", "strict1")
    assert strict.checks["update"].points == 0
    reason = strict.checks["update"].reason
    assert "code ends_at mismatch: expected " + strict.templates["NEW_ENDS_AT"] in reason
    assert "found " + strict.templates["ENDS_AT"][:19] in reason
    assert strict.checks["cancel"].points == 30
    presence = _run(
        tiny("wrong_update", sandbox_update_check="presence"), emulator, tmp_path / "b", "presence1"
    )
    assert presence.checks["update"].points == 30


def test_crash_on_start_scores_0_with_its_log_tail(tiny, emulator, tmp_path):
    r = _run(tiny("crash"), emulator, tmp_path, "crash1")
    assert r.total == 0
    assert "start failed" in r.checks["build"].reason and "exit code 3" in r.checks["build"].reason
    assert "missing DATABASE_URL" in r.checks["build"].details["log_tail"]
    assert "missing DATABASE_URL" in r.log_tail
    assert r.checks["create"].reason == "not run: the app did not start"


def test_non_json_answer(tiny, emulator, tmp_path):
    r = _run(tiny("nojson"), emulator, tmp_path, "nojson1")
    assert r.checks["create"].points == 0
    assert r.checks["create"].reason.startswith("non-JSON answer (HTTP 201)")
    assert r.checks["update"].reason == r.checks["cancel"].reason == "no reservation id"
    assert r.total == 10


def test_http_500_names_status_and_body(tiny, emulator, tmp_path):
    r = _run(tiny("err500"), emulator, tmp_path, "err1")
    assert r.checks["create"].reason.startswith("HTTP 500 from POST ")
    assert "database is locked" in r.checks["create"].reason
    assert r.checks["update"].reason == "no reservation id"


def test_no_id_in_the_response(tiny, emulator, tmp_path):
    r = _run(tiny("noid"), emulator, tmp_path, "noid1")
    # the code did appear: create earns its points, and says the id was missing
    assert r.checks["create"].points == 30
    assert "no reservation id at `reservation.id`" in r.checks["create"].reason
    assert r.checks["update"].reason == "no reservation id" and r.checks["cancel"].points == 0


def test_app_that_dies_on_create_is_connection_refused(tiny, emulator, tmp_path):
    r = _run(tiny("die_on_create"), emulator, tmp_path, "die1")
    assert r.checks["create"].points == 0
    reason = r.checks["create"].reason
    assert (
        "connection" in reason.lower() or "disconnected" in reason.lower() or "RemoteProtocolError" in reason
    )


def test_app_that_never_calls_seam_fails_fast_with_a_reason(tiny, emulator, tmp_path):
    d = tiny("no_seam")
    r = validate(d.app_dir, d, "quiet1", emulator=emulator, logs_dir=tmp_path / "l", quiet_after=1.0)
    assert r.plan_json()["total"] == 10
    assert "sent Seam no request within 1 s" in r.checks["create"].reason
    assert r.checks["cancel"].reason.startswith("no access code of this reservation ever appeared")


def test_no_code_within_the_limit_without_early_exit(tiny, emulator, tmp_path):
    d = tiny("no_seam", timeouts={"create": 1, "update": 1, "cancel": 1})
    r = validate(d.app_dir, d, "limit1", emulator=emulator, logs_dir=tmp_path / "l", quiet_after=None)
    assert r.checks["create"].reason.startswith("no access code appeared on device(s) ")
    assert "within 1 s" in r.checks["create"].reason


def test_input_directory_is_never_modified(tiny, emulator, tmp_path):
    d = tiny("good")
    before = sorted(p.relative_to(d.app_dir) for p in d.app_dir.rglob("*"))
    _run(d, emulator, tmp_path, "ro1")
    assert sorted(p.relative_to(d.app_dir) for p in d.app_dir.rglob("*")) == before


def test_bad_run_id_is_refused(tiny, emulator):
    from skillassay.errors import SkillassayError

    d = tiny("good")
    with pytest.raises(SkillassayError):
        validate(d.app_dir, d, "../etc", emulator=emulator)


def test_evidence_lists_the_seam_requests_the_app_sent(tiny, emulator, tmp_path):
    r = _run(tiny("good"), emulator, tmp_path, "ev1")
    for step, route in (
        ("create", "/access_codes/create"),
        ("update", "/access_codes/update"),
        ("cancel", "/access_codes/delete"),
    ):
        sent = r.checks[step].seam["app_seam_requests"]
        assert [(s["method"], s["path"], s["status"]) for s in sent] == [("POST", route, 200)], sent
        assert 0 <= sent[0]["at_s"] < 5
    # which code, on which device and space, with which times
    found = r.checks["create"].seam["found"][0]
    assert found["device_id"] == r.seam["spaces"][0]["device_ids"][0] and found["space_keys"] == ["unit-1"]
    assert found["starts_at"].startswith(r.templates["STARTS_AT"][:19])


def test_failed_seam_requests_end_the_wait_early_and_are_named(tiny, emulator, tmp_path):
    """A wrong device id: the emulator answers the app 404 at once; the create check stops a short grace after
    that answer (not its 60 s limit) and names the failed request."""
    d = tiny("seam_fails", timeouts={"create": 60})
    t0 = time.monotonic()
    r = validate(d.app_dir, d, "fails1", emulator=emulator, logs_dir=tmp_path / "l", fail_grace=1.0)
    create = r.checks["create"]
    assert create.points == 0
    assert create.elapsed_s < 20, create.elapsed_s
    assert "every Seam request the app sent for the create request failed" in create.reason
    assert "POST /access_codes/create -> 404" in create.reason
    sent = create.seam["app_seam_requests"]
    assert sent[0]["status"] == 404 and "not found" in sent[0]["error"].lower()
    assert time.monotonic() - t0 < 40


def test_answered_requests_with_nothing_pending_in_seam_end_the_wait(tiny, emulator, tmp_path):
    """The app's Seam request succeeds but changes nothing (as `push_data` to a space key Seam does not have):
    once Seam has answered, has nothing scheduled for the workspace, and the app sent nothing more for
    `quiet_after` seconds, the create check stops (not after its 60 s) and names what the app sent."""
    d = tiny("seam_noop", timeouts={"create": 60})
    r = validate(d.app_dir, d, "noop1", emulator=emulator, logs_dir=tmp_path / "l", quiet_after=1.0)
    create = r.checks["create"]
    assert create.points == 0 and create.elapsed_s < 20, create.elapsed_s
    assert (
        "Seam answered every request the app sent for the create request (POST /devices/list -> 200)"
        in create.reason
    )
    assert "had nothing left to do" in create.reason


def test_a_failed_request_followed_by_a_good_one_is_waited_for(emulator):
    """The early stop needs every request of the step to have failed: a retry that succeeds keeps the wait
    going.
    """
    from skillassay.seam.behaviour.session import EmulatorSession, SeamHttp, SeamRequestsFailed, WantedSpace

    session = EmulatorSession(emulator, "retry1")
    try:
        session.bootstrap([WantedSpace("unit-r", "unit-r", 1)], None)
        device = session.device_ids()[0]
        app = SeamHttp(emulator.base_url, session.api_key, local=True)
        since = session.marker()
        with pytest.raises(Exception):  # noqa: B017 - whatever the app's client raises on a refusal
            app.call("access_codes/create", {"device_id": "00000000-0000-4000-8000-000000000000"}, retries=0)
        with pytest.raises(SeamRequestsFailed) as failed:
            session.wait([device], lambda codes: codes or None, 10, since=since, fail_grace=0.3)
        assert failed.value.requests[0]["path"] == "/access_codes/create"
        since = session.marker()
        with pytest.raises(Exception):  # noqa: B017 - whatever the app's client raises on a refusal
            app.call("access_codes/create", {"device_id": "00000000-0000-4000-8000-000000000000"}, retries=0)
        app.call("access_codes/create", {"device_id": device, "name": "x"})
        got = session.wait([device], lambda codes: codes or None, 10, since=since, fail_grace=0.3)
        assert got and got[0]["device_id"] == device
        app.close()
    finally:
        session.cleanup()


def test_seam_keys_never_reach_logs_or_evidence(tiny, emulator, tmp_path):
    # the crash mode prints to stderr; make the app print its key first, as a careless app might
    d = tiny(
        "crash", run={"env": {"MODE": "crash"}, "start": "echo key=$SEAM_API_KEY >&2; exec python server.py"}
    )
    r = _run(d, emulator, tmp_path, "leak1")
    assert r.total == 0
    text = r.model_dump_json() + "".join(Path(p).read_text() for p in r.logs.values())
    assert "[REDACTED]" in r.log_tail
    assert "seam_test" not in text.replace("seam_test_not", "")


def test_run_page_evidence_names_codes_spaces_times_and_the_apps_requests(tiny, emulator, tmp_path):
    """What the run page's criteria table shows for the sandbox (seam_criteria): not blank."""
    import json

    from skillassay.seam.kind import seam_criteria

    d = tiny("good")
    r = _run(d, emulator, tmp_path, "page1")
    criteria = {c.id: c for c in seam_criteria(d, None, json.loads(r.model_dump_json()))}
    create = "\n".join(criteria["sandbox_create"].evidence)
    code = r.checks["create"].seam["found"][0]
    assert f"on device {code['device_id']} in space unit-1" in create
    assert r.templates["STARTS_AT"][:16] in create
    assert "the app -> Seam: POST /access_codes/create -> 200" in create
    assert "asked the app: POST " in create and "-> HTTP 201" in create
    assert "the app -> Seam: POST /access_codes/delete -> 200" in "\n".join(
        criteria["sandbox_cancel"].evidence
    )
    assert "answered http://" in "\n".join(criteria["sandbox_build"].evidence)


def test_trace_attributes_each_seam_request_to_the_step_whose_window_it_arrived_in(tiny, emulator, tmp_path):
    r = _run(tiny("good"), emulator, tmp_path, "trace1")
    trace = r.seam_trace
    assert trace is not None and trace.dropped == 0
    assert [w.endpoint for w in trace.windows] == ["create", "update", "cancel"]
    assert [(q.endpoint, q.path, q.status) for q in trace.requests] == [
        ("create", "/access_codes/create", 200),
        ("update", "/access_codes/update", 200),
        ("cancel", "/access_codes/delete", 200),
    ]
    for q in trace.requests:
        window = next(w for w in trace.windows if w.endpoint == q.endpoint)
        assert window.start_s <= q.start_s <= (q.end_s or 0) and q.start_s <= window.end_s
    assert trace.unattributed == []
    saved = r.model_dump(mode="json")["seam_trace"]
    assert saved["requests"][0]["endpoint"] == "create" and "start_s" in saved["windows"][0]


def test_a_seam_request_sent_from_a_timer_after_the_create_window_is_never_credited(tiny, emulator, tmp_path):
    """The attacker answers create at once and sends its Seam request from a timer 2 s later, after the create
    step has given up (quiet for 1 s): the request reaches Seam, but outside every window: unattributed."""
    d = tiny("delayed")
    r = validate(
        d.app_dir, d, "late1", emulator=emulator, logs_dir=tmp_path / "l", quiet_after=1.0, trace_tail=3.0
    )
    assert r.checks["create"].points == 0
    trace = r.seam_trace
    assert trace is not None
    assert [w.endpoint for w in trace.windows] == ["create"]
    late = [q for q in trace.requests if q.path == "/access_codes/create"]
    assert len(late) == 1 and late[0].status == 200, trace.requests
    assert late[0].endpoint is None and late[0].start_s > trace.windows[0].end_s
    assert trace.for_endpoint("create") == [] and trace.unattributed == late
    assert r.checks["create"].seam["app_seam_requests"] == []
