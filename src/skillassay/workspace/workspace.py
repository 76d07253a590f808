"""The scratch workspace an agent works in, and the change it made.

A fixture's ``app/`` is copied (without the folders of ``workspace.changes``' skip-list) into a fresh folder
that becomes a git repository with one pristine commit, so the agent can use git as in any checkout (and a
kept workspace carries its history). Git is run with a fixed identity and without the user's configuration, so
nothing on the user's machine changes what is recorded. After the agent has worked, ``compute_change``
compares the fixture's app with the workspace (``changes.compare_trees``): what git thinks, and any
``.gitignore`` the agent wrote, play no part.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from skillassay.errors import InfrastructureError
from skillassay.workspace.changes import ChangeSet, compare_trees, copy_ignore
from skillassay.workspace.skiplist import OUTPUT_DIRS, SKIP_DIRS

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
    cmd = [
        "git",
        "-c",
        "core.autocrlf=false",
        "-c",
        "core.quotepath=false",
        "-c",
        "commit.gpgsign=false",
        *args,
    ]
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=not binary)
    except FileNotFoundError as exc:  # pragma: no cover - git is a hard requirement
        raise InfrastructureError("git is not installed; skillassay needs it to track workspaces") from exc
    if check and proc.returncode != 0:
        err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
        raise InfrastructureError(f"git {' '.join(args)} failed in {repo}: {err.strip()}")
    return proc


class Workspace(BaseModel):
    path: Path
    source: Path  # the fixture app it was copied from
    pristine_commit: str

    def compute_change(self) -> ChangeSet:
        """The run's one change: the fixture's app (``source``) against the workspace as the agent left it. An
        agent that deleted its workspace made the change "everything deleted" (its doing: graded, never a
        harness error); the folder is made again, empty, so the graders see what it left: nothing."""
        if not self.path.is_dir():
            if self.path.is_symlink() or self.path.exists():
                self.path.unlink()
            self.path.mkdir(parents=True)
        return compare_trees(self.source, self.path)

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
    shutil.copytree(app_dir, dest, symlinks=True, ignore=copy_ignore(app_dir), dirs_exist_ok=True)
    head = init_pristine(dest, dest)
    return Workspace(path=dest, source=app_dir, pristine_commit=head)


def init_pristine(dest: Path, app_dir: Path) -> str:
    """Make ``dest`` a repository whose one commit is ``app_dir``'s tree (the same commit id for the same app,
    whatever folder holds it); returns the commit id. ``app_dir`` is only read."""
    dest, app_dir = Path(dest), Path(app_dir)
    git(dest, "init", "-q", "-b", "main")
    exclude = dest / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    # the same folders stay out of the agent's `git status` (build output only at the top, as in the change)
    exclude.write_text(
        "".join(f"{d}/\n" for d in sorted(SKIP_DIRS - {".git"}))
        + "".join(f"/{d}/\n" for d in sorted(OUTPUT_DIRS))
    )
    tree = ("--git-dir", str(dest / ".git"), "--work-tree", str(app_dir))
    git(app_dir, *tree, "add", "-A")
    git(app_dir, *tree, "commit", "-q", "--allow-empty", "-m", PRISTINE_MESSAGE)
    return git(dest, "rev-parse", "HEAD").stdout.strip()


def git_contents(repo: Path) -> Iterator[bytes]:
    """Everything a repository folder holds, as stored and as git reads it: each file's path and bytes, then
    every object decompressed (packed and loose, deltas resolved)."""
    repo = Path(repo)
    for path in sorted(repo.rglob("*")):
        yield os.fsencode(path.relative_to(repo))
        if path.is_file() and not path.is_symlink():
            yield path.read_bytes()
    proc = subprocess.run(
        ["git", "--git-dir", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        env={**os.environ, **_GIT_ENV},
        capture_output=True,
    )
    yield proc.stdout


def open_workspace(path: Path) -> Workspace:
    """An existing workspace (e.g. kept from an earlier run, for regrading)."""
    root = git(path, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    return Workspace(path=Path(path), source=Path(path), pristine_commit=root)


def safe_read(root: Path, relpath: str) -> str | None:
    """Read a file of the workspace as text, refusing anything that resolves outside it (a symlink an agent
    made to ``/etc/passwd`` reads as nothing). Returns None for missing, binary or escaping files."""
    root = Path(root).resolve()
    target = root / relpath
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
