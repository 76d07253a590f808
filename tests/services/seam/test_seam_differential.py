"""Differential fidelity: the official Python SDK drives the same sequences against Seam's own fake
(npm ``@seamapi/fake-seam-connect``) and the emulator; every difference in status, error type or response
shape must be settled in seam_differences.json (docs/seam-emulator.md, "Differences from Seam's fake")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from differential import (
    Answer,
    Difference,
    Settlement,
    audit,
    compare,
    dedupe,
    followed,
    load_table,
    run_scenarios,
    seam_emulator,
    shape,
    spec_key,
)
from seam_fake import fake_available, fake_routes, seam_fake

from skillassay.seam.emulator.handlers import HANDLERS
from skillassay.seam.emulator.spec import load_spec


@pytest.fixture(scope="module")
def answers() -> Iterator[tuple[list[Answer], list[Answer]]]:
    problem = fake_available()
    if problem:
        pytest.fail(f"Seam's fake cannot run: {problem}")
    with seam_fake() as fake:
        from_fake = run_scenarios(fake)
    with seam_emulator() as emu:
        from_emulator = run_scenarios(emu)
    yield from_fake, from_emulator


@pytest.fixture(scope="module")
def found(answers) -> list[Difference]:
    return dedupe(compare(*answers))


def test_every_difference_from_the_fake_is_settled(found):
    problems = audit(found, load_table())
    assert not problems, "\n".join(problems)


def test_every_route_both_serve_is_driven(answers):
    shared = fake_routes() & set(HANDLERS)
    assert len(shared) >= 49  # the 1.86.0 fake and the hand-written handlers (families too) share 49 routes
    driven = {a.route for side in answers for a in side}
    assert not shared - driven, f"shared routes no scenario drives: {sorted(shared - driven)}"


def test_both_servers_answered_every_step(answers):
    from_fake, from_emulator = answers
    assert [(a.scenario, a.step) for a in from_fake] == [(a.scenario, a.step) for a in from_emulator]
    assert all(a.status is not None for side in answers for a in side)


def test_shape_rows_settled_by_the_spec_agree_with_it():
    """A key the emulator sends must be one the spec names; a key the emulator leaves out must not be one the
    spec requires."""
    document = load_spec().document
    for row in load_table():
        if " shape: " not in row.id:
            continue
        path = row.id.split(" shape: ", 1)[1]
        says = spec_key(document, row.route, path)
        if row.emulator == "absent":
            assert says != "required", f"{row.id}: the spec requires it and the emulator leaves it out"
        else:
            assert says is not None, f"{row.id}: the emulator sends a key the spec does not name"


def test_the_known_differences_are_settled_as_the_issue_asks():
    rows = {r.id: r for r in load_table()}
    duplicate = rows["access code errors / create duplicate code: status"]
    assert (duplicate.fake, duplicate.emulator, duplicate.follows) == ("409", "400", "spec")
    for step in ("create two-digit code", "create ends before starts"):
        row = rows[f"access code errors / {step}: status"]
        assert (row.fake, row.emulator, row.follows) == ("200", "400", "spec")
    missing = rows["access code errors / get missing: error type"]
    assert (missing.follows, missing.emulator_now) == ("fake", "as the fake")
    assert all(r.reason.strip() for r in rows.values())


def test_every_row_settled_as_the_fake_still_reads_so(answers):
    problems = followed(load_table(), *answers)
    assert not problems, "\n".join(problems)


def test_a_row_settled_as_the_fake_whose_fake_answer_changed_fails():
    row = Settlement("s / step: status", "/r", "400", "200", "fake", "as the fake", "because")
    fake = [Answer("s", "step", "POST", "/r", 409, "x")]
    assert followed([row], fake, [Answer("s", "step", "POST", "/r", 409, "x")]) == [
        "s / step: status: the table says the fake answers 400; it answers 409"
    ]
    fake = [Answer("s", "step", "POST", "/r", 400, "x")]
    assert followed([row], fake, [Answer("s", "step", "POST", "/r", 200, None)]) == [
        "s / step: status: settled as the fake (400), the emulator answers 200"
    ]


def test_the_emulator_now_answers_as_the_fake_where_settled(answers):
    from_fake, from_emulator = answers
    emu = {(a.scenario, a.step): a for a in from_emulator}
    fake = {(a.scenario, a.step): a for a in from_fake}
    key = ("access code errors", "get missing")
    assert (
        (emu[key].status, emu[key].error_type)
        == (404, "not_found")
        == (fake[key].status, fake[key].error_type)
    )
    key = ("access code errors", "create starts without ends")
    assert (emu[key].status, emu[key].error_type) == (400, "invalid_input")


# --------------------------------------------------------------------------- the audit itself, offline
def _row(id: str, fake: str = "1", emulator: str = "2", now: str = "kept") -> Settlement:
    return Settlement(id, "/r", fake, emulator, "spec", now, "because")


def test_a_new_difference_fails_the_audit():
    table = [_row("a: status")]
    assert audit([Difference("a: status", "/r", "1", "2")], table) == []
    problems = audit(
        [Difference("a: status", "/r", "1", "2"), Difference("b: error type", "/r", "x", "y")], table
    )
    assert problems == ["unsettled difference: b: error type (/r): fake x, emulator y"]


def test_a_difference_that_changed_or_vanished_fails_the_audit():
    table = [_row("a: status"), _row("b: status", now="as the fake")]
    assert audit([Difference("a: status", "/r", "1", "3")], table) == [
        "a: status: the table says fake 1, emulator 2; found fake 1, emulator 3"
    ]
    assert audit([], table) == ["stale row (the difference no longer shows): a: status"]
    problems = audit(
        [Difference("a: status", "/r", "1", "2"), Difference("b: status", "/r", "1", "2")], table
    )
    assert problems == ["settled to follow the fake but still differs: b: status: fake 1, emulator 2"]


def test_compare_sees_status_error_type_and_shape_but_not_values():
    f = Answer(
        "s", "step", "GET", "/access_codes/get", 200, None, shape({"access_code": {"code": "1", "x": 1}})
    )
    e = Answer(
        "s", "step", "GET", "/access_codes/get", 200, None, shape({"access_code": {"code": "2", "x": "1"}})
    )
    assert [d.id for d in compare([f], [e])] == ["/access_codes/get shape: access_code.x"]
    e2 = Answer("s", "step", "GET", "/access_codes/get", 404, "not_found")
    assert [d.id for d in compare([f], [e2])] == ["s / step: status", "s / step: error type"]
    nullable = Answer("s", "step", "GET", "/r", 200, None, shape({"a": None}))
    filled = Answer("s", "step", "GET", "/r", 200, None, shape({"a": "x"}))
    assert compare([nullable], [filled]) == []


# --------------------------------------------------------------------------- the fake as a dependency
def test_the_fake_is_a_pinned_test_dependency_the_setup_installs():
    from seam_fake import FAKE_PACKAGE, REPO

    manifest = json.loads((REPO / "node" / "package.json").read_text())
    lock = json.loads((REPO / "node" / "package-lock.json").read_text())
    assert manifest["dependencies"]["@seamapi/fake-seam-connect"] == "1.86.0"
    assert lock["packages"]["node_modules/@seamapi/fake-seam-connect"]["version"] == "1.86.0"
    assert json.loads((FAKE_PACKAGE / "package.json").read_text())["version"] == "1.86.0"


CLIENT = """
import json, sys, time, urllib.request
url = "http://127.0.0.1:%s/devices/list"
for _ in range(150):
    try:
        req = urllib.request.Request(url, data=b"{}", method="POST", headers={
            "authorization": "Bearer seam_apikey1_token", "content-type": "application/json"})
        print(len(json.load(urllib.request.urlopen(req, timeout=2))["devices"]))
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
"""


def test_the_fake_runs_without_a_network(tmp_path):
    """CI reaches nothing but the registries: the fake, seeded, answers in a network namespace with only
    loopback."""
    from seam_fake import FAKE_SERVER, free_port

    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("unshare and ip (util-linux, iproute2) are needed to run the fake without a network")
    port = free_port()
    (tmp_path / "client.py").write_text(CLIENT % port)
    pid = tmp_path / "pid"
    script = (
        f"ip link set lo up && (PORT={port} node {FAKE_SERVER} --seed >/dev/null 2>&1 & echo $! > {pid}) "
        f"&& {sys.executable} {tmp_path}/client.py; rc=$?; kill $(cat {pid}); exit $rc"
    )
    out = subprocess.run(["unshare", "-rn", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-500:]
    assert int(out.stdout.strip()) >= 2  # the seeded locks
