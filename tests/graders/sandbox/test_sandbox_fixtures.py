"""Every shipped fixture, built and driven for real against the Seam emulator: goldens 100, pristine apps 10,
negative controls what their expectation files record. Fixtures are discovered at run time."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from skillassay.seam.behaviour import validate
from skillassay.seam.loader import load_fixture

FIXTURES = Path(__file__).resolve().parents[3] / "evals" / "fixtures"


def _sandbox_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*") if (p / "eval_config.json").is_file())


def _cases() -> list:
    cases = []
    for fx in _sandbox_fixtures():
        cases.append(pytest.param(fx.name, "golden", id=f"{fx.name}-golden"))
        cases.append(pytest.param(fx.name, "app", id=f"{fx.name}-pristine"))
        for expected in sorted((fx / "test_controls").glob("*.expected.json")):
            name = expected.name[: -len(".expected.json")]
            cases.append(pytest.param(fx.name, name, id=f"{fx.name}-control-{name}"))
    return cases


@pytest.fixture(scope="module")
def shared_emulator():
    from skillassay.seam.emulator.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=1.0).start()
    yield emu
    emu.stop()


@pytest.mark.slow
@pytest.mark.long(reason="an app installed and built on an empty cache (Next.js: minutes), then graded")
@pytest.mark.parametrize(("fixture", "which"), _cases())
def test_fixture_scores(fixture, which, shared_emulator, tmp_path):
    d = load_fixture(FIXTURES / fixture)
    if which == "golden":
        src, want_checks, want_total = (
            d.golden_dir,
            {"build": 10, "create": 30, "update": 30, "cancel": 30},
            100,
        )
    elif which == "app":
        src, want_checks, want_total = d.app_dir, {"build": 10, "create": 0, "update": 0, "cancel": 0}, 10
    else:
        control = next(c for c in d.controls if c.name == which)
        src, want_checks, want_total = (
            control.dir,
            control.expected.sandbox_checks,
            control.expected.sandbox_total,
        )
    r = validate(src, d, f"t-{fixture}-{which}", emulator=shared_emulator, logs_dir=tmp_path / "logs")
    got = r.plan_json()
    reasons = {n: c.reason for n, c in r.checks.items() if c.reason}
    if not want_checks and want_total is None:
        pytest.fail(
            f"{fixture}/test_controls/{which}.expected.json records no sandbox_checks/sandbox_total; "
            f"it scores {json.dumps(got)} ({reasons})"
        )
    assert {k: got["checks"][k] for k in want_checks} == want_checks, reasons
    if want_total is not None:
        assert got["total"] == want_total, reasons
    if r.checks["create"].passed:
        assert r.checks["create"].seam["found"], "a passing create records the code it found"


@pytest.mark.slow
@pytest.mark.long(reason="three fixture apps installed, built and graded at once")
def test_two_fixtures_at_once_do_not_interfere(shared_emulator, tmp_path):
    names = ["express-ts", "flask-py"]  # shipped fixtures: missing one is a failure, not a reason to skip
    # plus the same fixture twice: same space keys, same ports wanted, different runs
    jobs = [(names[0], "a"), (names[1], "b"), (names[1], "c")]
    results: dict[str, object] = {}

    def one(fx: str, tag: str) -> None:
        d = load_fixture(FIXTURES / fx)
        try:
            results[tag] = validate(
                d.golden_dir, d, f"par-{tag}", emulator=shared_emulator, logs_dir=tmp_path / tag
            )
        except BaseException as e:  # noqa: BLE001  (reported below)
            results[tag] = e

    threads = [threading.Thread(target=one, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    for tag, r in results.items():
        assert not isinstance(r, BaseException), f"{tag}: {r!r}"
    rs = [results[t] for _, t in jobs]
    assert [r.total for r in rs] == [100, 100, 100], [{n: c.reason for n, c in r.checks.items()} for r in rs]
    assert len({r.seam["workspace_id"] for r in rs}) == 3
    assert len({r.checks["create"].requests[0].url.split("/api")[0] for r in rs}) == 3  # three ports
    assert len({r.logs["stdout"] for r in rs}) == 3
