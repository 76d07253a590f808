"""Labelled cases in styles the shipped Python fixtures do not use, each scored category by category:
class-based services with injected clients, handlers whose names name no phase (`open_stay`, `book`),
payloads built up in variables, Seam calls in a separate sync module, raw HTTP through
requests/httpx/urllib wrappers, and the ways code can look integrated without ever running (a function
nothing calls, a constant-false condition, code after a return). Reachability is from the eval's test
endpoints (``ENDPOINTS``), as the harness grades."""

from __future__ import annotations

from textwrap import dedent

import pytest
from rubric_helpers import ENDPOINTS, RA_KEY_PY, App, scores

from skillassay.seam.plan import AnswerKey

# A Flask app whose handlers name no phase: the old fallback credited a Seam call anywhere in the changed
# files.
ROUTES = dedent("""
    from flask import Blueprint, jsonify, request
    from stays import open_stay, amend_stay, close_stay

    bp = Blueprint("stays", __name__, url_prefix="/api")


    @bp.post("/reservations")
    def book():
        return jsonify({"reservation": open_stay(request.get_json())}), 201


    @bp.put("/reservations/<rid>")
    def amend(rid):
        return jsonify({"reservation": amend_stay(rid, request.get_json())})


    @bp.delete("/reservations/<rid>")
    def release(rid):
        return jsonify({"reservation": close_stay(rid)})
""")
APP = dedent("""
    from flask import Flask
    from routes import bp

    app = Flask(__name__)
    app.register_blueprint(bp)
""")
STAYS = dedent("""
    STAYS = {}


    def open_stay(data):
        STAYS[data["id"]] = data
        return data


    def amend_stay(rid, data):
        STAYS[rid].update(data)
        return STAYS[rid]


    def close_stay(rid):
        return STAYS.pop(rid)
""")
PRISTINE = {"app.py": APP, "routes.py": ROUTES, "stays.py": STAYS}

KEY = AnswerKey(
    expected_files_modified=["stays.py"],
    expected_new_files_allowed=[
        "gateway.py",
        "integrations/",
        "seam_api.py",
        "seam_http.py",
        "seam_hooks.py",
    ],
    expected_calls=RA_KEY_PY.expected_calls,
    expected_placements={
        "customers.push_data": ["open_stay", "amend_stay"],
        "customers.delete_data": ["close_stay"],
    },
    required_parameters={
        "push_data": ["customer_key", "reservations", "user_identities"],
        "delete_data": ["reservation_keys"],
    },
)
FULL = {
    "api_path_selection": 1.0,
    "file_targeting": 1.0,
    "integration_placement": 1.0,
    "api_correctness": 1.0,
    "lifecycle_completeness": 1.0,
    "webhook_setup": 0.0,
}


def _grade(tmp_path, files: dict[str, str], key: AnswerKey = KEY):
    return App(tmp_path, PRISTINE, files).grade(key, endpoints=ENDPOINTS)


# ----------------------------------------------------------------------------- class-based, injected client
GATEWAY = dedent("""
    from seam import Seam


    class StaySync:
        def __init__(self, client):
            self.client = client

        def push(self, stay):
            payload = {"customer_key": stay["property"]}
            payload["user_identities"] = [{"user_identity_key": stay["guest"], "name": stay["guest"]}]
            payload.update(reservations=[{"reservation_key": stay["id"], "user_identity_key": stay["guest"],
                                          "space_keys": [stay["unit"]]}])
            self.client.customers.push_data(**payload)

        def drop(self, stay_id):
            self.client.customers.delete_data(reservation_keys=[stay_id])


    sync = StaySync(Seam())
""")
STAYS_WITH_SYNC = dedent("""
    from gateway import sync

    STAYS = {}


    def open_stay(data):
        STAYS[data["id"]] = data
        sync.push(data)
        return data


    def amend_stay(rid, data):
        STAYS[rid].update(data)
        sync.push(STAYS[rid])
        return STAYS[rid]


    def close_stay(rid):
        sync.drop(rid)
        return STAYS.pop(rid)
""")


def test_class_based_service_with_an_injected_client_and_a_payload_built_in_steps(tmp_path):
    result = _grade(tmp_path, {"gateway.py": GATEWAY, "stays.py": STAYS_WITH_SYNC})
    assert scores(result) == FULL
    lifecycle = [e.message for e in result.categories["lifecycle_completeness"].evidence]
    assert any(
        "update: customers.push_data reached from PUT /api/reservations/{{RESERVATION_ID}}" in m
        and "amend -> amend_stay -> StaySync.push" in m
        for m in lifecycle
    ), lifecycle


def test_handlers_without_phase_names_are_judged_by_their_endpoints(tmp_path):
    """Only create calls Seam: update and cancel are not credited for the create call (the old fallback gave
    0.33-0.66 for a call anywhere)."""
    create_only = STAYS_WITH_SYNC.replace("    sync.push(STAYS[rid])\n", "").replace(
        "    sync.drop(rid)\n", ""
    )
    s = scores(_grade(tmp_path, {"gateway.py": GATEWAY, "stays.py": create_only}))
    assert s["lifecycle_completeness"] == 0.33
    assert s["integration_placement"] == 0.33


@pytest.mark.parametrize("helper", ["_sync_everything", "sync_everything"])
def test_calls_moved_into_a_function_nothing_calls_earn_nothing(tmp_path, helper):
    """Dead code judged one way: a helper nothing calls (private or public) earns nothing in any category,
    as a call behind `if False` does (a public one used to keep path selection and correctness)."""
    stays = STAYS + dedent(f"""

        def {helper}(stay):
            from gateway import sync
            sync.push(stay)
            sync.drop(stay["id"])
    """)
    result = _grade(tmp_path, {"gateway.py": GATEWAY, "stays.py": stays})
    s = scores(result)
    assert s["lifecycle_completeness"] == 0.0 and s["integration_placement"] == 0.0
    assert s["api_path_selection"] == 0.0 and s["api_correctness"] == 0.0
    notes = [e.message for e in result.categories["api_path_selection"].evidence]
    assert any("never runs: in a function nothing calls" in n for n in notes), notes


def test_calls_behind_a_constant_false_condition_or_after_return_never_count(tmp_path):
    stays = STAYS_WITH_SYNC.replace("    sync.push(data)\n", "    if False:\n        sync.push(data)\n")
    stays = stays.replace(
        "    sync.push(STAYS[rid])\n    return STAYS[rid]", "    return STAYS[rid]\n    sync.push(STAYS[rid])"
    )
    stays = stays.replace("    sync.drop(rid)\n", "    SEAM_ON and sync.drop(rid)\n")
    stays = "SEAM_ON = False\n" + stays
    assert "if False" in stays and "return STAYS[rid]\n    sync.push" in stays and "SEAM_ON and" in stays
    result = _grade(tmp_path, {"gateway.py": GATEWAY, "stays.py": stays})
    s = scores(result)
    assert s["lifecycle_completeness"] == 0.0 and s["integration_placement"] == 0.0


def test_direct_calls_nested_in_a_dead_helper_of_the_handler_do_not_count(tmp_path):
    stays = STAYS.replace(
        'def open_stay(data):\n    STAYS[data["id"]] = data\n    return data',
        'def open_stay(data):\n    STAYS[data["id"]] = data\n\n    def later():\n'
        '        Seam().customers.push_data(customer_key="p", reservations=[], user_identities=[])\n\n'
        "    return data",
    )
    assert "def later" in stays
    s = scores(_grade(tmp_path, {"stays.py": "from seam import Seam\n" + stays}))
    assert s["integration_placement"] == 0.0 and s["lifecycle_completeness"] == 0.0
    assert s["api_path_selection"] == 0.0  # the only push_data call never runs


# ----------------------------------------------------------------------------- a separate sync module
SYNC_MODULE = dedent("""
    import logging

    from seam import Seam

    log = logging.getLogger(__name__)


    def _client():
        return Seam()


    def reservation_to_seam(stay):
        return {
            "reservation_key": stay["id"],
            "user_identity_key": stay["guest"],
            "starts_at": stay["start"],
            "ends_at": stay["end"],
            "space_keys": [stay["unit"]],
        }


    def publish(stay):
        try:
            _client().customers.push_data(
                customer_key=stay["property"],
                user_identities=[{"user_identity_key": stay["guest"], "name": stay["guest"]}],
                reservations=list(map(reservation_to_seam, [stay])),
            )
        except Exception:
            log.exception("seam")


    def retract(stay_id):
        _client().customers.delete_data(reservation_keys=[stay_id])
""")


def test_calls_in_a_separate_sync_package_imported_as_a_module(tmp_path):
    stays = STAYS.replace("STAYS = {}", "from integrations import seam_sync\n\nSTAYS = {}")
    stays = stays.replace(
        '    STAYS[data["id"]] = data\n    return data',
        '    STAYS[data["id"]] = data\n    seam_sync.publish(data)\n    return data',
    )
    stays = stays.replace(
        "    STAYS[rid].update(data)\n", "    STAYS[rid].update(data)\n    seam_sync.publish(STAYS[rid])\n"
    )
    stays = stays.replace(
        "    return STAYS.pop(rid)", "    seam_sync.retract(rid)\n    return STAYS.pop(rid)"
    )
    result = _grade(
        tmp_path,
        {"integrations/__init__.py": "", "integrations/seam_sync.py": SYNC_MODULE, "stays.py": stays},
    )
    assert scores(result) == FULL


# ----------------------------------------------------------------------------- raw HTTP
RAW_CLIENT = dedent("""
    import os

    import requests


    class SeamApi:
        def __init__(self):
            self.base = os.environ.get("SEAM_ENDPOINT", "https://connect.getseam.com")
            self.session = requests.Session()
            self.session.headers["Authorization"] = "Bearer " + os.environ["SEAM_API_KEY"]

        def call(self, route, **body):
            response = self.session.post(self.base + route, json=body, timeout=10)
            response.raise_for_status()
            return response.json()


    api = SeamApi()
""")
STAYS_RAW = dedent("""
    from seam_api import api

    STAYS = {}


    def open_stay(data):
        STAYS[data["id"]] = data
        api.call("/customers/push_data", customer_key=data["property"],
                 user_identities=[{"user_identity_key": data["guest"], "name": data["guest"]}],
                 reservations=[{"reservation_key": data["id"], "space_keys": [data["unit"]]}])
        return data


    def amend_stay(rid, data):
        STAYS[rid].update(data)
        stay = STAYS[rid]
        api.call("/customers/push_data", customer_key=stay["property"], user_identities=[],
                 reservations=[{"reservation_key": rid, "space_keys": [stay["unit"]]}])
        return stay


    def close_stay(rid):
        api.call("/customers/delete_data", reservation_keys=[rid])
        return STAYS.pop(rid)
""")


def test_raw_http_through_a_session_wrapper_taking_the_route_and_keyword_body(tmp_path):
    result = _grade(tmp_path, {"seam_api.py": RAW_CLIENT, "stays.py": STAYS_RAW})
    assert scores(result) == FULL
    evidence = [e.message for e in result.categories["api_path_selection"].evidence]
    assert any(
        "POST /customers/push_data via SeamApi.call" in m and m.startswith("`requests.post") for m in evidence
    ), evidence


@pytest.mark.parametrize(
    "client",
    ["httpx_fstring", "urllib_request", "requests_params_delete", "httpx_client_base", "aiohttp_session"],
)
def test_raw_http_clients_and_url_spellings(tmp_path, client):
    push = {
        "httpx_fstring": """
            import httpx
            SEAM = "https://connect.getseam.com"
            def push(body):
                httpx.post(f"{SEAM}/customers/push_data", json=body, headers={"Authorization": "Bearer k"})
        """,
        "urllib_request": """
            import json
            import os
            from urllib.request import Request, urlopen
            def push(body):
                base = os.environ.get("SEAM_ENDPOINT", "https://connect.getseam.com")
                req = Request(base.rstrip("/") + "/customers/push_data", data=json.dumps(body).encode(),
                              method="POST", headers={"Content-Type": "application/json"})
                with urlopen(req) as r:
                    return json.load(r)
        """,
        "requests_params_delete": """
            import requests
            ROUTES = {"push": "/customers/push_data"}
            def push(body):
                requests.request("POST", "https://connect.getseam.com" + ROUTES["push"], json=body)
        """,
        "httpx_client_base": """
            import httpx
            def push(body):
                with httpx.Client(base_url="https://connect.getseam.com") as c:
                    c.post("/customers/push_data", json=body)
        """,
        "aiohttp_session": """
            import asyncio
            import aiohttp
            async def _push(body):
                async with aiohttp.ClientSession() as session:
                    async with session.post("https://connect.getseam.com/customers/push_data", json=body) as r:
                        return await r.json()
            def push(body):
                return asyncio.run(_push(body))
        """,  # noqa: E501 - code inside a string, kept as written
    }[client]
    stays = STAYS.replace("STAYS = {}", "from seam_http import push\n\nSTAYS = {}").replace(
        '    STAYS[data["id"]] = data\n    return data',
        '    STAYS[data["id"]] = data\n'
        '    body = {"customer_key": data["property"], "user_identities": [], "reservations": []}\n'
        "    push(body)\n    return data",
    )
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["open_stay"]},
        required_parameters={"push_data": ["customer_key", "reservations", "user_identities"]},
    )
    s = scores(_grade(tmp_path, {"seam_http.py": push, "stays.py": stays}, key))
    assert s["api_path_selection"] == 1.0 and s["integration_placement"] == 1.0
    assert s["api_correctness"] == 1.0 and s["lifecycle_completeness"] == 1.0


def test_raw_http_to_another_service_or_an_unknown_route_is_no_seam_call(tmp_path):
    stays = STAYS.replace("STAYS = {}", "import requests\n\nSTAYS = {}").replace(
        '    STAYS[data["id"]] = data\n    return data',
        '    STAYS[data["id"]] = data\n'
        '    requests.post("https://api.stripe.com/v1/customers/push_data", json={"customer_key": 1})\n'
        '    requests.post("https://connect.getseam.com/customers/push_everything", json={})\n'
        '    requests.post("https://connect.getseam.com/customers/push_data_v2", json={})\n'
        "    return data",
    )
    s = scores(_grade(tmp_path, {"stays.py": stays}))
    assert s["api_path_selection"] == 0.0 and s["lifecycle_completeness"] == 0.0


def test_a_raw_request_in_a_string_or_comment_is_no_call(tmp_path):
    stays = STAYS.replace("STAYS = {}", "import requests\n\nSTAYS = {}").replace(
        '    STAYS[data["id"]] = data\n    return data',
        '    STAYS[data["id"]] = data\n'
        '    # requests.post("https://connect.getseam.com/customers/push_data", json=data)\n'
        "    note = 'requests.post(\"https://connect.getseam.com/customers/push_data\", json=data)'\n"
        "    return data",
    )
    assert scores(_grade(tmp_path, {"stays.py": stays}))["api_path_selection"] == 0.0


# ----------------------------------------------------------------------------- only new routes are new
WEBHOOKS = dedent("""
    from flask import Blueprint, request

    hooks = Blueprint("hooks", __name__)


    @hooks.post("/webhooks/payments")
    def payments():
        return {"ok": request.get_json()["type"] == "charge.succeeded"}
""")


def test_the_pristine_app_graded_against_itself_earns_nothing(tmp_path):
    pristine = {**PRISTINE, "hooks.py": WEBHOOKS, "requirements.txt": "flask\n"}
    result = App(tmp_path, pristine, {}).grade(KEY, endpoints=ENDPOINTS)
    assert result.total == 0.0, scores(result)


def test_a_requirements_only_change_scores_nothing(tmp_path):
    """The handlers it would touch live in unchanged files (one with an unrelated webhook route): none of
    their routes is new, and no Seam call is in a changed file."""
    pristine = {**PRISTINE, "hooks.py": WEBHOOKS, "requirements.txt": "flask\n"}
    result = App(tmp_path, pristine, {"requirements.txt": "flask\nseam==3.18.0\n"}).grade(
        KEY, endpoints=ENDPOINTS
    )
    assert result.total == 0.0, scores(result)


def test_an_unchanged_webhook_route_is_not_new_when_its_file_is_touched_for_something_else(tmp_path):
    pristine = {**PRISTINE, "hooks.py": WEBHOOKS}
    touched = WEBHOOKS + "\n\ndef helper():\n    return 1\n"
    s = scores(App(tmp_path, pristine, {"hooks.py": touched}).grade(KEY, endpoints=ENDPOINTS))
    assert s["webhook_setup"] == 0.0


def test_a_new_seam_webhook_route_on_a_mounted_blueprint(tmp_path):
    hooks = """
        from flask import Blueprint, request

        seam_hooks = Blueprint("seam_hooks", __name__)
        HANDLED = ("access_code.set_on_device", "access_code.failed_to_set_on_device")


        @seam_hooks.post("/seam")
        def receive():
            event = request.get_json()
            if event["event_type"] in HANDLED:
                return {"ok": True}
            return {"ok": False}
    """
    app = (
        APP + '\nfrom seam_hooks import seam_hooks\napp.register_blueprint(seam_hooks, url_prefix="/hooks")\n'
    )
    result = App(tmp_path, PRISTINE, {"seam_hooks.py": hooks, "app.py": app}).grade(KEY, endpoints=ENDPOINTS)
    webhook = result.categories["webhook_setup"]
    assert webhook.score == 1.0
    assert "new route POST /hooks/seam" in webhook.evidence[0].message
