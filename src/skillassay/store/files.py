"""The results folder on disk: where each run's files live, and reading/writing the records kept there.

The files are the truth; the SQLite database (``skillassay.store.db``) is an index rebuilt from them at will.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillassay.store.models import JobRecord, RunRecord, Variant

DB_NAME = "skillassay.db"
JOB_FILE = "job.json"
RUN_FILE = "run.json"
DEFAULT_RESULTS_ROOT = Path("results")

# The files the orchestrator leaves in a run directory (any may be missing: a crashed run leaves fewer).
RUN_ARTIFACTS = (
    "run.json",
    "diff.patch",
    "transcript.raw.jsonl",
    "transcript.json",
    "agent.stdout.log",
    "agent.stderr.log",
    "rubric.json",
    "sandbox.json",
    "process.json",
    "app.stdout.log",
    "app.stderr.log",
)


def run_dir_name(eval_id: str, run_index: int, variant: Variant = "skill") -> str:
    """Relative to the job folder: ``<eval_id>/run_<n>`` or ``<eval_id>/baseline/run_<n>``."""
    if variant == "baseline":
        return f"{eval_id}/baseline/run_{run_index}"
    return f"{eval_id}/run_{run_index}"


def run_dir_rel(job_id: str, eval_id: str, run_index: int, variant: Variant = "skill") -> str:
    """Relative to the results root, as ``RunRecord.run_dir`` holds it."""
    return f"{job_id}/{run_dir_name(eval_id, run_index, variant)}"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write through a temporary file and rename, so a reader never sees half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if isinstance(data, str):
                fh.write(data)
            else:
                json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_job_file(results_root: Path, job: JobRecord) -> Path:
    path = Path(results_root) / job.job_id / JOB_FILE
    write_json_atomic(path, job.model_dump_json(indent=2))
    return path


def write_run_file(results_root: Path, run: RunRecord) -> Path:
    path = Path(results_root) / run.run_dir / RUN_FILE
    write_json_atomic(path, run.model_dump_json(indent=2))
    return path


def read_job_file(path: Path) -> JobRecord:
    return JobRecord.model_validate_json(Path(path).read_text(encoding="utf-8"))


def read_run_file(path: Path) -> RunRecord:
    return RunRecord.model_validate_json(Path(path).read_text(encoding="utf-8"))


def iter_job_files(results_root: Path) -> Iterator[Path]:
    root = Path(results_root)
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        path = child / JOB_FILE
        if child.is_dir() and path.is_file():
            yield path


def iter_run_files(job_dir: Path) -> Iterator[Path]:
    """``<job>/<eval>/run_<n>/run.json`` and ``<job>/<eval>/baseline/run_<n>/run.json``."""
    yield from sorted(Path(job_dir).glob(f"*/run_*/{RUN_FILE}"))
    yield from sorted(Path(job_dir).glob(f"*/baseline/run_*/{RUN_FILE}"))


class Unreadable(Exception):
    """A record file that does not parse; reported by ``rebuild_index`` and skipped."""


def load_record(path: Path, model: type[JobRecord | RunRecord]) -> JobRecord | RunRecord:
    try:
        return model.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise Unreadable(f"{path}: {exc}".splitlines()[0]) from exc
