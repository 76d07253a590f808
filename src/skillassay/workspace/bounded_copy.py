"""The workspace as a run keeps it: one bounded copy, made once the agent has stopped (docs/results.md,
"Size").

Everything after the agent reads this copy, never the live workspace: the change (``compare_trees``), every
grader, the sandbox's and the graders' own copies, and the workspace kept in the run folder. So a limit
enforced here holds for all of them, and a process the agent left behind cannot change what is graded or
stored.

- **Size.** The files the agent added or changed (apparent sizes, so a sparse file counts as what reading it
  gives) may add up to ``limit`` bytes (default 20 MB; ``--max-change-size``, or ``max_change_size`` in a
  definition). Beyond it, the largest files are left out, one by one, until the rest fits: each is listed
  (path, size, bytes on disk, sha256) and the run is graded on the rest, an added file being absent and a
  changed one as it was before.
- **Copied once, bounded.** Each file is copied up to the size it had when it was first looked at: a file
  still growing (a writer that outlived the agent) is kept as it was then and named in ``grew``. Fifos,
  sockets and device files are never opened (reading a fifo blocks) and are named in ``special`` (the first
  100; ``special_more``).
- **Entries.** At most ``max_entries`` (10,000) new files, links and folders and changed files are kept, in
  the walk's order (sorted names, a folder's entries before its subfolders' contents); the rest are counted in
  ``entries_left_out`` (the first 20 named), a new one absent with everything under it, a changed one as it
  was. Every later step (the change, each grader, the stored copy) costs per file: 200,000 empty files took
  them hours.
- **The same copy rule as every other copy** (``changes.copy_ignore``): no installed dependencies, caches,
  nested repositories or top-level build output (an empty folder stands for a build folder the run created, so
  the change still lists it in ``skipped``).
- **No ``.git``.** The agent's repository is not copied: its objects would store the change a second time,
  compressed (where no byte scan sees a secret), and its configuration and hooks would run for whoever opens
  the kept copy with git. The kept workspace gets a fresh repository holding the pristine commit
  (``init_pristine``), so ``git diff`` in it shows the agent's change.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillassay.workspace.changes import same_file
from skillassay.workspace.skiplist import OUTPUT_DIRS, skipped_dir

DEFAULT_MAX_CHANGE = 20_000_000  # bytes
MAX_ENTRIES = 10_000  # new files, links and folders, and changed files, a run keeps (an app's change: tens)
HASH_LIMIT = 1 << 30  # a larger file is listed without a hash: reading 10 GB of a sparse file takes a minute
_CHUNK = 1 << 20


class OverLimit(BaseModel):
    """A file left out of the run because the change was larger than the limit."""

    path: str
    status: Literal["added", "modified"]
    size: int  # bytes, as reading the file gives them
    allocated: int  # bytes on disk (smaller for a sparse file)
    sha256: str | None = None  # None: larger than HASH_LIMIT, not read


class SizeReport(BaseModel):
    """What the size limit did to a run (run.json ``size``)."""

    limit: int
    change_bytes: int = 0  # added or changed files as the agent left them
    kept_bytes: int = 0  # of those, what the run kept and graded
    files: int = 0  # files and links in the kept copy
    over_limit: list[OverLimit] = Field(default_factory=list)
    grew: list[str] = Field(default_factory=list)  # still growing after the agent stopped: kept as first seen
    special: list[str] = Field(default_factory=list)  # fifos, sockets, devices: not copied (the first 100)
    special_more: int = 0  # more of them, not named
    max_entries: int = MAX_ENTRIES
    # new files, links and folders and changed files beyond ``max_entries`` (and below)
    entries_left_out: int = 0
    entries_left_out_sample: list[str] = Field(default_factory=list)  # the first 20 of them
    unreadable: list[str] = Field(default_factory=list)  # files the agent made unreadable: not copied
    # files of the run folder cut to their first and last bytes
    logs_cut: list[str] = Field(default_factory=list)

    @property
    def exceeded(self) -> bool:
        return bool(self.over_limit) or self.entries_left_out > 0


def snapshot(
    workspace: Path,
    pristine: Path,
    dest: Path,
    limit: int = DEFAULT_MAX_CHANGE,
    max_entries: int = MAX_ENTRIES,
) -> SizeReport:
    """Copy ``workspace`` (as the agent left it) to ``dest`` within ``limit``; ``pristine`` is the fixture's
    app it started from. ``dest`` must not exist. A missing workspace (the agent deleted it) gives an empty
    copy. At most ``max_entries`` new entries and changed files are kept (module docstring, "Entries")."""
    workspace, pristine, dest = Path(workspace), Path(pristine), Path(dest)
    report = SizeReport(limit=limit, max_entries=max_entries)
    dest.mkdir(parents=True)
    if not workspace.is_dir() or workspace.is_symlink():
        return report
    entries = _walk(workspace, report)
    changed: list[tuple[str, os.stat_result, bool]] = []  # (rel, stat, has a pristine regular file)
    counted = 0
    dropped: set[str] = set()  # entries left out by count (a new folder's whole subtree with it)
    as_before: set[str] = set()  # changed files and links left out by count: kept as they were
    for rel, info in entries:
        if rel.rpartition("/")[0] in dropped:  # parents come first: a dropped folder drops all under it
            dropped.add(rel)
            report.entries_left_out += 1
            continue
        before = _lstat(pristine / rel)
        was_file = before is not None and stat.S_ISREG(before.st_mode)
        is_changed = stat.S_ISREG(info.st_mode) and not (
            was_file
            and before is not None
            and same_file(str(pristine / rel), str(workspace / rel), before, info)
        )
        if before is None or is_changed:
            counted += 1
            if counted > max_entries:
                report.entries_left_out += 1
                if len(report.entries_left_out_sample) < 20:
                    report.entries_left_out_sample.append(rel)
                if was_file or (before is not None and stat.S_ISLNK(before.st_mode)):
                    as_before.add(rel)
                else:  # new, or where the app had a folder (or a fifo): absent, never copied unmeasured
                    dropped.add(rel)
                continue
        if is_changed:
            changed.append((rel, info, was_file))
    report.change_bytes = sum(info.st_size for _, info, _ in changed)
    # the largest files go first, until the rest fits (ties by path, so the same change always keeps the same
    # files)
    out: dict[str, tuple[os.stat_result, bool]] = {}
    total = report.change_bytes
    for rel, info, had in sorted(changed, key=lambda c: (-c[1].st_size, c[0])):
        if total <= limit:
            break
        out[rel] = (info, had)
        total -= info.st_size
    report.kept_bytes = total
    for rel, (info, had) in sorted(out.items()):
        report.over_limit.append(
            OverLimit(
                path=rel,
                status="modified" if had else "added",
                size=info.st_size,
                allocated=info.st_blocks * 512,
                sha256=_sha256(workspace / rel, info),
            )
        )

    for rel, info in entries:
        if rel in dropped:
            continue
        target = dest / rel
        mode = info.st_mode
        if rel in as_before:
            shutil.copy2(pristine / rel, target, follow_symlinks=False)
            report.files += 1
            continue
        if stat.S_ISDIR(mode):
            target.mkdir(exist_ok=True)
        elif stat.S_ISLNK(mode):
            os.symlink(os.readlink(workspace / rel), target)
            report.files += 1
        elif rel in out:
            if out[rel][1]:  # graded as it was before the agent changed it
                shutil.copy2(pristine / rel, target, follow_symlinks=False)
                report.files += 1
        else:
            grew = _copy_bounded(workspace / rel, target, info)
            if grew is None:
                report.unreadable.append(rel)
                continue
            if grew:
                report.grew.append(rel)
            report.files += 1
    for rel, info in reversed(entries):  # folders last: writing into one changes its time
        if stat.S_ISDIR(info.st_mode) and rel not in dropped:
            _set_stat(dest / rel, info)
    return report


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _walk(root: Path, report: SizeReport) -> list[tuple[str, os.stat_result]]:
    """(relative path, lstat) of every folder, file and link the copy rule keeps, parents before children."""
    out: list[tuple[str, os.stat_result]] = []
    root_s = str(root)
    for dirpath, dirnames, filenames in os.walk(root_s, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root_s)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        keep = []
        for d in sorted(dirnames):
            info = _lstat(Path(dirpath) / d)
            if info is None:
                continue
            if skipped_dir(d, rel_dir == "."):
                if rel_dir == "." and d in OUTPUT_DIRS and stat.S_ISDIR(info.st_mode):
                    # kept empty: the change lists the build folders a run made
                    out.append((prefix + d, info))
                continue
            out.append((prefix + d, info))
            if stat.S_ISDIR(info.st_mode):
                keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            info = _lstat(Path(dirpath) / name)
            if info is None:
                continue
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                out.append((prefix + name, info))
            elif len(report.special) < 100:
                report.special.append(prefix + name)
            else:
                report.special_more += 1
    return out


def _sha256(path: Path, info: os.stat_result) -> str | None:
    if info.st_size > HASH_LIMIT:
        return None
    h = hashlib.sha256()
    left = info.st_size
    try:
        with open(path, "rb") as f:
            while left > 0:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    break
                h.update(chunk)
                left -= len(chunk)
    except OSError:
        return None
    return "sha256:" + h.hexdigest()


def _copy_bounded(src: Path, dst: Path, info: os.stat_result) -> bool | None:
    """Copy at most the ``info.st_size`` bytes ``src`` had when it was looked at; True when it had grown
    since, None when it could not be read (never the harness's failure: the agent's file is not kept)."""
    left = info.st_size
    grew = False
    try:
        with open(src, "rb", buffering=0) as fin, open(dst, "wb") as fout:
            while left > 0:
                chunk = fin.read(min(_CHUNK, left))
                if not chunk:
                    break
                fout.write(chunk)
                left -= len(chunk)
            grew = bool(fin.read(1))
    except OSError:
        dst.unlink(missing_ok=True)
        return None
    _set_stat(dst, info)
    return grew


def _set_stat(path: Path, info: os.stat_result) -> None:
    # the pristine file's size and time make an untouched file "unchanged" without reading it (changes.py)
    # the owner can always write: the copy is scrubbed and moved after grading, whatever modes the agent set
    os.chmod(path, stat.S_IMODE(info.st_mode) | (0o700 if stat.S_ISDIR(info.st_mode) else 0o600))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def keep(copy: Path, dest: Path, pristine: Path) -> None:
    """Move the run's copy to ``dest`` (the run folder's ``workspace/``) with a repository holding the
    pristine commit, so ``git diff`` there shows the change."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(copy), str(dest))
    from skillassay.workspace.workspace import init_pristine

    init_pristine(dest, pristine)
