"""Moving a job's files to workers and run folders back, for executors whose workers share no filesystem.

- ``pack_inputs``: what the runs read (each eval's files from the suite, the skill) as one tar archive plus a
  content key. Workers unpack it once per machine (``unpack_inputs``, cached by key under the temp folder) and
  reload each definition from the copy (``definition_here``).
- ``pack_run`` / ``unpack_run``: a finished run folder as an archive, written into the job's results root on
  the driver through a staging folder, so the folder appears whole (run.json included) or not at all.

Dependency and cache folders (node_modules, .venv, ...) never travel: workspaces are made without them anyway.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from skillassay.definitions.models import EvalDefinition
from skillassay.errors import SkillassayError
from skillassay.kinds import kind_of
from skillassay.store.files import RUN_FILE, write_json_atomic
from skillassay.workspace.skiplist import SKIP_DIRS  # installed, cached, version control: never travels

# a suite bigger than this is almost surely a mistake (a stray build folder)
MAX_INPUT_BYTES = 512 * 1024 * 1024
COMPLETE = ".complete"


def _walk(root: Path):
    """Files (and symlinks) under ``root`` in a stable order, without the skipped folders."""
    if root.is_file() or root.is_symlink():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(dirpath)
        for d in dirnames:
            if (base / d).is_symlink():
                yield base / d
        for name in sorted(filenames):
            yield base / name


def eval_paths(definition: EvalDefinition) -> list[Path]:
    """What of the suite one eval reads, relative to its suite folder."""
    suite = definition.suite_dir.resolve()
    # its fixture folder, when it has one (a trigger prompt may not)
    wanted = [definition.fixture_dir] if Path(definition.fixture_dir).is_dir() else []
    wanted.extend(kind_of(definition).suite_files(definition))
    rels = []
    for p in wanted:
        p = Path(p).resolve()
        if not p.exists():
            continue
        try:
            rels.append(p.relative_to(suite))
        except ValueError:
            raise SkillassayError(
                f"{definition.source}: {p} is outside the suite folder {suite}, so it cannot be "
                "sent to the workers; keep an eval's files inside its suite"
            ) from None
    return rels


def suite_key(definition: EvalDefinition) -> str:
    """The name a definition's suite folder travels under."""
    return hashlib.sha256(str(definition.suite_dir.resolve()).encode()).hexdigest()[:12]


def pack_inputs(definitions: list[EvalDefinition], skill: Path | None) -> tuple[str, bytes]:
    """(content key, tar archive): ``suites/<suite key>/<what each eval reads>`` and ``skill`` (a folder or a
    file). The key changes with any byte of any file, so a worker's cached copy is never stale."""
    members: dict[str, Path] = {}
    for d in definitions:
        suite = d.suite_dir.resolve()
        for rel in eval_paths(d):
            for f in _walk(suite / rel):
                members[f"suites/{suite_key(d)}/{f.relative_to(suite).as_posix()}"] = f
    if skill is not None:
        skill = skill.resolve()
        for f in _walk(skill):
            members["skill" if f == skill else f"skill/{f.relative_to(skill).as_posix()}"] = f
    h = hashlib.sha256()
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for name in sorted(members):
            path = members[name]
            info = tar.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            h.update(name.encode() + b"\0")
            if info.issym():
                h.update(b"->" + info.linkname.encode() + b"\0")
                tar.addfile(info)
            elif info.isfile():
                data = path.read_bytes()
                total += len(data)
                if total > MAX_INPUT_BYTES:
                    raise SkillassayError(
                        f"the files the runs need are over {MAX_INPUT_BYTES >> 20} MiB "
                        f"(at {path}): too much to send to every worker"
                    )
                h.update(hashlib.sha256(data).digest())
                tar.addfile(info, io.BytesIO(data))
    return h.hexdigest()[:24], buf.getvalue()


def inputs_cache(key: str) -> Path:
    return Path(tempfile.gettempdir()) / "skillassay-inputs" / key


def unpack_inputs(key: str, fetch) -> Path:
    """The unpacked inputs on this machine: unpacked once (``fetch()`` returns the archive), then reused by
    every run of the job here; a lock keeps two runs starting at once from unpacking twice."""
    root = inputs_cache(key)
    if (root / COMPLETE).exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / COMPLETE).exists():
            return root
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root.parent))
        with tarfile.open(fileobj=io.BytesIO(fetch()), mode="r:gz") as tar:
            tar.extractall(staging, filter="tar")
        (staging / COMPLETE).touch()
        if root.exists():
            shutil.rmtree(root)
        os.replace(staging, root)
    return root


def drop_inputs(key: str) -> None:
    """Remove this machine's copy of a job's inputs (the job is over)."""
    root = inputs_cache(key)
    shutil.rmtree(root, ignore_errors=True)
    (root.parent / f"{key}.lock").unlink(missing_ok=True)


def definition_here(definition: EvalDefinition, inputs: Path) -> EvalDefinition:
    """The definition, loaded again from this machine's copy of its suite (every path in it then points
    here).
    """
    suite_here = inputs / "suites" / suite_key(definition)
    suite = definition.suite_dir.resolve()
    return kind_of(definition).reload(definition, suite, suite_here)


def skill_here(skill: Path | None, inputs: Path) -> Path | None:
    return None if skill is None else inputs / "skill"


# ------------------------------------------------------------------------------------------------ run folders
def pack_run(run_dir: Path) -> bytes:
    """A finished run folder as a tar archive (symlinks the agent made are kept as symlinks)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        tar.add(str(run_dir), arcname=".", recursive=True)
    return buf.getvalue()


def unpack_run(archive: bytes, dest: Path, run_json: str | None = None) -> None:
    """Write a run folder from its archive to ``dest``: extracted next to it, then renamed into place,
    replacing an unfinished earlier attempt. Member names cannot leave the folder, not even through a
    symlink in the archive (the ``tar`` filter); device files, hard links and set-id bits are dropped.
    ``run_json``: the record to keep as run.json instead of the archived one (the driver adds what it saw)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.incoming-", dir=dest.parent))
    try:
        with _Unowned.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(staging, filter=_run_filter)  # noqa: S202 - every member through _run_filter
        if run_json is not None:
            write_json_atomic(staging / RUN_FILE, run_json)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


class _Unowned(tarfile.TarFile):
    """Files written as the driver's own (a worker's user and group ids mean nothing here); one syscall
    less each.
    """

    def chown(self, tarinfo, targetpath, numeric_owner):
        return None


def _run_filter(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    if member.ischr() or member.isblk() or member.isfifo() or member.islnk():
        return None  # nothing a run folder needs; a hard link could point anywhere in the results
    return tarfile.tar_filter(member, path)
