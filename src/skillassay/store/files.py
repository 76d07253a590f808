"""The results folder on disk: where each run's files live, and reading/writing the records kept there.

The files are the truth; the SQLite database (``skillassay.store.db``) is an index rebuilt from them at will.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from skillassay.errors import SkillassayError
from skillassay.outcomes import RERUN
from skillassay.secrets import Hit, Redaction, Redactor, environment_redactor
from skillassay.store.records import JobRecord, RunRecord, Variant
from skillassay.untrusted import printable

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
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            if isinstance(data, str):
                fh.write(data)
            else:  # text UTF-8 cannot encode (an agent's file names) is stored as its escape, never lost
                json.dump(printable(data), fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


SUPERSEDED_DIR = ".superseded"  # beside run_<n>: earlier unscored or unfinished attempts, kept for the record
HARNESS_ERROR_FILE = "harness_error.txt"  # the traceback of a run the harness failed to carry out or to write


class RunAlreadyRecorded(SkillassayError):
    """A graded run is never overwritten (only ``skillassay regrade`` changes one, keeping the previous
    record).
    """


class RunClaimed(SkillassayError):
    """Another process created the run's folder between our look and our claim."""


def claim_run_dir(results_root: Path, rel: str) -> Path:
    """Claim a run's folder for one attempt, exclusively.

    A folder holding a graded run (any outcome but provider/harness error) is refused. A folder left by an
    unfinished attempt, or holding an unscored run, is moved aside into ``.superseded/`` (never deleted:
    what went wrong stays readable). The new folder is then created with an exclusive ``mkdir``: if another
    process got there first, ``RunClaimed``."""
    run_dir = Path(results_root) / rel
    existing = run_dir / RUN_FILE
    if existing.is_file():
        try:
            previous = read_run_file(existing)
        except (OSError, ValidationError, ValueError):
            previous = None  # half a record: an unfinished attempt
        if previous is not None and previous.outcome not in RERUN:
            raise RunAlreadyRecorded(
                f"{rel}: already graded ({previous.outcome}); a graded run is never overwritten "
                "(skillassay regrade re-scores it and keeps the previous record)"
            )
    if run_dir.exists() or run_dir.is_symlink():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = run_dir.parent / SUPERSEDED_DIR / f"{run_dir.name}-{stamp}"
        aside.parent.mkdir(parents=True, exist_ok=True)
        os.rename(run_dir, aside)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        run_dir.mkdir()
    except FileExistsError:
        raise RunClaimed(f"{rel}: claimed by another process") from None
    return run_dir


JOB_LOCK_FILE = ".lock"


class JobBusy(SkillassayError):
    """Another skillassay process holds the job (runs or regrades it)."""


@contextmanager
def job_lock(results_root: Path, job_id: str) -> Iterator[None]:
    """Hold the job exclusively for the block: one process at a time runs, resumes or regrades a job. A second
    one is refused at once (``JobBusy``, naming the holder), never queued behind it. The lock is an
    ``flock`` on ``<job>/.lock``: the kernel drops it when its holder dies, so a killed job never leaves a
    stale lock."""
    job_dir = Path(results_root) / job_id
    job_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(job_dir / JOB_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise JobBusy(
                f"job {job_id} is in use by another skillassay process ({holder}): wait for it to end, "
                f"then run the command again"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC".encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def write_job_file(results_root: Path, job: JobRecord) -> Path:
    path = Path(results_root) / job.job_id / JOB_FILE
    write_json_atomic(path, clean(job).model_dump_json(indent=2))
    return path


def write_run_file(results_root: Path, run: RunRecord) -> Path:
    path = Path(results_root) / run.run_dir / RUN_FILE
    write_json_atomic(path, clean(run).model_dump_json(indent=2))
    return path


# ----------------------------------------------------------------------------- secrets and sizes
WORKSPACE_DIR = "workspace"  # the run's kept workspace, inside its folder
MAX_LOG_BYTES = 20_000_000  # a larger log or transcript of a run keeps its first and last half of this

_R = TypeVar("_R", bound=BaseModel)


def clean(record: _R, redactor: Redactor | None = None) -> _R:
    """``record`` with every secret of the harness's environment (or of ``redactor``) replaced: the last check
    on every record written to a file or the index. A record with nothing to hide comes back as it is."""
    record, _ = scrub_record(record, redactor or environment_redactor())
    return record


def storable(record: _R) -> _R:
    """``record``, with any text UTF-8 cannot encode (an agent's file name in an evidence line, a lone
    surrogate from a CLI's JSON) written as its escape: the record can then always be stored, and the run
    is never lost to a name the agent chose."""
    try:
        record.model_dump_json()
        return record
    except PydanticSerializationError:
        return type(record).model_validate(printable(record.model_dump()))


def scrub_record(record: _R, redactor: Redactor) -> tuple[_R, list[Hit]]:
    """(the record with its secrets replaced, what was found)."""
    record = storable(record)
    text = record.model_dump_json()
    clean_text, hits = redactor.redact_json(text)
    if not hits:
        return record, hits
    return type(record).model_validate_json(clean_text), hits


def scrub_run_dir(run_dir: Path, redactor: Redactor) -> list[Redaction]:
    """Scrub a run's folder in place (``Redactor.scrub_tree``). The kept workspace's repository is checked as
    git reads it (every object decompressed) and removed whole if anything in it matches: a git object
    cannot be edited."""
    from skillassay.workspace.workspace import git_contents

    repo_rel = f"{WORKSPACE_DIR}/.git"
    found = redactor.scrub_tree(run_dir, skip=lambda rel: rel == repo_rel)
    repo = Path(run_dir) / repo_rel
    if repo.is_dir() and not repo.is_symlink():
        hits = [h for data in git_contents(repo) for h in redactor.find(data)]
        if hits:
            shutil.rmtree(repo)
            found.append(
                Redaction(
                    path=repo_rel,
                    where="git",
                    action="removed",
                    count=len(hits),
                    forms=sorted({h.form for h in hits}),
                    sources=sorted({h.source for h in hits}),
                )
            )
    return found


def cap_logs(run_dir: Path, limit: int = MAX_LOG_BYTES) -> list[str]:
    """Cut every file of a run's folder (but its kept workspace) that is larger than ``limit`` to its first
    and last ``limit / 2`` bytes, with a line saying how much was left out between; returns their relative
    paths."""
    cut = []
    root = Path(run_dir)
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == root:
            dirnames[:] = [d for d in dirnames if d != WORKSPACE_DIR]
        for name in filenames:
            path = Path(dirpath) / name
            try:
                size = path.lstat().st_size
            except OSError:
                continue
            if size <= limit or path.is_symlink():
                continue
            half = limit // 2
            with open(path, "rb") as f:
                head = f.read(half)
                f.seek(size - half)
                tail = f.read(half)
            note = (
                f"\n[skillassay: {size - 2 * half} bytes left out here; the file had {size} bytes]\n".encode()
            )
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=dirpath)
            with os.fdopen(fd, "wb") as out:
                out.write(head + note + tail)
            os.replace(tmp, path)
            cut.append(path.relative_to(root).as_posix())
    return sorted(cut)


def run_redactor(agent_env: dict[str, str] | None = None, extra: list[str] | None = None) -> Redactor:
    """Every secret a run could have seen: the harness's environment, ``--agent-env`` and the run's own
    tokens.
    """
    return environment_redactor(extra or [], agent_env)


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
