"""Results on disk (per-run files, the truth) and their SQLite index.

from skillassay import store
db = store.open("results")       # creates results/skillassay.db (WAL); indexes existing files if new
db.record_job(job); db.record_run(run); db.finish_job(job_id, "finished")
db.runs(job_id=...); db.missing_runs(job_id); db.rebuild_index()
"""

from skillassay.store.db import JobProgress, RebuildReport, Store, open
from skillassay.store.files import (
    DB_NAME,
    DEFAULT_RESULTS_ROOT,
    RUN_ARTIFACTS,
    read_job_file,
    read_run_file,
    run_dir_name,
    run_dir_rel,
    write_job_file,
    write_run_file,
)
from skillassay.store.records import JobRecord, Outcome, RunRecord, TranscriptSummary, Variant

__all__ = [
    "DB_NAME",
    "DEFAULT_RESULTS_ROOT",
    "RUN_ARTIFACTS",
    "JobProgress",
    "JobRecord",
    "Outcome",
    "RebuildReport",
    "RunRecord",
    "Store",
    "TranscriptSummary",
    "Variant",
    "open",
    "read_job_file",
    "read_run_file",
    "run_dir_name",
    "run_dir_rel",
    "write_job_file",
    "write_run_file",
]
