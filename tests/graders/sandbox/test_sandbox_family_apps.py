"""Test apps on the official Python SDK that use the emulator's hand-written route families
(``access_codes/create_multiple``, a connect webview, the ACS routes), built and graded by the sandbox: full
marks when correct, the marks of their ``expected.json`` when wrong (MODE=wrong: one bug each) and when they
make Seam forget a code instead of removing it (an account deleted, a lock unmanaged: the cancel fails)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from skillassay.seam.behaviour import validate
from skillassay.seam.config import PlanEvalConfig
from skillassay.seam.eval import SeamEval

APPS = Path(__file__).resolve().parent / "familyapps"
FAMILIES = ("multi", "webview", "acs")


def _fixture(root: Path, family: str, mode: str) -> SeamEval:
    """The family's eval (its eval_config.json with MODE set) over the shared app, in ``root``."""
    config = json.loads((APPS / family / "eval_config.json").read_text())
    config["run"]["env"]["MODE"] = mode
    fixture = root / f"{family}-{mode}"
    app = fixture / "app"
    shutil.copytree(APPS / "app", app, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(APPS / "Dockerfile", fixture / "Dockerfile")
    (fixture / "eval_config.json").write_text(json.dumps(config, indent=2))
    cfg = PlanEvalConfig.model_validate(config)
    return SeamEval(
        id=cfg.fixture,
        title=cfg.title or cfg.fixture,
        format="plan-json",
        source=fixture / "eval_config.json",
        suite_dir=root,
        fixture_dir=fixture,
        app_dir=app,
        prompt=cfg.prompt,
        stack="python",
        language="python",
        app_port=cfg.app_port,
        dockerfile=fixture / "Dockerfile",
        config=cfg,
    )


@pytest.mark.slow
@pytest.mark.long(
    reason="the SDK app installed (once: then the install cache serves it) and graded three times"
)
@pytest.mark.parametrize("family", FAMILIES)
def test_family_app_full_marks_when_correct_and_loses_them_when_wrong(family, emulator, tmp_path):
    expected = json.loads((APPS / family / "expected.json").read_text())
    for mode in expected:  # good, wrong, and the attacks on the cancel check
        definition = _fixture(tmp_path, family, mode)
        result = validate(
            definition.app_dir,
            definition,
            f"fam-{family}-{mode}",
            emulator=emulator,
            logs_dir=tmp_path / mode,
        )
        got = result.plan_json()
        reasons = {n: c.reason for n, c in result.checks.items() if c.reason}
        want = expected[mode]
        assert got["checks"] == want["sandbox_checks"], (mode, reasons, result.log_tail)
        assert got["total"] == want["sandbox_total"], (mode, reasons)


@pytest.mark.slow
@pytest.mark.long(reason="two SDK app runs on the live path, which polls; one cancel waits out its limit")
def test_live_acs_run_judges_credentials_and_cleans_up_only_its_own(emulator, monkeypatch, tmp_path):
    """The live path (pointed at the emulator's HTTP API) on an ACS eval: the checks read the entrance's
    credentials over HTTP, and the clean-up deletes the credential this run left, never another run's."""
    ws = emulator.create_workspace(name="pretend-sandbox")
    with httpx.Client(base_url=emulator.base_url, headers={"authorization": f"Bearer {ws.api_key}"}) as c:
        system = c.post("/acs/systems/list", json={}).json()["acs_systems"][0]
        entrances = c.post("/acs/entrances/list", json={"acs_system_id": system["acs_system_id"]}).json()
        other = c.post(
            "/acs/credentials/create",
            json={
                "acs_system_id": system["acs_system_id"],
                "access_method": "code",
                "code": "909090",
                "allowed_acs_entrance_ids": [entrances["acs_entrances"][0]["acs_entrance_id"]],
            },
        ).json()["acs_credential"]
    monkeypatch.setenv("SEAM_API_KEY", ws.api_key)
    monkeypatch.setenv("SEAM_ENDPOINT", emulator.base_url)
    good = _fixture(tmp_path, "acs", "good")
    r = validate(good.app_dir, good, "live-acs", seam="live", logs_dir=tmp_path / "good")
    assert r.plan_json()["total"] == 100, {n: c.reason for n, c in r.checks.items()}

    left = _fixture(tmp_path, "acs", "leave")
    r = validate(left.app_dir, left, "live-acs-leave", seam="live", logs_dir=tmp_path / "leave")
    assert r.plan_json()["checks"]["cancel"] == 0  # the app left its credential behind
    ids = {c["acs_credential_id"] for c in emulator.state(ws.workspace_id).acs_credentials}
    assert ids == {other["acs_credential_id"]}  # the clean-up took this run's, not the other run's
    assert any(step["route"] == "acs/credentials/delete" and step["ok"] for step in r.seam["cleanup"])
