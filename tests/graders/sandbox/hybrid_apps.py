"""The hybrid rubric's labelled app: a stdlib reservation service whose handlers are coroutines, its Seam
calls written in styles the static reading still misjudges (a method name read from the environment at run
time, a coroutine kept in a variable and never awaited, a job pushed onto a queue nothing drains) and in
styles it now reads right (a method passed to ``asyncio.to_thread``, an ``async def`` helper called without
``await``), with each case's truth per rubric category. Shared by
tests/graders/sandbox/test_hybrid_rubric.py and benchmarks/hybrid.py."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent
from typing import Any, NamedTuple

from conftest import make_fixture, tiny_config

from skillassay.kinds.base import GradeOutcome, GradeRequest
from skillassay.seam.eval import SeamEval
from skillassay.seam.kind import SeamKind
from skillassay.seam.plan import AnswerKey, Rubric, RubricCategory

SERVER = dedent('''
    """A stdlib reservation app whose handlers are coroutines (asyncio.run per request)."""
    import asyncio
    import json
    import os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from bookings import Bookings

    BOOKINGS = Bookings()


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

        def do_GET(self):
            self._send(200, {"ok": True})

        def do_POST(self):
            self._send(201, {"reservation": asyncio.run(BOOKINGS.create_reservation(self._body()))})

        def do_PUT(self):
            rid = self.path.rsplit("/", 1)[-1]
            self._send(200, {"reservation": asyncio.run(BOOKINGS.update_reservation(rid, self._body()))})

        def do_DELETE(self):
            rid = self.path.rsplit("/", 1)[-1]
            self._send(200, {"reservation": asyncio.run(BOOKINGS.cancel_reservation(rid))})


    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
''')
# a small Seam client of the app's own (the SDK is not installed): one POST per call
SEAMLITE = dedent("""
    import json
    import os
    import urllib.request


    class _Namespace:
        def __init__(self, client, name):
            self._client, self._name = client, name

        def __getattr__(self, method):
            def call(**params):
                return self._client.post(f"/{self._name}/{method}", params)

            return call


    class Seam:
        def __init__(self, api_key):
            self.api_key = api_key
            self.endpoint = os.environ.get("SEAM_ENDPOINT", "https://connect.getseam.com").rstrip("/")
            self.access_grants = _Namespace(self, "access_grants")

        def post(self, route, params):
            req = urllib.request.Request(
                self.endpoint + route,
                data=json.dumps(params).encode(),
                method="POST",
                headers={"authorization": "Bearer " + self.api_key, "content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read() or b"{}")
""")
PRISTINE_BOOKINGS = dedent("""
    import uuid


    class Bookings:
        def __init__(self):
            self.reservations = {}

        async def create_reservation(self, body):
            rid = uuid.uuid4().hex[:8]
            self.reservations[rid] = {"id": rid, **body}
            return self.reservations[rid]

        async def update_reservation(self, rid, body):
            self.reservations[rid].update(body)
            return self.reservations[rid]

        async def cancel_reservation(self, rid):
            return self.reservations.pop(rid)
""")
CREATE = {
    "direct": """
        got = self.seam.access_grants.create(
            user_identity={"full_name": body["guest"]},
            device_ids=[DEVICE],
            requested_access_methods=[{"mode": "code"}],
            starts_at=body["checkIn"],
            ends_at=body["checkOut"],
        )""",
    # a method passed as a value, run in a thread: sent, and the static reading counts it where it is handed
    # over
    "thread": """
        got = await asyncio.to_thread(
            self.seam.access_grants.create,
            user_identity={"full_name": body["guest"]},
            device_ids=[DEVICE],
            requested_access_methods=[{"mode": "code"}],
            starts_at=body["checkIn"],
            ends_at=body["checkOut"],
        )""",
    # the method's name read from the environment at run time (unset: "create"): sent, the static reading
    # cannot tell which method it is
    "runtime": """
        got = getattr(self.seam.access_grants, os.environ.get("SEAM_GRANT_OP", "create"))(
            user_identity={"full_name": body["guest"]},
            device_ids=[DEVICE],
            requested_access_methods=[{"mode": "code"}],
            starts_at=body["checkIn"],
            ends_at=body["checkOut"],
        )""",
}
UPDATE = {
    "direct": 'self.seam.access_grants.update(access_grant_id=res["grant_id"], ends_at=res["checkOut"])',
    # an async helper called without await: the coroutine is made and dropped, never run (the static reading
    # knows: no credit)
    "unawaited": 'self._push_times(res["grant_id"], res["checkOut"])  # never awaited: never runs',
    # the same coroutine kept in a variable and never awaited: never runs, and the static reading credits it
    "kept": 'pending = self._push_times(res["grant_id"], res["checkOut"])  # kept, never awaited: never runs',
}
CANCEL = {
    "direct": 'self.seam.access_grants.delete(access_grant_id=res["grant_id"])',
    "unawaited": 'self._drop_grant(res["grant_id"])  # never awaited: never runs',
    # a job pushed onto a queue nothing drains: never runs, and the static reading assumes it does
    "queued": (
        "self.later.append(functools.partial("
        'self.seam.access_grants.delete, access_grant_id=res["grant_id"]))'
    ),
}
BOOKINGS_TEMPLATE = """
import asyncio
import functools
import os
import uuid

from seamlite import Seam

DEVICE = os.environ.get("SEAM_DEVICE_ID", "")


class Bookings:
    def __init__(self):
        self.seam = Seam(api_key=os.environ.get("SEAM_API_KEY", ""))
        self.reservations = {}
        self.later = []  # jobs for later: nothing ever takes them off

    async def create_reservation(self, body):
        rid = uuid.uuid4().hex[:8]@CREATE@
        self.reservations[rid] = {"id": rid, **body, "grant_id": got["access_grant"]["access_grant_id"]}
        return self.reservations[rid]

    async def _push_times(self, grant_id, ends_at):
        self.seam.access_grants.update(access_grant_id=grant_id, ends_at=ends_at)

    async def _drop_grant(self, grant_id):
        self.seam.access_grants.delete(access_grant_id=grant_id)

    async def update_reservation(self, rid, body):
        res = self.reservations[rid]
        res.update(body)
        @UPDATE@
        return res

    async def cancel_reservation(self, rid):
        res = self.reservations.pop(rid)
        @CANCEL@
        return res
"""


def bookings(create: str = "runtime", update: str = "kept", cancel: str = "direct") -> str:
    """The modified app's bookings.py, each phase's Seam call written in the style named."""
    return (
        BOOKINGS_TEMPLATE.replace("@CREATE@", dedent(CREATE[create]).replace("\n", "\n        "))
        .replace("@UPDATE@", UPDATE[update])
        .replace("@CANCEL@", CANCEL[cancel])
    )


class Case(NamedTuple):
    """One labelled app: each phase's style, its truth per rubric category (what the app really does when
    run), and whether the static reading alone judges some category wrongly (else both layers agree)."""

    styles: tuple[str, str, str]
    truth: dict[str, float]
    static_misjudges: bool


# The webhook category is 0 in all (none adds a webhook route).
def _truth(create: bool, update: bool, cancel: bool) -> dict[str, float]:
    share = int((create + update + cancel) / 3 * 100) / 100
    return {
        "api_path_selection": 1.0 if create else 0.0,
        "file_targeting": 1.0,
        "integration_placement": share,
        "api_correctness": share,
        "lifecycle_completeness": share,
        "webhook_setup": 0.0,
    }


# the app the hybrid tests grade once: static misses create, credits update that never runs, agrees on cancel
STYLES = ("runtime", "kept", "direct")
CASES = {
    # styles the static reading still misjudges: the trace settles them
    "runtime-name-create": Case(("runtime", "direct", "direct"), _truth(True, True, True), True),
    "kept-coroutine-update": Case(("direct", "kept", "direct"), _truth(True, False, True), True),
    "runtime-create-kept-update": Case(STYLES, _truth(True, False, True), True),
    "queued-cancel": Case(("direct", "direct", "queued"), _truth(True, True, False), True),
    "kept-update-queued-cancel": Case(("direct", "kept", "queued"), _truth(True, False, False), True),
    # styles the static reading now reads right: both layers agree
    "thread-create": Case(("thread", "direct", "direct"), _truth(True, True, True), False),
    "unawaited-update": Case(("direct", "unawaited", "direct"), _truth(True, False, True), False),
    "thread-create-unawaited-update-and-cancel": Case(
        ("thread", "unawaited", "unawaited"), _truth(True, False, False), False
    ),
}

DOCKERFILE = 'FROM python:3.11-slim\nWORKDIR /app\nCOPY . .\nEXPOSE 8000\nCMD ["python", "server.py"]\n'
BROKEN_DOCKERFILE = DOCKERFILE.replace("server.py", "no_such_server.py")

KEY = AnswerKey(
    expected_files_modified=["bookings.py"],
    expected_calls={
        "create": ["access_grants.create"],
        "update": ["access_grants.update"],
        "cancel": ["access_grants.delete"],
    },
    expected_placements={
        "access_grants.create": ["create_reservation"],
        "access_grants.update": ["update_reservation"],
        "access_grants.delete": ["cancel_reservation"],
    },
    required_parameters={
        "create": ["requested_access_methods", "starts_at", "ends_at"],
        "update": ["access_grant_id", "ends_at"],
        "delete": ["access_grant_id"],
    },
)
RUBRIC = Rubric(
    categories=[
        RubricCategory(name="api_path_selection", weight=15, check="api_path_match"),
        RubricCategory(name="file_targeting", weight=20, check="files_modified_match"),
        RubricCategory(name="integration_placement", weight=20, check="calls_in_expected_functions"),
        RubricCategory(name="api_correctness", weight=20, check="required_params_present"),
        RubricCategory(name="lifecycle_completeness", weight=15, check="all_handlers_modified"),
        RubricCategory(name="webhook_setup", weight=10, check="webhook_route_added"),
    ]
)


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text.lstrip("\n"))
    return root


def definition(
    root: Path, dockerfile: str = DOCKERFILE, styles: tuple[str, str, str] = STYLES
) -> tuple[SeamEval, Path]:
    """The eval (pristine app, answer key, rubric, endpoints) and the modified app, written under ``root``."""
    d = make_fixture(root, tiny_config(), dockerfile)
    for stale in d.app_dir.iterdir():
        stale.unlink()
    write(d.app_dir, {"server.py": SERVER, "seamlite.py": SEAMLITE, "bookings.py": PRISTINE_BOOKINGS})
    modified = write(
        root / "modified", {"server.py": SERVER, "seamlite.py": SEAMLITE, "bookings.py": bookings(*styles)}
    )
    return d.model_copy(update={"answer_key": KEY, "rubric": RUBRIC, "api_path": "access_grants"}), modified


def grade(
    root: Path,
    emulator: Any,
    layers: str = "both",
    dockerfile: str = DOCKERFILE,
    styles: tuple[str, str, str] = STYLES,
) -> GradeOutcome:
    """The app in ``styles`` graded by the Seam kind on ``layers`` (the sandbox's waits kept short)."""
    d, modified = definition(root, dockerfile, styles)
    run_dir = root / "run"
    run_dir.mkdir()
    request = GradeRequest(
        definition=d,
        modified_dir=modified,
        run_dir=run_dir,
        run_id="hyb" + root.name[-5:].lower().replace("_", ""),
        layers=layers,  # type: ignore[arg-type]
        emulator=emulator,
        sandbox_waits={"quiet_after": 1.5, "fail_grace": 1.0},
    )
    return SeamKind().grade(request)
