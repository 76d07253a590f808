"""Every check on small Flask apps."""

from __future__ import annotations

import dataclasses
import json

from rubric_helpers import RA_KEY_PY, scores

from skillassay.seam.plan import AnswerKey

PRISTINE = {
    "requirements.txt": "flask==3.1.3\n",
    "app.py": """
        from flask import Flask
        from blueprints.reservations import bp
        from blueprints.webhooks import hooks

        app = Flask(__name__)
        app.register_blueprint(bp)
        app.register_blueprint(hooks)
    """,
    "blueprints/reservations.py": """
        from flask import Blueprint, request, jsonify
        from services import reservation_service

        bp = Blueprint("reservations", __name__, url_prefix="/api")


        @bp.post("/reservations")
        def create_reservation():
            return jsonify(reservation_service.create_reservation(request.get_json()))


        @bp.route("/reservations/<rid>", methods=["PUT"])
        def update_reservation(rid):
            return jsonify(reservation_service.update_reservation(rid, request.get_json()))


        @bp.delete("/reservations/<rid>")
        def cancel_reservation(rid):
            return jsonify(reservation_service.cancel_reservation(rid))
    """,
    "blueprints/webhooks.py": """
        from flask import Blueprint

        hooks = Blueprint("webhooks", __name__, url_prefix="/webhooks")


        @hooks.post("/payments")
        def payments():
            return "", 204
    """,
    "services/reservation_service.py": """
        def create_reservation(data):
            return {"id": "r1", **data}


        def update_reservation(rid, changes):
            return {"id": rid, **changes}


        def cancel_reservation(rid):
            return {"id": rid, "status": "cancelled"}
    """,
}

SERVICE_GOLDEN = """
    from seam import Seam

    seam = Seam()


    def _payload(r):
        return dict(
            customer_key=r["property_id"],
            user_identities=[{"user_identity_key": r["guest_id"]}],
            reservations=[{"reservation_key": r["id"], "space_keys": [r["unit_id"]]}],
        )


    def create_reservation(data):
        r = {"id": "r1", **data}
        seam.customers.push_data(**_payload(r))
        return r


    def update_reservation(rid, changes):
        r = {"id": rid, **changes}
        payload = {"customer_key": r["property_id"]}
        payload["user_identities"] = [{"user_identity_key": r["guest_id"]}]
        payload["reservations"] = [{"reservation_key": rid, "space_keys": [r["unit_id"]]} for _ in range(1)]
        seam.customers.push_data(**payload)
        return r


    def cancel_reservation(rid):
        seam.customers.delete_data(customer_keys=["p1"], reservation_keys=[rid])
        return {"id": rid, "status": "cancelled"}
"""

WEBHOOK = """
    from flask import Blueprint, request

    seam_hooks = Blueprint("seam_hooks", __name__, url_prefix="/webhooks")

    HANDLERS = {
        "access_code.set_on_device": lambda e: print("set", e),
        "device.disconnected": lambda e: print("offline", e),
    }


    @seam_hooks.route("/seam", methods=["POST"])
    def seam_webhook():
        event = request.get_json()
        handler = HANDLERS.get(event["event_type"])
        if handler:
            handler(event)
        return "", 204
"""


def test_golden_scores_100(make_app):
    key = dataclasses.replace(
        RA_KEY_PY,
        expected_files_modified=["services/reservation_service.py"],
        expected_new_files_allowed=["blueprints/seam_*.py"],
    )
    app = make_app(
        PRISTINE, {"services/reservation_service.py": SERVICE_GOLDEN, "blueprints/seam_hooks.py": WEBHOOK}
    )
    result = app.grade(key)
    assert result.total == 100.0, json.dumps(result.to_json(), indent=1)
    hook = result.categories["webhook_setup"].evidence[0]
    assert "POST /webhooks/seam" in hook.message and "device.disconnected" in hook.message


def test_incomplete_create_only(make_app):
    service = SERVICE_GOLDEN.replace("seam.customers.push_data(**payload)", "pass").replace(
        'seam.customers.delete_data(customer_keys=["p1"], reservation_keys=[rid])', "pass"
    )
    s = scores(make_app(PRISTINE, {"services/reservation_service.py": service}).grade(RA_KEY_PY))
    assert s == {
        "api_path_selection": 1.0,
        "file_targeting": 1.0,
        "integration_placement": 0.33,
        "api_correctness": 0.5,
        "lifecycle_completeness": 0.33,
        "webhook_setup": 0.0,
    }


def test_missing_parameters_are_named(make_app):
    service = SERVICE_GOLDEN.replace('customer_keys=["p1"], ', "")
    result = make_app(PRISTINE, {"services/reservation_service.py": service}).grade(RA_KEY_PY)
    assert result.categories["api_correctness"].score == 0.75
    missing = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert missing == [
        "customers.delete_data: 1/2 required parameters; missing customer_key "
        "(`customer_key` read as `customer_keys` (the SDK's delete_data takes `customer_keys`))"
    ]


def test_singular_customer_key_is_not_accepted_by_delete_data(make_app):
    service = SERVICE_GOLDEN.replace('customer_keys=["p1"]', 'customer_key="p1"')
    s = scores(make_app(PRISTINE, {"services/reservation_service.py": service}).grade(RA_KEY_PY))
    assert s["api_correctness"] == 0.75


def test_camel_case_method_in_python_fails_correctness(make_app):
    service = SERVICE_GOLDEN.replace("seam.customers.delete_data", "seam.customers.deleteData")
    result = make_app(PRISTINE, {"services/reservation_service.py": service}).grade(RA_KEY_PY)
    s = scores(result)
    assert s["lifecycle_completeness"] == 1.0  # the path and the phase are still recognised
    assert s["api_correctness"] == 0.5
    problems = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert any("has no `customers.deleteData`; its method is `customers.delete_data`" in p for p in problems)


def test_injected_client_and_wrapper_module(make_app):
    service = """
        from services.seam_sync import SeamSync

        sync = SeamSync()


        def create_reservation(data):
            r = {"id": "r1", **data}
            sync.push(r)
            return r


        def update_reservation(rid, changes):
            r = {"id": rid, **changes}
            sync.push(r)
            return r


        def cancel_reservation(rid):
            sync.forget(rid)
            return {"id": rid}
    """
    seam_sync = """
        from seam import Seam


        class SeamSync:
            def __init__(self, client=None):
                self.client = client or Seam()
                self.customers = self.client.customers

            def push(self, r):
                kwargs = {"customer_key": r["property_id"], "reservations": [{"reservation_key": r["id"]}]}
                self.customers.push_data(**kwargs, user_identities=[])

            def forget(self, rid):  # an `async def` would never run: cancel_reservation does not await it
                self.client.customers.delete_data(reservation_keys=[rid])
    """
    result = make_app(
        PRISTINE, {"services/reservation_service.py": service, "services/seam_sync.py": seam_sync}
    ).grade(RA_KEY_PY)
    s = scores(result)
    assert s["integration_placement"] == 1.0
    assert s["lifecycle_completeness"] == 1.0
    assert s["api_correctness"] == 0.75  # delete_data lacks customer_keys
    chain = [e.message for e in result.categories["integration_placement"].evidence]
    assert any("create_reservation via create_reservation -> SeamSync.push" in m for m in chain)


def test_webhook_route_without_events_and_add_url_rule(make_app):
    hook = """
        from flask import Blueprint

        bp2 = Blueprint("h", __name__)


        def seam_webhook():
            return "", 204


        bp2.add_url_rule("/webhooks/seam", view_func=seam_webhook, methods=["POST"])
    """
    s = scores(make_app(PRISTINE, {"blueprints/h.py": hook}).grade(RA_KEY_PY))
    assert s["webhook_setup"] == 0.5


def test_webhook_events_in_called_function_and_match(make_app):
    hook = """
        from flask import Blueprint, request

        bp3 = Blueprint("seam", __name__)


        def dispatch(event):
            match event["event_type"]:
                case "access_method.issued":
                    return "ok"
                case _:
                    return None


        @bp3.post("/seam/events")
        def receive():
            dispatch(request.get_json())
            return "", 204
    """
    s = scores(make_app(PRISTINE, {"blueprints/seam_events.py": hook}).grade(RA_KEY_PY))
    assert s["webhook_setup"] == 1.0


def test_access_grants_path(make_app):
    service = SERVICE_GOLDEN.replace(
        "seam.customers.push_data(**_payload(r))",
        'seam.access_grants.create(user_identity={"full_name": "x"}, requested_access_methods=[{"mode": '
        '"code"}], '
        'space_keys=[r["unit_id"]], starts_at="a", ends_at="b")',
    )
    key = AnswerKey(
        expected_calls={"create": ["access_grants.create"], "cancel": ["access_grants.delete"]},
        expected_placements={
            "access_grants.create": ["create_reservation"],
            "access_grants.delete": ["cancel_reservation"],
        },
        required_parameters={
            "create": ["requested_access_methods", "starts_at", "ends_at", "space_keys"],
            "delete": ["access_grant_id"],
        },
    )
    s = scores(make_app(PRISTINE, {"services/reservation_service.py": service}).grade(key, "access_grants"))
    assert s["api_path_selection"] == 0.5  # push_data is still called in update_reservation
    assert s["integration_placement"] == 0.5
    assert s["api_correctness"] == 0.5  # create complete, no delete call
    assert s["lifecycle_completeness"] == 0.5


def test_library_rejects_unknown_check_and_path(make_app):
    import pytest

    from skillassay.errors import SkillassayError
    from skillassay.seam.plan import Rubric, RubricCategory

    app = make_app(PRISTINE, {})
    bad = Rubric(categories=[RubricCategory(name="x", weight=100, check="regex_match")])
    with pytest.raises(SkillassayError, match=r"/categories/0/check.*regex_match"):
        app.grade(RA_KEY_PY, rubric=bad)
    with pytest.raises(SkillassayError, match="expected_api_path 'cloud'"):
        app.grade(RA_KEY_PY, api_path="cloud")


def test_plan_json_shape(make_app):
    result = make_app(PRISTINE, {"services/reservation_service.py": SERVICE_GOLDEN}).grade(RA_KEY_PY)
    plan = result.plan_json()
    assert set(plan) == {"total", "categories"}
    assert all(set(c) == {"score", "weighted"} for c in plan["categories"].values())
    assert plan["total"] == 90.0  # no webhook route


def test_payload_update_and_map(make_app):
    service = """
        from seam import Seam


        def to_seam(r):
            return {"reservation_key": r["id"], "space_keys": [r["unit"]]}


        def create_reservation(rs):
            payload = {"customer_key": "p"}
            payload.update(user_identities=[])
            Seam().customers.push_data(**payload, reservations=list(map(to_seam, rs)))
    """
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["create_reservation"]},
        required_parameters={"push_data": ["customer_key", "user_identities", "reservations[].space_keys"]},
    )
    result = make_app({"svc.py": "def create_reservation(rs):\n    pass\n"}, {"svc.py": service}).grade(key)
    assert result.categories["api_correctness"].score == 1.0
