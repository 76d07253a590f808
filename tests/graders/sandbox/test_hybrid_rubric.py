"""The hybrid rubric, playing the attacker with code the static reading misjudges: a handler that calls an
``async def`` Seam helper without ``await`` (Python never runs it: static credits it, the trace shows no
request, refuted and 0), and ``await asyncio.to_thread(self.seam.access_grants.create, ...)`` (a method passed
as a value: static misses it, the trace shows it sent during create, credited). One app holds both, built and
driven once; a build that fails leaves no trace, and the static reading stands; ``--layers rubric`` stays
static and says so."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
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
BOOKINGS = dedent("""
    import asyncio
    import os
    import uuid

    from seamlite import Seam

    DEVICE = os.environ.get("SEAM_DEVICE_ID", "")


    class Bookings:
        def __init__(self):
            self.seam = Seam(api_key=os.environ.get("SEAM_API_KEY", ""))
            self.reservations = {}

        async def create_reservation(self, body):
            rid = uuid.uuid4().hex[:8]
            # a method passed as a value, run in a thread: sent, though no call of it is written
            got = await asyncio.to_thread(
                self.seam.access_grants.create,
                user_identity={"full_name": body["guest"]},
                device_ids=[DEVICE],
                requested_access_methods=[{"mode": "code"}],
                starts_at=body["checkIn"],
                ends_at=body["checkOut"],
            )
            self.reservations[rid] = {"id": rid, **body, "grant_id": got["access_grant"]["access_grant_id"]}
            return self.reservations[rid]

        async def push_times(self, grant_id, ends_at):
            self.seam.access_grants.update(access_grant_id=grant_id, ends_at=ends_at)

        async def update_reservation(self, rid, body):
            res = self.reservations[rid]
            res.update(body)
            self.push_times(res["grant_id"], res["checkOut"])  # never awaited: the coroutine never runs
            return res

        async def cancel_reservation(self, rid):
            res = self.reservations.pop(rid)
            self.seam.access_grants.delete(access_grant_id=res["grant_id"])
            return res
""")
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


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text.lstrip("\n"))
    return root


def _definition(root: Path, dockerfile: str = DOCKERFILE) -> tuple[SeamEval, Path]:
    """The eval (pristine app, answer key, rubric, endpoints) and the modified app, written under ``root``."""
    d = make_fixture(root, tiny_config(), dockerfile)
    for stale in d.app_dir.iterdir():
        stale.unlink()
    _write(d.app_dir, {"server.py": SERVER, "seamlite.py": SEAMLITE, "bookings.py": PRISTINE_BOOKINGS})
    modified = _write(
        root / "modified", {"server.py": SERVER, "seamlite.py": SEAMLITE, "bookings.py": BOOKINGS}
    )
    return d.model_copy(update={"answer_key": KEY, "rubric": RUBRIC, "api_path": "access_grants"}), modified


def _grade(root: Path, emulator: Any, layers: str = "both", dockerfile: str = DOCKERFILE) -> GradeOutcome:
    d, modified = _definition(root, dockerfile)
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


@pytest.fixture(scope="module")
def both(emulator, tmp_path_factory) -> GradeOutcome:
    """The app graded on both layers, once for every test here."""
    return _grade(tmp_path_factory.mktemp("hybrid"), emulator)


def _cat(out: GradeOutcome, name: str) -> dict[str, Any]:
    assert out.rubric is not None
    return out.rubric["categories"][name]


def _judged(cat: dict[str, Any], words: str) -> dict[str, Any]:
    found = [f for f in cat["evidence"] if words in f["message"]]
    assert found, [f["message"] for f in cat["evidence"]]
    return found[0]


def test_the_sandbox_ran_and_its_trace_settles_the_rubric(both):
    assert both.failures == []
    assert both.rubric is not None and both.rubric["hybrid"]["applied"] is True
    trace = (both.sandbox or {})["seam_trace"]
    sent = {(r["endpoint"], r["path"]) for r in trace["requests"]}
    assert ("create", "/access_grants/create") in sent
    assert ("cancel", "/access_grants/delete") in sent
    assert not any(p == "/access_grants/update" for _, p in sent)  # the coroutine never ran


def test_a_coroutine_never_awaited_is_refuted_and_scores_zero(both):
    placement = _cat(both, "integration_placement")
    update = _judged(placement, "access_grants.update in update_reservation")
    assert update["refuted"] is True and update["ok"] is False and update["source"] == "trace"
    assert "no access_grants.update request during the update step" in update["why"]
    lifecycle = _judged(_cat(both, "lifecycle_completeness"), "update:")
    assert lifecycle["refuted"] is True and lifecycle["source"] == "trace"
    claims = {(d["category"], d["claim"]) for d in both.rubric["disagreements"]}  # type: ignore[index]
    assert ("integration_placement", "access_grants.update in update_reservation") in claims
    assert all(not d["trace"] for d in both.rubric["disagreements"] if "update" in d["claim"])  # type: ignore[index]


def test_a_method_run_in_a_thread_is_credited_from_the_trace(both):
    api = _cat(both, "api_path_selection")
    assert api["static_score"] == 0.0  # the static reading never saw access_grants.create
    assert api["score"] == 1.0 and api["source"] == "trace"
    create = _judged(_cat(both, "integration_placement"), "access_grants.create in create_reservation")
    assert create["ok"] is True and create["source"] == "trace" and "credited" in create["why"]
    assert "/access_grants/create" in create["why"] and "create step" in create["why"]
    correct = _judged(_cat(both, "api_correctness"), "access_grants.create sent")
    assert correct["ok"] is True and "Seam accepted it" in correct["why"]


def test_where_both_agree_the_evidence_says_both_and_the_totals_follow(both):
    delete = _judged(_cat(both, "integration_placement"), "access_grants.delete in cancel_reservation")
    assert delete["ok"] is True and delete["source"] == "both"
    placement = _cat(both, "integration_placement")
    assert placement["score"] == 0.66  # create credited, update refuted, delete confirmed
    assert _cat(both, "file_targeting")["source"] == "static"  # the trace does not see which files changed
    rubric = both.rubric
    assert rubric is not None
    assert both.grades["rubric_total"] == rubric["total"] != rubric["static_total"]
    assert both.grades["rubric_static_total"] == rubric["static_total"]
    assert both.grades["hybrid_disagreements"] == len(rubric["disagreements"]) >= 4
    lines = next(c for c in both.criteria if c.id == "integration_placement").evidence
    assert any(line.startswith("✗ refuted: [trace]") for line in lines), lines
    assert "hybrid" in both.timings


def test_a_build_that_fails_leaves_no_trace_and_the_static_reading_stands(emulator, tmp_path):
    out = _grade(Path(tempfile.mkdtemp(dir=tmp_path)), emulator, dockerfile=BROKEN_DOCKERFILE)
    assert (out.sandbox or {})["checks"]["build"]["points"] == 0
    rubric = out.rubric
    assert rubric is not None and rubric["hybrid"]["applied"] is True
    assert rubric["total"] == rubric["static_total"] and rubric["disagreements"] == []
    update = _judged(_cat(out, "integration_placement"), "access_grants.update in update_reservation")
    assert update["ok"] is True and update["source"] == "static"  # the static claim stands, unrefuted
    assert "no trace for the update step" in update["why"]


def test_layers_rubric_stays_static_and_says_so(tmp_path):
    out = _grade(Path(tempfile.mkdtemp(dir=tmp_path)), None, layers="rubric")
    rubric = out.rubric
    assert rubric is not None and out.sandbox is None
    assert rubric["hybrid"] == {"applied": False, "reason": rubric["hybrid"]["reason"], "seconds": 0.0}
    assert "--layers rubric" in rubric["hybrid"]["reason"]
    assert all(c["source"] == "static" for c in rubric["categories"].values())
    assert rubric["total"] == rubric["static_total"] == out.grades["rubric_total"]
    assert json.dumps(rubric)  # stored as rubric.json


def test_check_mutants_judges_a_mutants_static_rubric_by_its_own_trace(both, tmp_path):
    """A mutant's layers are graded apart (``--layers rubric``, then ``sandbox``): its disagreements come from
    the two put together, as a run's do."""
    d, _ = _definition(Path(tempfile.mkdtemp(dir=tmp_path)))
    static = _grade(Path(tempfile.mkdtemp(dir=tmp_path)), None, layers="rubric")
    lines = SeamKind().mutant_findings(d, {"rubric": static, "sandbox": GradeOutcome(sandbox=both.sandbox)})
    assert any(
        line.startswith("integration_placement: access_grants.update in update_reservation")
        and "static: runs; trace (update step): not sent" in line
        for line in lines
    ), lines
    assert SeamKind().mutant_findings(d, {"rubric": static}) == []  # no sandbox layer: nothing to judge by
