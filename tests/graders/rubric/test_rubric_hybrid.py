"""The hybrid pass on its own (no app run): what the trace may and may not settle. A request outside every
step's window is no step's (an app sending its Seam call from a timer after the step ended is not credited); a
log that dropped requests proves no absence; a request Seam refused is not a correct call."""

from __future__ import annotations

from typing import Any

from skillassay.apps.windows import EndpointWindow
from skillassay.seam.behaviour.trace import SeamTrace, TraceRequest
from skillassay.seam.plan import AnswerKey, Rubric, RubricCategory
from skillassay.seam.rubric.hybrid import call_name, hybrid

KEY = AnswerKey(
    expected_calls={"create": ["access_codes.create"], "cancel": ["access_codes.delete"]},
    expected_placements={"access_codes.create": ["create_booking"]},
    required_parameters={"create": ["device_id", "code"]},
)
RUBRIC = Rubric(
    categories=[
        RubricCategory(name="integration_placement", weight=50, check="calls_in_expected_functions"),
        RubricCategory(name="api_correctness", weight=30, check="required_params_present"),
        RubricCategory(name="lifecycle_completeness", weight=20, check="all_handlers_modified"),
    ]
)
WINDOWS = [
    EndpointWindow(endpoint="create", start_s=1.0, end_s=2.0),
    EndpointWindow(endpoint="update", start_s=3.0, end_s=4.0),
    EndpointWindow(endpoint="cancel", start_s=5.0, end_s=6.0),
]


def _static(placed: bool, params: bool, create: bool, cancel: bool) -> dict[str, Any]:
    """A static rubric's JSON in the shape ``grade`` writes it."""

    def cat(check: str, score: float, weight: float, evidence: list[dict[str, Any]]) -> dict[str, Any]:
        return {"score": score, "weighted": score * weight, "check": check, "evidence": evidence}

    return {
        "total": 0.0,
        "paths_taken": ["access_codes"],
        "changed_files": ["app.py"],
        "categories": {
            "integration_placement": cat(
                "calls_in_expected_functions",
                float(placed),
                50,
                [
                    {
                        "ok": placed,
                        "message": "access_codes.create in create_booking: `seam.access_codes.create`",
                    }
                ],
            ),
            "api_correctness": cat(
                "required_params_present",
                1.0 if params else 0.5,
                30,
                [
                    {
                        "ok": params,
                        "message": f"access_codes.create: {2 if params else 1}/2 required parameters",
                    }
                ],
            ),
            "lifecycle_completeness": cat(
                "all_handlers_modified",
                (create + cancel) / 2,
                20,
                [
                    {"ok": cancel, "message": "cancel: access_codes.delete reached"},
                    {"ok": create, "message": "create: access_codes.create reached"},
                ],
            ),
        },
    }


def _trace(*sent: tuple[float, str, int], dropped: int = 0) -> SeamTrace:
    from skillassay.apps.windows import window_of

    return SeamTrace(
        windows=WINDOWS,
        requests=[
            TraceRequest(seq=i, method="POST", path=p, status=s, start_s=t, endpoint=window_of(t, WINDOWS))
            for i, (t, p, s) in enumerate(sent)
        ],
        dropped=dropped,
    )


def _run(static: dict[str, Any], trace: SeamTrace):
    return hybrid(static, trace, KEY, RUBRIC, "access_codes", ["cancel", "create", "update"])


def test_a_request_outside_every_window_is_credited_to_no_step():
    # sent from a timer after the create step ended (between create and update): no step's
    trace = _trace((2.5, "/access_codes/create", 200), (5.5, "/access_codes/delete", 200))
    got = _run(_static(placed=False, params=False, create=False, cancel=True), trace)
    assert got.categories["integration_placement"].score == 0.0
    assert got.categories["lifecycle_completeness"].score == 0.5  # cancel only
    # the static reading's call with half its parameters is refuted too: it was sent from no step
    assert got.categories["api_correctness"].score == 0.0
    assert [d.claim for d in got.disagreements] == ["access_codes.create sent"]


def test_a_request_inside_the_window_is_credited():
    trace = _trace((1.5, "/access_codes/create", 200), (5.5, "/access_codes/delete", 200))
    got = _run(_static(placed=False, params=False, create=False, cancel=True), trace)
    assert got.categories["integration_placement"].score == 1.0
    assert got.categories["lifecycle_completeness"].score == 1.0
    assert {d.claim for d in got.disagreements} >= {"access_codes.create in create_booking"}


def test_a_log_that_dropped_requests_refutes_nothing():
    got = _run(_static(placed=True, params=True, create=True, cancel=True), _trace(dropped=3))
    assert got.categories["integration_placement"].score == 1.0
    finding = got.categories["integration_placement"].evidence[0]
    assert finding.source == "static" and "dropped 3 requests" in finding.why
    assert got.disagreements == []


def test_an_empty_log_with_every_step_run_refutes_every_claim():
    got = _run(_static(placed=True, params=True, create=True, cancel=True), _trace())
    assert {name: c.score for name, c in got.categories.items()} == {
        "integration_placement": 0.0,
        "api_correctness": 0.0,
        "lifecycle_completeness": 0.0,
    }
    assert got.total == 0.0
    assert all(f.refuted for f in got.categories["integration_placement"].evidence)


def test_a_request_seam_refused_is_not_a_correct_call():
    trace = _trace((1.5, "/access_codes/create", 400), (5.5, "/access_codes/delete", 200))
    got = _run(_static(placed=True, params=True, create=True, cancel=True), trace)
    assert got.categories["integration_placement"].score == 1.0  # it was sent, from the create step
    correct = got.categories["api_correctness"]
    assert correct.score == 0.0
    assert correct.evidence[0].refuted and "Seam refused" in correct.evidence[0].why


def test_routes_are_the_sdk_names():
    assert call_name("/access_codes/create") == "access_codes.create"
    assert call_name("/acs/users/create?x=1") == "acs.users.create"
    # an attacker's spelling the emulator may not route the same way confirms nothing
    for odd in (
        "/access_codes//create",
        "/access_codes/create/",
        "/Access_Codes/create",
        "/access_codes/../x",
    ):
        assert call_name(odd) == ""


def test_static_evidence_in_a_shape_it_does_not_read_leaves_the_static_score_standing():
    """A static reading whose evidence changed shape is never misread into a refutation."""
    static = _static(placed=True, params=True, create=True, cancel=True)
    static["categories"]["integration_placement"]["evidence"][0]["message"] = "placed: create_booking"
    got = _run(static, _trace())
    placement = got.categories["integration_placement"]
    assert placement.score == 1.0 and placement.source == "static"
    assert "not in a shape the hybrid reads" in placement.why
    assert got.categories["lifecycle_completeness"].score == 0.0  # the others are still judged
