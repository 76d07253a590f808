"""The scratch workspace an agent works in, and the change it made.

A fixture's ``app/`` is copied (without dependency or build folders) into a fresh folder that becomes a git repository
with one pristine commit. Git is run with a fixed identity and without the user's configuration, so nothing on the
user's machine changes what is recorded. After the agent has worked, ``compute_change`` stages everything and reads
the change from git: added, modified and deleted files, binary files flagged, and the patch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillassay.errors import InfrastructureError

# Never copied into a workspace, never part of a change: dependencies, build output, caches.
EXCLUDED_DIRS = ("node_modules", "dist", "__pycache__", ".venv", ".git", ".pytest_cache", ".mypy_cache")
PRISTINE_MESSAGE = "pristine"

_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "skillassay",
    "GIT_AUTHOR_EMAIL": "skillassay@localhost",
    "GIT_COMMITTER_NAME": "skillassay",
    "GIT_COMMITTER_EMAIL": "skillassay@localhost",
    # a fixed date makes the pristine commit id the same for the same fixture
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(repo: Path, *args: str, check: bool = True, binary: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, **_GIT_ENV}
    cmd = ["git", "-c", "core.autocrlf=false", "-c", "core.quotepath=false", "-c", "commit.gpgsign=false", *args]
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=not binary)
    except FileNotFoundError as exc:  # pragma: no cover - git is a hard requirement
        raise InfrastructureError("git is not installed; skillassay needs it to track workspaces") from exc
    if check and proc.returncode != 0:
        err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
        raise InfrastructureError(f"git {' '.join(args)} failed in {repo}: {err.strip()}")
    return proc


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in EXCLUDED_DIRS}


class FileChange(BaseModel):
    path: str
    status: Literal["added", "modified", "deleted"]
    binary: bool = False
    added_lines: int = 0
    deleted_lines: int = 0


class Change(BaseModel):
    files: list[FileChange] = Field(default_factory=list)
    patch: str = ""

    @property
    def empty(self) -> bool:
        return not self.files

    def paths(self, *statuses: str) -> list[str]:
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


class Workspace(BaseModel):
    path: Path
    source: Path  # the fixture app it was copied from
    pristine_commit: str

    def compute_change(self) -> Change:
        return compute_change(self.path)

    def read_text(self, relpath: str) -> str | None:
        return safe_read(self.path, relpath)


def create_workspace(app_dir: Path, dest: Path) -> Workspace:
    """Copy ``app_dir`` to ``dest`` (which must not exist or be empty) and commit it as the pristine state."""
    app_dir = Path(app_dir)
    dest = Path(dest)
    if not app_dir.is_dir():
        raise InfrastructureError(f"fixture app folder not found: {app_dir}")
    if dest.exists() and any(dest.iterdir()):
        raise InfrastructureError(f"workspace folder is not empty: {dest}")
    # symlinks=True copies links as links: a fixture never points the copy back into itself or elsewhere
    shutil.copytree(app_dir, dest, symlinks=True, ignore=_ignore, dirs_exist_ok=True)
    git(dest, "init", "-q", "-b", "main")
    exclude = dest / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("".join(f"{d}/\n" for d in EXCLUDED_DIRS if d != ".git"))
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", PRISTINE_MESSAGE)
    head = git(dest, "rev-parse", "HEAD").stdout.strip()
    return Workspace(path=dest, source=app_dir, pristine_commit=head)


def open_workspace(path: Path) -> Workspace:
    """An existing workspace (e.g. kept from an earlier run, for regrading)."""
    root = git(path, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    return Workspace(path=Path(path), source=Path(path), pristine_commit=root)


def compute_change(path: Path) -> Change:
    """Everything that differs from the pristine commit, including untracked files (but not excluded folders).

    Staging with ``git add -A`` records symlinks as links, so a link an agent made to a file outside the workspace is
    reported as a link, never followed."""
    path = Path(path)
    root = git(path, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    git(path, "add", "-A")
    status = git(path, "diff", "--cached", "--name-status", "-z", "--no-renames", root).stdout
    numstat = git(path, "diff", "--cached", "--numstat", "-z", "--no-renames", root).stdout
    patch = git(path, "diff", "--cached", "--binary", "--no-renames", root, binary=True).stdout
    counts: dict[str, tuple[str, str]] = {}
    for entry in numstat.split("\0"):
        if not entry:
            continue
        added, deleted, name = entry.split("\t", 2)
        counts[name] = (added, deleted)
    files: list[FileChange] = []
    parts = [p for p in status.split("\0") if p]
    kinds = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}
    for code, name in zip(parts[::2], parts[1::2]):
        added, deleted = counts.get(name, ("0", "0"))
        binary = added == "-" and deleted == "-"
        files.append(
            FileChange(
                path=name,
                status=kinds.get(code[0], "modified"),  # type: ignore[arg-type]
                binary=binary,
                added_lines=0 if binary else int(added),
                deleted_lines=0 if binary else int(deleted),
            )
        )
    files.sort(key=lambda f: f.path)
    return Change(files=files, patch=patch.decode("utf-8", errors="replace"))


def safe_read(root: Path, relpath: str) -> str | None:
    """Read a file of the workspace as text, refusing anything that resolves outside it (a symlink an agent made to
    ``/etc/passwd`` reads as nothing). Returns None for missing, binary or escaping files."""
    root = Path(root).resolve()
    target = (root / relpath)
    try:
        resolved = target.resolve(strict=True)
    except (FileNotFoundError, RuntimeError, OSError):
        return None
    if not resolved.is_relative_to(root) or not resolved.is_file():
        return None
    data = resolved.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
