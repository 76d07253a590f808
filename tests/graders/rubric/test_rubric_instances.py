"""Clients made in one module and used in another, whatever they are called: their calls count as in the
module that makes them (issue 26: an exported instance used elsewhere scored 0)."""

from __future__ import annotations

from labelled_styles import BOOKING_ENDPOINTS, FLASK, FLASK_PLACES, _key
from rubric_helpers import App, scores

SERVICE = """
from lib.net import {name}

BOOKINGS = {{}}


def create_booking(data):
    BOOKINGS[data["id"]] = data
    {call}
    return data


def update_booking(bid, data):
    BOOKINGS[bid].update(data)
    return BOOKINGS[bid]


def cancel_booking(bid):
    return BOOKINGS.pop(bid)
"""


def _create_only(tmp_path, lib: str, name: str, call: str):
    key = _key("access_codes", FLASK_PLACES)
    changes = {
        "lib/__init__.py": "",
        "lib/net.py": lib,
        "services/bookings.py": SERVICE.format(name=name, call=call),
    }
    return scores(
        App(tmp_path, FLASK, changes).grade(key, api_path="access_codes", endpoints=BOOKING_ENDPOINTS)
    )


BODY = '{"device_id": data["device"], "starts_at": data["start"], "ends_at": data["end"]}'


def test_a_requests_session_exported_from_lib(tmp_path):
    lib = 'import requests\n\nwire = requests.Session()\nwire.headers["Authorization"] = "Bearer k"\n'
    s = _create_only(
        tmp_path, lib, "wire", f'wire.post("https://connect.getseam.com/access_codes/create", json={BODY})'
    )
    assert s["api_path_selection"] == 1.0 and s["lifecycle_completeness"] == 0.33
    assert s["api_correctness"] == 0.5  # create's parameters all there; no delete call


def test_an_sdk_client_built_by_a_factory_in_lib_and_injected_into_a_class(tmp_path):
    lib = "from seam import Seam\n\n\ndef make_client():\n    return Seam()\n"
    service = SERVICE.format(name="make_client", call="locks.issue(**" + BODY + ")").replace(
        "BOOKINGS = {}",
        "class Locks:\n    def __init__(self, api):\n        self.api = api\n\n"
        "    def issue(self, **body):\n        return self.api.access_codes.create(**body)\n\n\n"
        "locks = Locks(make_client())\nBOOKINGS = {}",
    )
    assert "import seam" not in service and "from seam" not in service
    key = _key("access_codes", FLASK_PLACES)
    changes = {"lib/__init__.py": "", "lib/net.py": lib, "services/bookings.py": service}
    result = App(tmp_path, FLASK, changes).grade(key, api_path="access_codes", endpoints=BOOKING_ENDPOINTS)
    s = scores(result)
    assert s["api_path_selection"] == 1.0 and s["lifecycle_completeness"] == 0.33


def test_a_package_object_that_is_not_seam_is_no_seam_client(tmp_path):
    # the lib module imports seam too: what counts is what the object is made by
    lib = "import boto3\nfrom seam import Seam\n\nstore = boto3.resource('dynamodb')\nseam = Seam()\n"
    s = _create_only(tmp_path, lib, "store", "store.access_codes.create(device_id='d')")
    assert s["api_path_selection"] == 0.0
