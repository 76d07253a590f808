"""A stdlib-only reservation app for the sandbox grader's tests. Talks to Seam over plain HTTP (access codes
on the device named by SEAM_DEVICE_ID); MODE picks a behaviour, good or deliberately broken."""

import json
import os
import sys
import threading
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = os.environ.get("MODE", "good")
SEAM = os.environ.get("SEAM_ENDPOINT", "https://connect.getseam.com").rstrip("/")
KEY = os.environ.get("SEAM_API_KEY", "")
DEVICE = os.environ.get("SEAM_DEVICE_ID", "")
RESERVATIONS = {}

if MODE == "crash":
    print("boom: the app refuses to start (missing DATABASE_URL)", file=sys.stderr, flush=True)
    sys.exit(3)
if os.environ.get("PID_FILE"):
    with open(os.environ["PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
# a hostile app: at start it reaches for what it must not (other listeners, another run's emulator, the
# internet)
for target in filter(None, os.environ.get("ATTACK_URLS", "").split(",")):
    try:
        with urllib.request.urlopen(target, timeout=3) as r:
            print(f"ATTACK {target} reached {r.status}", flush=True)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the point
        print(f"ATTACK {target} refused {type(exc).__name__}", flush=True)


def seam(route, body):
    req = urllib.request.Request(
        SEAM + "/" + route,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"authorization": "Bearer " + KEY, "content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"ok": True})
        self._send(404, {"error": "not found"})

    def do_POST(self):
        body = self._body()
        if MODE == "die_on_create":
            os._exit(1)
        if MODE == "err500":
            return self._send(500, {"error": "database is locked"})
        rid = uuid.uuid4().hex[:8]
        res = {"id": rid, **body}
        # a wrong device id: Seam refuses, the app logs it and answers as if all went well
        if MODE == "seam_fails":
            try:
                seam(
                    "access_codes/create",
                    {"device_id": "00000000-0000-4000-8000-000000000000", "name": "guest " + rid},
                )
            except Exception as e:  # noqa: BLE001
                print("seam failed:", e, file=sys.stderr, flush=True)
        # the create step sent to a route the emulator answers only approximately (the generic engine):
        # one no correct solution on the access-codes path needs, or one of the path's own
        elif MODE in ("gap_off_path", "gap_on_path"):
            route = "thermostats/cool" if MODE == "gap_off_path" else "locks/configure_auto_lock"
            seam(route, {"device_id": DEVICE, "auto_lock_enabled": False})
        # a request Seam answers 200 that creates nothing (a space key Seam does not have)
        elif MODE == "seam_noop":
            seam("devices/list", {})
        # the code comes from a timer, after the create step's window has closed
        elif MODE == "delayed":
            late = {
                "device_id": DEVICE,
                "name": "guest " + rid,
                "starts_at": body["checkIn"],
                "ends_at": body["checkOut"],
            }
            threading.Timer(float(os.environ.get("DELAY", "2")), seam, ("access_codes/create", late)).start()
        elif MODE not in ("no_seam", "delayed", "gap_off_path", "gap_on_path"):
            code = seam(
                "access_codes/create",
                {
                    "device_id": DEVICE,
                    "name": "guest " + rid,
                    "starts_at": body["checkIn"],
                    "ends_at": body["checkOut"],
                },
            )
            res["code_id"] = code["access_code"]["access_code_id"]
        RESERVATIONS[rid] = res
        if MODE == "nojson":
            return self._send(201, "created " + rid, "text/plain")
        if MODE in ("noid", "delayed"):
            return self._send(201, {"ok": True})
        self._send(201, {"reservation": res})

    def do_PUT(self):
        rid = self.path.rsplit("/", 1)[-1]
        body = self._body()
        res = RESERVATIONS.get(rid)
        if res is None:
            return self._send(404, {"error": "no such reservation"})
        res.update(body)
        if MODE == "good" and "code_id" in res:
            seam(
                "access_codes/update",
                {"access_code_id": res["code_id"], "starts_at": res["checkIn"], "ends_at": res["checkOut"]},
            )
        elif MODE == "wrong_update" and "code_id" in res:
            seam("access_codes/update", {"access_code_id": res["code_id"], "name": "renamed"})
        self._send(200, {"reservation": res})

    def do_DELETE(self):
        rid = self.path.rsplit("/", 1)[-1]
        res = RESERVATIONS.pop(rid, None)
        if res is None:
            return self._send(404, {"error": "no such reservation"})
        if MODE in ("good", "wrong_update") and "code_id" in res:
            seam("access_codes/delete", {"access_code_id": res["code_id"]})
        self._send(200, {"ok": True})


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
