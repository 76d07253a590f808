"""Issue 23, items 2 and 6: `compare` gives no verdict (exit 3) when an arm's failures could have gone
unscored, or when scores of different grading versions would be set side by side; every run says which
grading version made it.

The jobs are synthetic results trees (tests/synthetic_runs.py): the same seeded scores for the honest and the
abstaining arm, so the only difference between them is which failures were recorded as unscored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay import store
from skillassay.cli.main import app
from skillassay.scoring import GRADING_VERSION
from skillassay.store.files import read_run_file, write_run_file
from skillassay.store.records import RUN_SCHEMA_VERSION

runner = CliRunner()
EVALS = ("e1", "e2", "e3")


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def flat(text: str) -> str:
    """Terminal output with rich's line wrapping undone."""
    return " ".join(text.split())


def _arms(root: Path, failures_as: str = "harness_error") -> None:
    """A: the better agent. B: a worse one, graded honestly. C: the same worse agent (same scores), whose
    every failing run was recorded as ``failures_as`` instead of being graded."""
    kw = {"evals": EVALS, "runs": 10, "artifacts": False}
    make_job(root, job_id="A", skill_mean=0.8, seed=3, **kw)
    make_job(root, job_id="B", skill_mean=0.75, seed=103, **kw)
    make_job(root, job_id="C", skill_mean=0.75, seed=103, failures_as=failures_as, **kw)


def _as_old(root: Path, job_id: str) -> None:
    """Rewrite a job's run.json files as results written before grading versions existed (schema 2)."""
    for path in (root / job_id).glob("*/run_*/run.json"):
        data = json.loads(path.read_text())
        del data["grading_version"]
        data["schema_version"] = 2
        path.write_text(json.dumps(data))


@pytest.mark.parametrize("failures_as", ["harness_error", "provider_error"])
def test_an_agent_that_makes_its_failures_unscored_does_not_win(tmp_path: Path, failures_as: str) -> None:
    _arms(tmp_path, failures_as)
    root = str(tmp_path)
    honest = cli("compare", "A", "B", "--results", root, "--fail-if-worse")
    assert honest.exit_code == 1 and "B is worse" in flat(honest.stdout)
    # with the check off (compare as it was before), the same agent wins by going unscored
    before = cli("compare", "A", "C", "--results", root, "--max-unscored-gap", "1")
    assert before.exit_code == 0 and "excludes zero: C is better" in flat(before.stdout)
    # now: no verdict, a code of its own, one line saying why, the unscored runs counted per arm and outcome
    refused = cli("compare", "A", "C", "--results", root, "--fail-if-worse")
    assert refused.exit_code == 3
    assert "is better" not in flat(refused.stdout) and "is worse" not in flat(refused.stdout)
    [line] = [x for x in refused.stderr.splitlines() if x.startswith("no verdict:")]
    as_json = cli("compare", "A", "C", "--results", root, "--json")
    assert as_json.exit_code == 3
    data = json.loads(as_json.stdout)
    n = data["unscored_share"]["b"]["unscored"]
    assert f"C: {n} of 30 runs ({n} {failures_as.replace('_', ' ')}s)" in line and "A: 0 of 30 runs" in line
    assert ("`skillassay run --resume C`" in line) == (failures_as in ("harness_error", "provider_error"))
    assert "Runs not scored" in refused.stdout and "B = C" in refused.stdout
    # the evals whose arms lost very different shares are named
    assert all(f"Warning: {e}: unscored 0 of 10 runs in A" in flat(refused.stdout) for e in EVALS)
    assert data["no_verdict"]["kind"] == "unscored_gap" and data["no_verdict"]["reason"] in line
    assert data["significant"] is False and data["verdict"].startswith("No verdict:")
    assert data["unscored_share"]["b"]["outcomes"] == {failures_as: n}
    assert data["unscored_share"]["a"]["unscored"] == 0
    assert [g["eval_id"] for g in data["unscored_evals"]] == list(EVALS)


def test_the_gap_is_measured_against_the_threshold_and_evals_are_named_below_it(tmp_path: Path) -> None:
    """Two harness errors in 30 runs (7 points): a verdict, with the one eval that lost them named."""
    kw = {"evals": EVALS, "runs": 10, "artifacts": False}
    make_job(tmp_path, job_id="A", skill_mean=0.8, seed=3, **kw)
    make_job(tmp_path, job_id="B", skill_mean=0.8, seed=3, **kw)
    for i in (1, 2):
        rec = read_run_file(tmp_path / "B" / "e2" / f"run_{i}" / "run.json")
        write_run_file(tmp_path, rec.model_copy(update={"outcome": "harness_error", "verdict": None}))
    ok = cli("compare", "A", "B", "--results", str(tmp_path))
    assert ok.exit_code == 0 and "no verdict" not in ok.output
    assert "Warning: e2: unscored 0 of 10 runs in A, 2 of 10 runs (2 harness errors) in B" in flat(ok.stdout)
    assert "Warning: e1" not in ok.stdout
    data = json.loads(cli("compare", "A", "B", "--results", str(tmp_path), "--json").stdout)
    assert data["no_verdict"] is None and data["unscored_share"]["gap"] == pytest.approx(2 / 30)
    assert [g["eval_id"] for g in data["unscored_evals"]] == ["e2"]
    # a stricter threshold refuses the same runs
    assert cli("compare", "A", "B", "--results", str(tmp_path), "--max-unscored-gap", "0.05").exit_code == 3
    assert cli("compare", "A", "B", "--results", str(tmp_path), "--max-unscored-gap", "2").exit_code == 2


def test_results_without_a_grading_version_read_as_version_1_and_compare_will_not_mix(tmp_path: Path) -> None:
    kw = {"evals": EVALS, "runs": 3, "artifacts": False}
    make_job(tmp_path, job_id="A", **kw)
    make_job(tmp_path, job_id="OLD", **kw)
    _as_old(tmp_path, "OLD")
    with store.open(tmp_path) as st:
        assert {r.grading_version for r in st.runs(job_id="OLD")} == {1}
        assert {r.grading_version for r in st.runs(job_id="A")} == {GRADING_VERSION}
    conn = sqlite3.connect(tmp_path / "skillassay.db")
    rows = dict(conn.execute("SELECT job_id, MAX(grading_version) FROM runs GROUP BY job_id").fetchall())
    conn.close()
    assert rows == {"A": GRADING_VERSION, "OLD": 1}
    r = cli("compare", "A", "OLD", "--results", str(tmp_path))
    assert r.exit_code == 3
    [line] = [x for x in r.stderr.splitlines() if x.startswith("no verdict:")]
    assert f"A: version {GRADING_VERSION} (9 runs); OLD: version 1 (9 runs)" in line
    assert "`skillassay regrade OLD`" in line
    data = json.loads(cli("compare", "OLD", "A", "--results", str(tmp_path), "--json").stdout)
    assert data["no_verdict"]["kind"] == "grading_version"
    # within one arm too: OLD with one run regraded to the current version, against itself
    rec = read_run_file(tmp_path / "OLD" / "e1" / "run_1" / "run.json")
    assert rec.schema_version == RUN_SCHEMA_VERSION  # read through the upgrade (the current schema)
    with store.open(tmp_path) as st:
        st.save_run(rec.model_copy(update={"grading_version": GRADING_VERSION}))
    r = cli("compare", "OLD", "OLD", "--results", str(tmp_path))
    assert r.exit_code == 3 and f"OLD: version 1 (8 runs), version {GRADING_VERSION} (1 run)" in r.stderr
    # `runs --job` shows each run's version
    listing = cli("runs", "--job", "OLD", "--results", str(tmp_path)).stdout
    assert "grading" in listing and listing.count(" v1 ") == 8 and listing.count(f" v{GRADING_VERSION} ") == 1


def test_an_unscored_run_has_no_score_whose_version_could_differ(tmp_path: Path) -> None:
    """regrade skips unscored runs, so their version is never the reason for a refusal."""
    kw = {"evals": ("e1",), "runs": 10, "artifacts": False}
    make_job(tmp_path, job_id="A", **kw)
    make_job(tmp_path, job_id="B", **kw)
    rec = read_run_file(tmp_path / "B" / "e1" / "run_1" / "run.json")
    write_run_file(
        tmp_path, rec.model_copy(update={"outcome": "harness_error", "verdict": None, "grading_version": 1})
    )
    r = cli("compare", "A", "B", "--results", str(tmp_path))
    assert r.exit_code == 0, r.output


def test_an_index_made_before_grading_versions_is_upgraded(tmp_path: Path) -> None:
    make_job(tmp_path, job_id="OLD", evals=("e1",), runs=2, artifacts=False)
    _as_old(tmp_path, "OLD")
    store.open(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "skillassay.db")
    conn.execute("ALTER TABLE runs DROP COLUMN grading_version")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with store.open(tmp_path) as st:
        assert st.schema_version() == 3
        rows = st._conn().execute("SELECT grading_version FROM runs").fetchall()
        assert [r[0] for r in rows] == [1, 1]


def test_the_report_shows_the_refusal_the_unscored_runs_and_the_versions(tmp_path: Path) -> None:
    from skillassay.report.site import build_site, compare_page, job_page

    kw = {"evals": ("e1", "e2"), "runs": 3, "artifacts": False}
    make_job(tmp_path, job_id="A", skill_mean=0.8, seed=3, **kw)
    make_job(tmp_path, job_id="C", skill_mean=0.75, seed=103, failures_as="harness_error", **kw)
    make_job(tmp_path, job_id="OLD", **kw)
    _as_old(tmp_path, "OLD")
    site = tmp_path / "site"
    build_site(tmp_path, site, job_ids=["A", "C", "OLD"], suite=tmp_path / "no-suite")
    unscored = (site / compare_page("A", "C")).read_text()
    assert "No verdict: the arms&#39; shares of unscored runs differ" in unscored
    assert "<td>harness error</td>" not in unscored and "Runs not scored" in unscored
    assert "excludes zero" not in unscored
    mixed = (site / compare_page("C", "OLD")).read_text()
    assert "No verdict: the runs were graded with different grading versions" in mixed
    old_job = (site / job_page("OLD")).read_text()
    assert "grading version" in old_job and "skillassay regrade OLD" in old_job
    assert "skillassay regrade" not in (site / job_page("A")).read_text()
    run_page = next((site / "jobs" / "OLD").rglob("run_1.html")).read_text()
    assert f"<dt>grading version</dt><dd>1 (the current version is {GRADING_VERSION}" in run_page
