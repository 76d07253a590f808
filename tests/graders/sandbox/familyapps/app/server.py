"""A small reservation app on the official Python SDK (PyPI ``seam``), for the sandbox grader's tests of the
emulator's route families. FAMILY picks the integration, MODE its behaviour (``good`` or ``wrong``):

- ``multi``: one PIN on every lock of the unit by ``access_codes.create_multiple`` (``update_multiple``);
  wrong: the cancel deletes only the first of the linked codes, as if create_multiple made one.
- ``webview``: the owner's August account onboarded through a connect webview, polled until authorized, and
  the code set on its lock named UNIT_LOCK_NAME; wrong: the device looked up by the connected account of the
  create answer, which has none yet.
- ``acs``: an ACS user with a PIN credential on the entrance ACS_ENTRANCE_ID; wrong: the update moves the
  ACS user's access schedule, not the credential's end.

Attacks on the cancel check, each making Seam forget the guest's code instead of removing it: ``nuke``
deletes the connected account (multi, acs: Seam's description says the codes stay on the locks), ``unmanage``
unmanages the lock (webview).
"""

import json
import os
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from seam import Seam

FAMILY = os.environ.get("FAMILY", "multi")
MODE = os.environ.get("MODE", "good")
RESERVATIONS = {}
LOCK = threading.Lock()
seam = Seam()  # SEAM_ENDPOINT and SEAM_API_KEY from the environment


# -- multi: linked codes on every lock of the unit --------------------------------------------------
def multi_create(res):
    codes = seam.access_codes.create_multiple(
        device_ids=os.environ["SEAM_DEVICE_IDS"].split(","),
        name="Guest " + res["guest"],
        starts_at=res["checkIn"],
        ends_at=res["checkOut"],
    )
    res["common_code_key"] = codes[0].common_code_key
    res["code_ids"] = [c.access_code_id for c in codes]
    res["pin"] = codes[0].code


def multi_update(res):
    seam.access_codes.update_multiple(common_code_key=res["common_code_key"], ends_at=res["checkOut"])


def forget_account_of(device_id):
    seam.connected_accounts.delete(
        connected_account_id=seam.devices.get(device_id=device_id).connected_account_id
    )


def multi_cancel(res):
    if MODE == "nuke":
        return forget_account_of(os.environ["SEAM_DEVICE_IDS"].split(",")[0])
    ids = res["code_ids"][:1] if MODE == "wrong" else res["code_ids"]
    for code_id in ids:
        seam.access_codes.delete(access_code_id=code_id)


# -- webview: the owner's account onboarded through a connect webview -------------------------------
ACCOUNT = {}


def owner_account():
    if "id" in ACCOUNT:
        return ACCOUNT["id"]
    webview = seam.connect_webviews.create(accepted_providers=["august"])
    if MODE == "wrong":
        account_id = webview.connected_account_id  # none yet: the owner has not signed in
    else:
        deadline = time.monotonic() + 20
        while webview.status != "authorized" and time.monotonic() < deadline:
            time.sleep(0.2)
            webview = seam.connect_webviews.get(connect_webview_id=webview.connect_webview_id)
        account_id = webview.connected_account_id
    if not account_id:
        raise RuntimeError("the owner's account is not connected")
    ACCOUNT["id"] = account_id
    return account_id


def webview_create(res):
    devices = seam.devices.list(connected_account_id=owner_account())
    lock = next(d for d in devices if d.display_name == os.environ["UNIT_LOCK_NAME"])
    code = seam.access_codes.create(
        device_id=lock.device_id,
        name="Guest " + res["guest"],
        starts_at=res["checkIn"],
        ends_at=res["checkOut"],
    )
    res["code_ids"] = [code.access_code_id]
    res["lock_id"] = lock.device_id


def webview_update(res):
    # both ends, as Seam asks of a time-bound code (one end alone is 400: docs/seam-emulator.md)
    seam.access_codes.update(
        access_code_id=res["code_ids"][0], starts_at=res["checkIn"], ends_at=res["checkOut"]
    )


def webview_cancel(res):
    if MODE == "unmanage":
        return seam.devices.update(device_id=res["lock_id"], is_managed=False)
    seam.access_codes.delete(access_code_id=res["code_ids"][0])


# -- acs: an access-system user with a PIN credential on the unit's entrance -------------------------
def acs_create(res):
    user = seam.acs.users.create(acs_system_id=os.environ["ACS_SYSTEM_ID"], full_name=res["guest"])
    credential = seam.acs.credentials.create(
        acs_user_id=user.acs_user_id,
        access_method="code",
        allowed_acs_entrance_ids=[os.environ["ACS_ENTRANCE_ID"]],
        starts_at=res["checkIn"],
        ends_at=res["checkOut"],
    )
    res["acs_user_id"] = user.acs_user_id
    res["acs_credential_id"] = credential.acs_credential_id


def acs_update(res):
    if MODE != "wrong":
        seam.acs.credentials.update(acs_credential_id=res["acs_credential_id"], ends_at=res["checkOut"])
    else:
        seam.acs.users.update(
            acs_user_id=res["acs_user_id"],
            access_schedule={"starts_at": res["checkIn"], "ends_at": res["checkOut"]},
        )


def acs_cancel(res):
    if MODE == "nuke":
        system = seam.acs.systems.get(acs_system_id=os.environ["ACS_SYSTEM_ID"])
        return seam.connected_accounts.delete(connected_account_id=system.connected_account_id)
    if MODE != "leave":  # leave: the guest's credential stays behind (for the live clean-up's test)
        seam.acs.users.delete(acs_user_id=res["acs_user_id"])  # its credentials go with it


FAMILIES = {
    "multi": (multi_create, multi_update, multi_cancel),
    "webview": (webview_create, webview_update, webview_cancel),
    "acs": (acs_create, acs_update, acs_cancel),
}
CREATE, UPDATE, CANCEL = FAMILIES[FAMILY]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def _seam(self, step, res, status):
        try:
            with LOCK:
                step(res)
        except Exception as exc:  # noqa: BLE001 - the grader reads the answer; the log says why
            traceback.print_exc(file=sys.stderr)
            return self._send(502, {"error": f"{type(exc).__name__}: {exc}"})
        return self._send(status, {"reservation": res})

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"ok": True})
        return self._send(404, {"error": "not found"})

    def do_POST(self):
        res = {"id": uuid.uuid4().hex[:8], **self._body()}
        RESERVATIONS[res["id"]] = res
        return self._seam(CREATE, res, 201)

    def do_PUT(self):
        res = RESERVATIONS.get(self.path.rsplit("/", 1)[-1])
        if res is None:
            return self._send(404, {"error": "no such reservation"})
        res.update(self._body())
        return self._seam(UPDATE, res, 200)

    def do_DELETE(self):
        res = RESERVATIONS.pop(self.path.rsplit("/", 1)[-1], None)
        if res is None:
            return self._send(404, {"error": "no such reservation"})
        return self._seam(CANCEL, res, 200)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
