"""Live mode (``--seam live``, ``SEAM_ENDPOINT``) against a Seam it did not write: Seam's own fake (npm
``@seamapi/fake-seam-connect``), as the stand-in for Seam's sandbox. The fake serves no spaces or customers,
so an access-codes eval must run on devices alone; clean-up must leave nothing of the run behind; every
difference the run meets is in tests/services/seam/seam_differences.json (``live_path``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from seam_fake import Server, fake_available, method_shim, seam_fake

from skillassay.errors import InfrastructureError
from skillassay.seam.behaviour import validate
from skillassay.seam.loader import load_fixture

REPO = Path(__file__).resolve().parents[3]
TABLE = REPO / "tests" / "services" / "seam" / "seam_differences.json"


@pytest.fixture(scope="module")
def fake() -> Iterator[Server]:
    problem = fake_available()
    if problem:
        pytest.fail(f"Seam's fake cannot run: {problem}")
    with seam_fake() as server:
        yield server


def _point_at(monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    monkeypatch.setenv("SEAM_API_KEY", server.api_key)
    monkeypatch.setenv("SEAM_ENDPOINT", server.endpoint)


def _codes(server: Server) -> dict[str, list[str]]:
    """Every access code on every device of the fake, by device."""
    with httpx.Client(
        base_url=server.endpoint, headers={"authorization": f"Bearer {server.api_key}"}, trust_env=False
    ) as c:
        devices = c.post("/devices/list", json={}).json()["devices"]
        out = {}
        for d in devices:
            if "access_code" in d.get("capabilities_supported", []):
                codes = c.post("/access_codes/list", json={"device_id": d["device_id"]}).json()
                out[d["device_id"]] = sorted(x["access_code_id"] for x in codes["access_codes"])
        return out


def test_an_access_code_eval_runs_on_the_fake_without_spaces(tiny, fake, monkeypatch, tmp_path):
    _point_at(monkeypatch, fake)
    before = _codes(fake)
    d = tiny("good")
    r = validate(d.app_dir, d, "fake1", seam="live", logs_dir=tmp_path / "l")
    assert r.total == 100, {n: c.reason for n, c in r.checks.items()}
    assert r.seam["spaces_created"] is False
    assert r.seam["spaces"][0]["space_id"] is None and r.seam["spaces"][0]["device_ids"]
    routes = [c["route"] for c in r.seam["harness_calls"]]
    assert not [x for x in routes if x.startswith(("spaces/", "customers/"))], routes
    assert all(c["ok"] for c in r.seam["cleanup"]), r.seam["cleanup"]
    assert _codes(fake) == before  # the app removed its code; nothing of the run is left


def test_clean_up_removes_the_code_an_app_left_on_the_fake(tiny, fake, monkeypatch, tmp_path):
    """An app that never removes its code: the cancel check fails, and the harness's clean-up deletes the
    code the run made, and only that one."""
    _point_at(monkeypatch, fake)
    before = _codes(fake)
    d = tiny("keeps_its_code", timeouts={"health": 20, "create": 10, "update": 2, "cancel": 2})
    r = validate(d.app_dir, d, "fake2", seam="live", logs_dir=tmp_path / "l")
    assert r.checks["create"].passed and not r.checks["cancel"].passed
    deleted = [c for c in r.seam["cleanup"] if c["route"] == "access_codes/delete"]
    assert len(deleted) == 1 and deleted[0]["ok"], r.seam["cleanup"]
    assert _codes(fake) == before


def test_a_path_that_needs_spaces_stops_at_the_bootstrap_on_the_fake(tiny, fake, monkeypatch, tmp_path):
    _point_at(monkeypatch, fake)
    d = tiny("good", expected_api_path="reservation_automations")
    with pytest.raises(InfrastructureError, match=r"bootstrap failed: Seam spaces/create: HTTP 404"):
        validate(d.app_dir, d, "fake3", seam="live", logs_dir=tmp_path / "l")


ACCESS_CODE_FIXTURES = sorted(
    p.parent.name
    for p in (REPO / "evals" / "fixtures").glob("*/eval_config.json")
    if json.loads(p.read_text())["expected_api_path"] == "access_codes"
)


def test_the_access_code_fixtures_are_found():
    assert len(ACCESS_CODE_FIXTURES) >= 4 and "cowork-flask-py" in ACCESS_CODE_FIXTURES


@pytest.mark.slow
@pytest.mark.long(reason="a golden installed and built on an empty cache (Next.js: minutes), then graded")
@pytest.mark.parametrize("fixture", ACCESS_CODE_FIXTURES)
def test_an_access_code_golden_passes_end_to_end_against_the_fake(fixture, fake, monkeypatch, tmp_path):
    """Each access-codes golden (the official SDKs: PATCH updates, DELETE with a query string; the Rails
    golden: POST through Faraday; the Laravel golden: POST through Guzzle) through the method shim, which
    bridges the two HTTP methods the fake does not take; each bridged request is a difference in the table."""
    d = load_fixture(REPO / "evals" / "fixtures" / fixture)
    before = _codes(fake)
    with method_shim(fake) as shimmed:
        _point_at(monkeypatch, shimmed)
        r = validate(d.golden_dir, d, f"fake-{fixture}", seam="live", logs_dir=tmp_path / "l")
    assert r.plan_json()["total"] == 100, {n: c.reason for n, c in r.checks.items()}
    assert r.seam["spaces_created"] is False
    assert all(c["ok"] for c in r.seam["cleanup"]), r.seam["cleanup"]
    assert _codes(fake) == before
    bridged = set(shimmed.rewritten)
    if not fixture.endswith(("-rb", "-laravel")):
        # the official SDKs' methods; the Rails and Laravel goldens POST Seam's HTTP API themselves (no Ruby
        # or PHP SDK here)
        assert ("PATCH", "/access_codes/update") in bridged and ("DELETE", "/access_codes/delete") in bridged
    listed = {(row["method"], row["route"]) for row in json.loads(TABLE.read_text())["live_path"]}
    assert bridged <= listed, f"bridged but not in the table: {sorted(bridged - listed)}"
