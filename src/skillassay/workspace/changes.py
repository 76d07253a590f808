"""What the agent changed: one ``ChangeSet`` per run, computed once and handed to every grader.

The pristine tree (the fixture's ``app/``) is compared with the modified one (the workspace). A file is
unchanged when its bytes are; files of different sizes are changed without reading them. Modification times
play no part: the agent sets them (``touch -d``), so a same-size edit with its time set back must still be a
change. The cost is one ``lstat`` per file plus reading the pairs of equal size (an app's sources:
milliseconds).

One skip-list, used by everything that walks or copies an app (the workspace, the rubric, the process graders,
the reference agent, the sandbox's copies and build cache):
- installed dependencies, tool caches and version control, at any depth: ``SKIP_DIRS``;
- what the app's build and test runs produce, at its top level only: ``OUTPUT_DIRS`` (``dist/``, ``build/``,
  ``.next/``, ``coverage/``...). The sandbox rebuilds it from the sources, so it is neither part of the change
  (not in ``diff.patch``, not seen by any grader) nor copied: code an agent puts there exists for no layer.
  ``skipped`` lists such folders the run created, so a reader can see them. A folder of the same name deeper
  down (``src/build``) is source like any other;
- files no one authors: byte code, coverage data and the databases an app or its tests create while running
  (``SKIP_SUFFIXES``, ``SKIP_NAMES``).
  They are left out of the change only; copies keep them (an app may ship a seed database).

Symbolic links are part of the change as links: compared by their target text, never followed, and never read
(``read`` answers None), so nothing outside the two trees is ever read. A file is ``binary`` when either side
has a NUL byte in its first 8,000 bytes (git's rule); binary files and links are shown in the patch by name
only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillassay.untrusted import printable
from skillassay.workspace.skiplist import OUTPUT_DIRS, skipped_dir, skipped_file

BINARY_PROBE = 8000  # bytes read to tell text from binary, as git does
MAX_PATCH_FILE_BYTES = 1_000_000  # a larger file is shown in the patch by name only (a bundle, not an edit)

Status = Literal["added", "modified", "deleted"]


def copy_ignore(root: Path | str, keep: frozenset[str] = frozenset()) -> Callable[[str, list[str]], set[str]]:
    """An ``ignore`` for ``shutil.copytree(root, ...)`` leaving out the skipped folders (files are all
    copied), but the top-level folders named in ``keep`` (a kept workspace keeps its ``.git``)."""
    top = os.path.abspath(root)

    def ignore(directory: str, names: list[str]) -> set[str]:
        at_top = os.path.abspath(directory) == top
        return {
            n
            for n in names
            if skipped_dir(n, at_top)
            and not (at_top and n in keep)
            and os.path.isdir(os.path.join(directory, n))
        }

    return ignore


def walk(root: Path | str) -> dict[str, os.stat_result]:
    """Relative POSIX path -> ``lstat`` of every file or symlink under ``root`` that can be part of a
    change.
    """
    out: dict[str, os.stat_result] = {}
    root_str = str(root)
    if not os.path.isdir(root_str):
        return out
    for dirpath, dirnames, filenames in os.walk(root_str, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root_str)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        keep = []
        for d in dirnames:
            if skipped_dir(d, rel_dir == "."):
                continue
            full = os.path.join(dirpath, d)
            if os.path.islink(full):  # listed among the dirs, never entered: the link itself is the entry
                out[prefix + d] = os.lstat(full)
            else:
                keep.append(d)
        dirnames[:] = sorted(keep)
        for name in filenames:
            if not skipped_file(name):
                out[prefix + name] = os.lstat(os.path.join(dirpath, name))
    return out


def _created_build_dirs(pristine: str, modified: str) -> list[str]:
    found = []
    for name in sorted(OUTPUT_DIRS):
        if os.path.isdir(os.path.join(modified, name)) and not os.path.isdir(os.path.join(pristine, name)):
            found.append(name + "/")
    return found


def same_file(a: str, b: str, sa: os.stat_result, sb: os.stat_result) -> bool:
    """Are the entries at ``a`` and ``b`` (with these ``lstat`` results) the same file, link or bytes?"""
    a_link, b_link = stat.S_ISLNK(sa.st_mode), stat.S_ISLNK(sb.st_mode)
    if a_link or b_link:
        return a_link and b_link and os.readlink(a) == os.readlink(b)
    if not (stat.S_ISREG(sa.st_mode) and stat.S_ISREG(sb.st_mode)):
        return stat.S_IFMT(sa.st_mode) == stat.S_IFMT(sb.st_mode)  # a fifo or a socket is never opened
    if sa.st_size != sb.st_size:
        return False
    # same size: the bytes decide. Never the modification time: an agent sets it back with one `touch -d`, and
    # a same-size edit (a weakened assertion, padded) would then be no change at all to every grader
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca, cb = fa.read(1 << 16), fb.read(1 << 16)
            if ca != cb:
                return False
            if not ca:
                return True


def _is_binary(path: str, info: os.stat_result | None) -> bool:
    if info is None or not stat.S_ISREG(info.st_mode):
        return False
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(BINARY_PROBE)
    except OSError:
        return False


@dataclass
class FileChange:
    """One file the change added, modified or deleted."""

    path: str  # relative, POSIX
    status: Status
    binary: bool = False
    symlink: bool = False  # either side is a symbolic link (compared by its target text, never followed)


@dataclass
class ChangeSet:
    """What changed between the pristine tree and the modified one, file by file."""

    pristine_dir: Path
    modified_dir: Path
    files: list[FileChange] = field(default_factory=list)  # sorted by path
    unchanged: list[str] = field(default_factory=list)  # in both trees, identical
    # build-output folders the run created (never part of it)
    skipped: list[str] = field(default_factory=list)
    # files left out because the change was larger than the run's limit (workspace/bounded_copy.py): path,
    # status, size, allocated, sha256; they are not in ``files`` and no grader sees them
    over_limit: list[dict[str, Any]] = field(default_factory=list)
    # new or changed entries beyond the run's count limit (workspace/bounded_copy.py)
    entries_left_out: int = 0
    _patch: str | None = field(default=None, repr=False, compare=False)
    _lines: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False, compare=False)

    def paths(self, *statuses: Status) -> list[str]:
        return [f.path for f in self.files if not statuses or f.status in statuses]

    @property
    def added(self) -> list[str]:
        return self.paths("added")

    @property
    def modified(self) -> list[str]:
        return self.paths("modified")

    @property
    def deleted(self) -> list[str]:
        return self.paths("deleted")

    @property
    def changed(self) -> list[str]:
        """Every path the change touches: added, modified or deleted."""
        return self.paths()

    @property
    def written(self) -> list[str]:
        """Paths whose modified version exists: added or modified (what a grader parses)."""
        return self.paths("added", "modified")

    @property
    def empty(self) -> bool:
        return not self.files

    def file(self, rel: str) -> FileChange | None:
        return next((f for f in self.files if f.path == rel), None)

    # ------------------------------------------------------------------------- reading
    def read_bytes(
        self, rel: str, side: Literal["pristine", "modified"], limit: int | None = None
    ) -> bytes | None:
        """The file's bytes on one side, or None: missing, a symlink (never followed), larger than ``limit``,
        or unreadable. ``rel`` must be a path of the tree (no ``..``)."""
        root = self.pristine_dir if side == "pristine" else self.modified_dir
        if rel.startswith("/") or ".." in rel.split("/"):
            return None
        path = os.path.join(root, rel)
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
                return None
            # a folder on the way may be a link the agent made: refuse anything that resolves outside the tree
            if not os.path.realpath(path).startswith(os.path.realpath(root) + os.sep):
                return None
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    def read(self, rel: str, side: Literal["pristine", "modified"]) -> str | None:
        """The file as UTF-8 text, or None (missing, a symlink, binary or not UTF-8)."""
        data = self.read_bytes(rel, side)
        if data is None or b"\0" in data[:BINARY_PROBE]:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    # ------------------------------------------------------------------------- the patch
    def patch(self, max_chars: int | None = None) -> str:
        """A unified diff (git's layout) of every file of the change; binary, oversized and linked files by
        name. Computed once."""
        if self._patch is None:
            self._patch = "".join(self._file_patch(f) for f in self.files)
        return self._patch if max_chars is None else self._patch[:max_chars]

    def line_counts(self, rel: str) -> tuple[int, int]:
        """(lines added, lines deleted) of one file in the patch."""
        self.patch()
        return self._lines.get(rel, (0, 0))

    def _file_patch(self, f: FileChange) -> str:
        rel = f.path
        head = [f"diff --git {quote_path('a/' + rel)} {quote_path('b/' + rel)}\n"]
        if f.status == "added":
            head.append(f"new file mode {'120000' if f.symlink else '100644'}\n")
        elif f.status == "deleted":
            head.append(f"deleted file mode {'120000' if f.symlink else '100644'}\n")
        old_name = "/dev/null" if f.status == "added" else quote_path(f"a/{rel}")
        new_name = "/dev/null" if f.status == "deleted" else quote_path(f"b/{rel}")
        old: str | None
        new: str | None
        if f.symlink:
            old = "" if f.status == "added" else self._link_text(rel, "pristine")
            new = "" if f.status == "deleted" else self._link_text(rel, "modified")
        elif f.binary:
            return "".join(head) + f"Binary files {old_name} and {new_name} differ\n"
        else:
            old = "" if f.status == "added" else self._text_for_patch(rel, "pristine")
            new = "" if f.status == "deleted" else self._text_for_patch(rel, "modified")
            if old is None or new is None:
                return "".join(head) + f"Binary files {old_name} and {new_name} differ\n"
        import difflib  # only the patch needs it; the rubric never asks for one

        lines = list(
            difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
            )
        )
        out = []
        added = deleted = 0
        for line in lines:
            if not line.endswith("\n"):
                line += "\n\\ No newline at end of file\n"
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                deleted += 1
            out.append(line)
        self._lines[rel] = (added, deleted)
        return "".join(head + out)

    def _link_text(self, rel: str, side: str) -> str:
        root = self.pristine_dir if side == "pristine" else self.modified_dir
        try:
            return os.fsencode(os.readlink(os.path.join(root, rel))).decode("utf-8", "replace")
        except OSError:
            return ""

    def _text_for_patch(self, rel: str, side: Literal["pristine", "modified"]) -> str | None:
        data = self.read_bytes(rel, side, limit=MAX_PATCH_FILE_BYTES)
        if data is None:
            return None
        return data.decode("utf-8", errors="replace")

    # ------------------------------------------------------------------------- the record
    def to_json(self) -> dict[str, Any]:
        """``changes.json``: every file with its status, binary/symlink flags and line counts."""
        files = []
        for f in self.files:
            added, deleted = self.line_counts(f.path)
            files.append(
                {
                    "path": printable(f.path),
                    "status": f.status,
                    "binary": f.binary,
                    "symlink": f.symlink,
                    "added_lines": added,
                    "deleted_lines": deleted,
                }
            )
        return {
            "files": files,
            "skipped": list(self.skipped),
            "over_limit": list(self.over_limit),
            "entries_left_out": self.entries_left_out,
        }


def quote_path(name: str) -> str:
    """A file name as a patch header shows it: as is, or, when it holds a control character, a quote, a
    backslash or bytes that are not UTF-8 (an agent's file names are anything), in double quotes with C
    escapes, as git writes it."""
    raw = os.fsencode(name)
    try:
        raw.decode("utf-8")
        plain = not any(b < 0x20 or b in (0x22, 0x5C, 0x7F) for b in raw)
    except UnicodeDecodeError:
        plain = False
    if plain:
        return name
    escapes = {
        0x07: "\\a",
        0x08: "\\b",
        0x09: "\\t",
        0x0A: "\\n",
        0x0B: "\\v",
        0x0C: "\\f",
        0x0D: "\\r",
        0x22: '\\"',
        0x5C: "\\\\",
    }
    out = []
    for b in raw:
        if b in escapes:
            out.append(escapes[b])
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def compare_trees(pristine: Path | str, modified: Path | str) -> ChangeSet:
    """The change from ``pristine`` to ``modified`` (both app folders; neither is modified)."""
    p_root, m_root = str(pristine), str(modified)
    before, after = walk(p_root), walk(m_root)
    files: list[FileChange] = []
    unchanged: list[str] = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        pa, pb = os.path.join(p_root, rel), os.path.join(m_root, rel)
        if a is None:
            status: Status = "added"
        elif b is None:
            status = "deleted"
        elif same_file(pa, pb, a, b):
            unchanged.append(rel)
            continue
        else:
            status = "modified"
        link = any(s is not None and stat.S_ISLNK(s.st_mode) for s in (a, b))
        binary = not link and (_is_binary(pa, a) or _is_binary(pb, b))
        files.append(FileChange(rel, status, binary=binary, symlink=link))
    return ChangeSet(Path(pristine), Path(modified), files, unchanged, _created_build_dirs(p_root, m_root))
