"""The SQLite index of every job and run under a results root (``<results-root>/skillassay.db``, WAL mode).

Each row keeps the whole record as JSON plus a few columns to filter on. The run/job files are the truth:
``rebuild_index`` re-creates the database from them, so the database can always be deleted.

Thread safety: ``record_run`` is called from several worker threads at once. Each thread gets its own
connection (sqlite3 connections must not be shared across threads); WAL lets readers go on while one thread
writes, and the busy timeout makes concurrent writers wait for each other instead of failing.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from skillassay.outcomes import LEGACY, RERUN, SCORED
from skillassay.store.files import (
    DB_NAME,
    Unreadable,
    clean,
    iter_job_files,
    iter_run_files,
    load_record,
    write_job_file,
    write_run_file,
)
from skillassay.store.records import JobRecord, RunRecord, Variant

# 2: outcomes of the taxonomy (skillassay.outcomes); 3: runs.grading_version. An older index is rebuilt from
# the files (a column it lacks is added first)
SCHEMA_VERSION = 3
_RERUN_SQL = "(" + ", ".join(f"'{o}'" for o in sorted(RERUN)) + ")"
_SCORED_SQL = "(" + ", ".join(f"'{o}'" for o in sorted(SCORED)) + ")"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    suite TEXT NOT NULL,
    agent TEXT NOT NULL,
    skill_hash TEXT,
    status TEXT NOT NULL,
    planned INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    job_id TEXT NOT NULL,
    eval_id TEXT NOT NULL,
    variant TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    run_dir TEXT NOT NULL,
    agent TEXT NOT NULL,
    skill_hash TEXT,
    outcome TEXT NOT NULL,
    passed INTEGER,
    score REAL,
    rubric_total REAL,
    sandbox_total REAL,
    combined REAL,
    grading_version INTEGER NOT NULL DEFAULT 1,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (job_id, eval_id, variant, run_index)
);
CREATE INDEX IF NOT EXISTS runs_eval ON runs (eval_id);
CREATE INDEX IF NOT EXISTS runs_outcome ON runs (job_id, outcome);
CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at);
"""

_UPSERT_RUN = """
INSERT INTO runs (job_id, eval_id, variant, run_index, run_dir, agent, skill_hash, outcome, passed, score,
                  rubric_total, sandbox_total, combined, grading_version, started_at, finished_at, record)
VALUES (:job_id, :eval_id, :variant, :run_index, :run_dir, :agent, :skill_hash, :outcome, :passed, :score,
        :rubric_total, :sandbox_total, :combined, :grading_version, :started_at, :finished_at, :record)
ON CONFLICT (job_id, eval_id, variant, run_index) DO UPDATE SET
    run_dir = excluded.run_dir, agent = excluded.agent, skill_hash = excluded.skill_hash,
    outcome = excluded.outcome, passed = excluded.passed, score = excluded.score,
    rubric_total = excluded.rubric_total, sandbox_total = excluded.sandbox_total, combined = excluded.combined,
    grading_version = excluded.grading_version, started_at = excluded.started_at,
    finished_at = excluded.finished_at, record = excluded.record
"""  # noqa: E501 - code inside a string, kept as written

_UPSERT_JOB = """
INSERT INTO jobs (job_id, created_at, finished_at, suite, agent, skill_hash, status, planned, record)
VALUES (:job_id, :created_at, :finished_at, :suite, :agent, :skill_hash, :status, :planned, :record)
ON CONFLICT (job_id) DO UPDATE SET
    created_at = excluded.created_at, finished_at = excluded.finished_at, suite = excluded.suite,
    agent = excluded.agent, skill_hash = excluded.skill_hash, status = excluded.status,
    planned = excluded.planned, record = excluded.record
"""


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _run_row(run: RunRecord) -> dict:
    return {
        "job_id": run.job_id,
        "eval_id": run.eval_id,
        "variant": run.variant,
        "run_index": run.run_index,
        "run_dir": run.run_dir,
        "agent": run.agent,
        "skill_hash": run.skill_hash,
        "outcome": LEGACY.get(run.outcome, run.outcome),
        "passed": None if run.verdict is None else int(run.verdict.passed),
        "score": None if run.verdict is None else run.verdict.score,
        # the kind's figures the index keeps a column for (None for kinds without them)
        **{name: _number(run.grades.get(name)) for name in ("rubric_total", "sandbox_total", "combined")},
        "grading_version": run.grading_version,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "record": run.model_dump_json(),
    }


def _job_row(job: JobRecord) -> dict:
    return {
        "job_id": job.job_id,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "suite": job.suite,
        "agent": job.agent,
        "skill_hash": job.skill_hash,
        "status": job.status,
        "planned": len(job.planned),
        "record": job.model_dump_json(),
    }


@dataclass
class JobProgress:
    """A job with its counts, for listings."""

    job: JobRecord
    planned: int
    done: int  # runs graded (completed, agent error, timed out)
    unscored: int  # runs recorded as provider, harness or definition errors: in no figure
    passed: int
    evals: int
    outcomes: dict[str, int] = field(default_factory=dict)  # outcome -> runs


@dataclass
class RebuildReport:
    jobs: int = 0
    runs: int = 0
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason


class Store:
    """The index of one results root. Create with ``skillassay.store.open(results_root)``."""

    def __init__(self, results_root: Path | str):
        self.root = Path(results_root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / DB_NAME
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        conn = self._conn()
        with conn:
            conn.executescript(_SCHEMA)
            _add_missing_columns(conn)
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # check_same_thread=False only so close() can close every thread's connection; each is used by one
            # thread
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def journal_mode(self) -> str:
        return self._conn().execute("PRAGMA journal_mode").fetchone()[0]

    # ------------------------------------------------------------------ writing
    def record_job(self, job: JobRecord) -> None:
        conn = self._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(_UPSERT_JOB, _job_row(clean(job)))

    def record_run(self, run: RunRecord) -> None:
        """Index one finished run. Idempotent: recording the same job/eval/variant/run again replaces the
        row.
        """
        conn = self._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(_UPSERT_RUN, _run_row(clean(run)))

    def save_job(self, job: JobRecord) -> None:
        """Write ``job.json`` and index it."""
        write_job_file(self.root, job)
        self.record_job(job)

    def save_run(self, run: RunRecord) -> None:
        """Write ``run.json`` into the run's folder and index it."""
        write_run_file(self.root, run)
        self.record_run(run)

    def finish_job(self, job_id: str, status: str = "finished") -> JobRecord:
        """Mark a job finished (or interrupted), in the index and in its ``job.json`` when that file
        exists.
        """
        job = self.job(job_id)
        if job is None:
            raise KeyError(f"no job {job_id!r} in {self.path}")
        job = job.model_copy(update={"status": status, "finished_at": datetime.now(UTC)})
        job = JobRecord.model_validate(job.model_dump())  # re-validate the status literal
        if (self.root / job_id / "job.json").is_file():
            write_job_file(self.root, job)
        self.record_job(job)
        return job

    # ------------------------------------------------------------------ reading
    def job(self, job_id: str) -> JobRecord | None:
        row = self._conn().execute("SELECT record FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return None if row is None else JobRecord.model_validate_json(row["record"])

    def jobs(self) -> list[JobRecord]:
        rows = self._conn().execute("SELECT record FROM jobs ORDER BY created_at, job_id").fetchall()
        return [JobRecord.model_validate_json(r["record"]) for r in rows]

    def runs(
        self, job_id: str | None = None, eval_id: str | None = None, variant: Variant | None = None
    ) -> list[RunRecord]:
        sql = "SELECT record FROM runs"
        where, args = [], []
        for column, value in (("job_id", job_id), ("eval_id", eval_id), ("variant", variant)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY job_id, eval_id, variant DESC, run_index"  # skill before baseline
        return [RunRecord.model_validate_json(r["record"]) for r in self._conn().execute(sql, args)]

    def missing_runs(self, job_id: str) -> list[tuple[str, int, Variant]]:
        """Planned runs with no record, or whose record is a provider or harness error (outcomes.RERUN: not
        the agent's doing, never scored). Graded runs, whatever their outcome, are never re-rolled. In
        planned order."""
        job = self.job(job_id)
        if job is None:
            raise KeyError(f"no job {job_id!r} in {self.path}")
        self._index_runs_on_disk(job_id)
        done = {
            (r["eval_id"], r["run_index"], r["variant"])
            for r in self._conn().execute(
                "SELECT eval_id, run_index, variant FROM runs WHERE job_id = ? AND outcome NOT IN "
                f"{_RERUN_SQL}",
                (job_id,),
            )
        }
        return [tuple(p) for p in job.planned if tuple(p) not in done]  # type: ignore[misc]

    def _index_runs_on_disk(self, job_id: str) -> None:
        """Index the job's ``run.json`` files the index lacks: a run is on disk before it is indexed (the file
        is written atomically), so an orchestrator killed between the two left a finished run that must not
        be re-rolled."""
        known = {
            r["run_dir"] for r in self._conn().execute("SELECT run_dir FROM runs WHERE job_id = ?", (job_id,))
        }
        for run_file in iter_run_files(self.root / job_id):
            if run_file.parent.relative_to(self.root).as_posix() in known:
                continue
            try:
                self.record_run(load_record(run_file, RunRecord))  # type: ignore[arg-type]
            except Unreadable:
                continue

    def progress(self) -> list[JobProgress]:
        counts = {
            r["job_id"]: r
            for r in self._conn().execute(
                f"""SELECT job_id,
                          SUM(outcome IN {_SCORED_SQL}) AS done,
                          SUM(outcome NOT IN {_SCORED_SQL}) AS unscored,
                          SUM(CASE WHEN outcome IN {_SCORED_SQL} THEN COALESCE(passed, 0) ELSE 0 END) AS passed,
                          COUNT(DISTINCT eval_id) AS evals
                   FROM runs GROUP BY job_id"""  # noqa: E501 - code inside a string, kept as written
            )
        }
        by_outcome: dict[str, dict[str, int]] = {}
        for r in self._conn().execute(
            "SELECT job_id, outcome, COUNT(*) AS n FROM runs GROUP BY job_id, outcome"
        ):
            by_outcome.setdefault(r["job_id"], {})[r["outcome"]] = int(r["n"])
        out = []
        for job in self.jobs():
            c = counts.get(job.job_id)
            planned_evals = len({p[0] for p in job.planned})
            out.append(
                JobProgress(
                    job=job,
                    planned=len(job.planned),
                    done=int(c["done"] or 0) if c else 0,
                    unscored=int(c["unscored"] or 0) if c else 0,
                    passed=int(c["passed"] or 0) if c else 0,
                    evals=max(planned_evals, int(c["evals"]) if c else 0),
                    outcomes=by_outcome.get(job.job_id, {}),
                )
            )
        return out

    # ------------------------------------------------------------------ rebuilding
    def rebuild_index(self) -> RebuildReport:
        """Re-create the index from the ``job.json`` and ``run.json`` files under the results root."""
        report = RebuildReport()
        jobs: list[dict] = []
        runs: list[dict] = []
        for job_file in iter_job_files(self.root):
            try:
                job = load_record(job_file, JobRecord)
            except Unreadable as exc:
                report.skipped.append(str(exc))
                continue
            jobs.append(_job_row(job))  # type: ignore[arg-type]
            for run_file in iter_run_files(job_file.parent):
                try:
                    runs.append(_run_row(load_record(run_file, RunRecord)))  # type: ignore[arg-type]
                except Unreadable as exc:
                    report.skipped.append(str(exc))
        conn = self._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM runs")
            conn.execute("DELETE FROM jobs")
            conn.executemany(_UPSERT_JOB, jobs)
            conn.executemany(_UPSERT_RUN, runs)
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        report.jobs, report.runs = len(jobs), len(runs)
        return report

    def index_new_jobs(self) -> list[str]:
        """Index job folders on disk that the database does not know yet (copied in from elsewhere, or written
        while the database was away). Cheap: one directory listing. Returns the job ids added."""
        known = {r["job_id"] for r in self._conn().execute("SELECT job_id FROM jobs")}
        added = []
        for job_file in iter_job_files(self.root):
            if job_file.parent.name in known:
                continue
            try:
                job = load_record(job_file, JobRecord)
            except Unreadable:
                continue
            runs = []
            for run_file in iter_run_files(job_file.parent):
                with contextlib.suppress(Unreadable):
                    runs.append(_run_row(load_record(run_file, RunRecord)))  # type: ignore[arg-type]
            conn = self._conn()
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(_UPSERT_JOB, _job_row(clean(job)))  # type: ignore[arg-type]
                conn.executemany(_UPSERT_RUN, runs)
            added.append(job.job_id)
        return added

    def schema_version(self) -> int:
        row = self._conn().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row["value"]) if row else 0

    def count_runs(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM runs").fetchone()[0])


# columns later schema versions added to ``runs``: an index made before them gets them here (then is rebuilt)
_ADDED_RUN_COLUMNS = {"grading_version": "INTEGER NOT NULL DEFAULT 1"}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    have = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    for name, decl in _ADDED_RUN_COLUMNS.items():
        if name not in have:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {decl}")


def open(results_root: Path | str) -> Store:
    """Open (creating when needed) the index of a results root. When the database is new but run files exist,
    the index is built from them; job folders the database does not know are indexed."""
    root = Path(results_root)
    fresh = not (root / DB_NAME).exists()
    store = Store(root)
    if (fresh or store.schema_version() < SCHEMA_VERSION) and any(iter_job_files(root)):
        store.rebuild_index()
    else:
        store.index_new_jobs()
    return store
