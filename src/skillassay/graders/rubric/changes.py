"""Which files the agent changed: a comparison of the pristine and the modified tree.

A file is unchanged when its size and modification time (ns) match the pristine one, as for a workspace copied
with its times kept; otherwise the bytes are compared. So the cost is one lstat per file plus reading the files
whose times differ.

Directories that hold installed or generated files are skipped; symbolic links are compared as links (their
target text) and never followed, so nothing outside the two trees is read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

SKIPPED_DIRS = frozenset(
    {"node_modules", "dist", "build", "__pycache__", ".venv", "venv", ".git", ".pytest_cache", ".mypy_cache",
     ".ruff_cache", ".next", "coverage", ".turbo"}
)


@dataclass
class TreeChanges:
    modified: list[str] = field(default_factory=list)  # in both trees, content differs
    added: list[str] = field(default_factory=list)  # only in the modified tree
    deleted: list[str] = field(default_factory=list)  # only in the pristine tree
    unchanged: list[str] = field(default_factory=list)  # in both, identical

    @property
    def changed(self) -> list[str]:
        """Files whose modified version is worth parsing: modified or added."""
        return sorted(self.modified + self.added)


def list_files(root: Path) -> dict[str, os.stat_result]:
    """Relative POSIX path -> lstat for every regular file or symlink under ``root`` (skipped dirs left out)."""
    out: dict[str, os.stat_result] = {}
    root_str = str(root)
    for dirpath, dirnames, filenames in os.walk(root_str, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root_str)
        # os.walk lists a symlink to a directory among dirnames and (followlinks=False) never enters it:
        # record the link itself, compared by its target text
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if d not in SKIPPED_DIRS and os.path.islink(full):
                out[d if rel_dir == "." else f"{rel_dir}/{d}".replace(os.sep, "/")] = os.lstat(full)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in filenames:
            full = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            out[rel] = os.lstat(full)
    return out


def _same(a: str, b: str, sa: os.stat_result, sb: os.stat_result) -> bool:
    a_link, b_link = stat.S_ISLNK(sa.st_mode), stat.S_ISLNK(sb.st_mode)
    if a_link or b_link:
        return a_link and b_link and os.readlink(a) == os.readlink(b)
    if sa.st_size != sb.st_size:
        return False
    if sa.st_mtime_ns == sb.st_mtime_ns:
        return True  # same size and modification time: a copied, untouched file (rsync's and make's rule)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca, cb = fa.read(1 << 16), fb.read(1 << 16)
            if ca != cb:
                return False
            if not ca:
                return True


def compare_trees(pristine: Path, modified: Path) -> TreeChanges:
    before, after = list_files(pristine), list_files(modified)
    changes = TreeChanges()
    p_root, m_root = str(pristine), str(modified)
    for rel in sorted(after):
        if rel not in before:
            changes.added.append(rel)
        elif not _same(os.path.join(p_root, rel), os.path.join(m_root, rel), before[rel], after[rel]):
            changes.modified.append(rel)
        else:
            changes.unchanged.append(rel)
    changes.deleted = sorted(set(before) - set(after))
    return changes


# Larger files are bundles or generated code, not an agent's edit: not parsed.
MAX_SOURCE_BYTES = 2_000_000


def read_source(root: Path, rel: str) -> bytes | None:
    """The file's bytes, or None for a symlink (never followed), an oversized or an unreadable file."""
    path = root / rel
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None
