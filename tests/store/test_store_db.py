"""The SQLite index: WAL, idempotent upserts, missing runs, rebuilding from files, concurrent writers."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import timedelta

import pytest
from synthetic_runs import make_job

from skillassay import store

JOB = "20261129-224512-ab12"


def test_wal_mode_and_schema(tmp_path):
    with store.open(tmp_path) as st:
        assert st.journal_mode == "wal"
        assert (tmp_path / "skillassay.db").is_file()
    # WAL is a property of the database file: a plain connection sees it too
    conn = sqlite3.connect(tmp_path / "skillassay.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_record_and_query(tmp_path):
    job, runs = make_job(tmp_path / "src", job_id=JOB, runs=2, baseline=True)
    with store.open(tmp_path / "db") as st:
        st.record_job(job)
        for r in runs:
            st.record_run(r)
        assert [j.job_id for j in st.jobs()] == [JOB]
        assert len(st.runs()) == 8
        assert len(st.runs(job_id=JOB, eval_id="express-ts")) == 4
        assert {r.variant for r in st.runs(job_id=JOB, variant="baseline")} == {"baseline"}
        got = st.runs(job_id=JOB, eval_id="flask-py", variant="skill")
        assert [r.run_index for r in got] == [1, 2]
        assert got[0] == next(r for r in runs if r.eval_id == "flask-py" and r.variant == "skill")
        # indexed columns hold the filterable values
        row = (
            st._conn()
            .execute("SELECT outcome, passed, score FROM runs WHERE run_index = 1 LIMIT 1")
            .fetchone()
        )
        assert row["outcome"] == "completed" and row["score"] is not None


def test_upsert_is_idempotent(tmp_path):
    job, runs = make_job(tmp_path, job_id=JOB, runs=1, evals=("a",))
    with store.open(tmp_path / "db") as st:
        st.record_job(job)
        st.record_job(job)
        st.record_run(runs[0])
        st.record_run(runs[0])
        assert st.count_runs() == 1
        changed = runs[0].model_copy(update={"outcome": "timed_out", "error": "agent timed out after 600 s"})
        st.record_run(changed)
        assert st.count_runs() == 1
        assert st.runs()[0].outcome == "timed_out"
        assert len(st.jobs()) == 1


def test_missing_runs(tmp_path):
    job, runs = make_job(tmp_path, job_id=JOB, runs=3, evals=("a", "b"), baseline=True)
    with store.open(tmp_path / "db") as st:
        st.record_job(job)
        assert st.missing_runs(JOB) == job.planned  # nothing recorded yet, in planned order
        by_key = {(r.eval_id, r.run_index, r.variant): r for r in runs}
        st.record_run(by_key[("a", 1, "skill")])  # completed
        st.record_run(by_key[("a", 2, "skill")].model_copy(update={"outcome": "harness_error"}))
        # the agent's failure
        st.record_run(by_key[("a", 3, "skill")].model_copy(update={"outcome": "timed_out"}))
        st.record_run(
            by_key[("b", 1, "baseline")].model_copy(update={"outcome": "completed", "empty_diff": True})
        )
        missing = st.missing_runs(JOB)
        assert ("a", 1, "skill") not in missing
        assert ("a", 2, "skill") in missing  # harness errors are re-run
        assert ("a", 3, "skill") not in missing  # finished runs are never re-rolled
        assert ("b", 1, "baseline") not in missing
        assert len(missing) == len(job.planned) - 3
        assert missing == [p for p in job.planned if p in missing]
        with pytest.raises(KeyError):
            st.missing_runs("no-such-job")


def test_missing_runs_counts_a_run_on_disk_the_index_lacks(tmp_path):
    """An orchestrator killed after a run's run.json was written but before it was indexed: the run finished,
    and --resume must not re-roll it."""
    job, runs = make_job(tmp_path / "elsewhere", job_id=JOB, runs=2, evals=("a",))
    with store.open(tmp_path) as st:
        st.record_job(job)
        assert st.missing_runs(JOB) == job.planned
        store.files.write_run_file(tmp_path, runs[0])  # on disk, never indexed
        (tmp_path / runs[1].run_dir).mkdir(parents=True)
        (tmp_path / runs[1].run_dir / "run.json").write_text("{ half written")  # not a record: still missing
        assert st.missing_runs(JOB) == [("a", 2, "skill")]
        assert [r.run_index for r in st.runs(job_id=JOB)] == [1]


def test_open_indexes_existing_files_and_rebuild(tmp_path):
    _, runs = make_job(tmp_path, job_id=JOB, runs=2, baseline=True)
    make_job(tmp_path, job_id="20261130-010000-cd34", runs=1, seed=3)
    with store.open(tmp_path) as st:  # no DB yet: built from the files
        assert st.count_runs() == 8 + 2
        assert len(st.jobs()) == 2
    # the DB is only an index: delete it, reopen, same content
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"skillassay.db{suffix}").unlink(missing_ok=True)
    with store.open(tmp_path) as st:
        assert st.count_runs() == 10
        # a stale row (no file behind it) disappears on rebuild; a broken file is reported and skipped
        st.record_run(runs[0].model_copy(update={"job_id": "ghost", "run_dir": "ghost/x/run_1"}))
        assert st.count_runs() == 11
        bad = tmp_path / JOB / "express-ts" / "run_9"
        bad.mkdir()
        (bad / "run.json").write_text("{not json", encoding="utf-8")
        rep = st.rebuild_index()
        assert (rep.jobs, rep.runs) == (2, 10)
        assert len(rep.skipped) == 1 and "run_9" in rep.skipped[0]
        assert st.count_runs() == 10
        assert st.runs(job_id=JOB) == sorted(
            runs, key=lambda r: (r.eval_id, r.variant != "skill", r.run_index)
        )


def test_save_and_finish_job_update_the_files(tmp_path):
    job, runs = make_job(tmp_path / "elsewhere", job_id=JOB, runs=1, evals=("a",))
    with store.open(tmp_path) as st:
        st.save_job(job.model_copy(update={"status": "running", "finished_at": None}))
        st.save_run(runs[0])
        assert (tmp_path / runs[0].run_dir / "run.json").is_file()
        done = st.finish_job(JOB, "interrupted")
        assert done.status == "interrupted" and done.finished_at is not None
        on_disk = json.loads((tmp_path / JOB / "job.json").read_text())
        assert on_disk["status"] == "interrupted"
        assert st.job(JOB).status == "interrupted"
        with pytest.raises(ValueError):
            st.finish_job(JOB, "exploded")
        st.rebuild_index()
        assert st.job(JOB).status == "interrupted"  # the file was the truth, and it was updated


def test_concurrent_writers(tmp_path):
    """Eight worker threads (as the orchestrator's) and a second Store on the same file (as a second process)
    record runs at once; every run lands exactly once."""
    job, runs = make_job(tmp_path / "src", job_id=JOB, runs=1, evals=("a",), artifacts=False)
    template = runs[0]
    st = store.open(tmp_path / "db")
    other = store.Store(tmp_path / "db")
    st.record_job(job)
    errors: list[BaseException] = []

    def worker(w: int, target: store.Store) -> None:
        try:
            for i in range(1, 41):
                r = template.model_copy(
                    update={
                        "eval_id": f"eval-{w}",
                        "run_index": i,
                        "run_dir": f"{JOB}/eval-{w}/run_{i}",
                        "finished_at": template.finished_at + timedelta(seconds=i),
                    }
                )
                target.record_run(r)
                target.record_run(r)  # a retry of the same write is harmless
                if i % 10 == 0:
                    target.runs(job_id=JOB)  # readers run alongside writers
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(w, st if w % 2 else other)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert st.count_runs() == 8 * 40
    assert len({(r.eval_id, r.run_index) for r in st.runs(job_id=JOB)}) == 320
    st.close()
    other.close()


def test_progress_counts(tmp_path):
    _, runs = make_job(tmp_path, job_id=JOB, runs=2, evals=("a", "b"))
    with store.open(tmp_path) as st:
        st.record_run(runs[0].model_copy(update={"outcome": "harness_error"}))
        (p,) = st.progress()
        assert (
            p.planned == 4
            and p.done == 3
            and p.unscored == 1
            and p.outcomes.get("harness_error") == 1
            and p.evals == 2
        )
        assert p.passed == sum(bool(r.verdict and r.verdict.passed) for r in runs[1:])
