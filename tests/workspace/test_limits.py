"""The size limit: the run's one bounded copy of the workspace (workspace/limits.py). One huge file, many medium
files, a huge binary replacing a file, a sparse file, a file still growing while it is copied, a fifo, the agent's
repository; and the logs of a run folder cut to their first and last bytes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillassay.store.files import cap_logs
from skillassay.workspace import compare_trees, create_workspace
from skillassay.workspace.limits import HASH_LIMIT, snapshot
from skillassay.workspace.workspace import git

MB = 1_000_000


@pytest.fixture
def ws(tmp_path: Path):
    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "main.py").write_text("print('hi')\n")
    (app / "logo.png").write_bytes(b"\x89PNG\0" + b"x" * 100)
    return create_workspace(app, tmp_path / "ws")


def _sizes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def test_one_huge_file_is_left_out_listed_with_its_hash(ws, tmp_path: Path) -> None:
    data = os.urandom(3 * MB)
    (ws.path / "huge.bin").write_bytes(data)
    (ws.path / "src" / "main.py").write_text("print('changed')\n")
    report = snapshot(ws.path, ws.source, tmp_path / "copy", limit=1 * MB)
    [big] = report.over_limit
    assert (big.path, big.status, big.size) == ("huge.bin", "added", 3 * MB)
    assert big.sha256 == "sha256:" + hashlib.sha256(data).hexdigest()
    assert report.change_bytes == 3 * MB + len("print('changed')\n") and report.kept_bytes < 100
    change = compare_trees(ws.source, tmp_path / "copy")
    assert change.changed == ["src/main.py"]  # graded on the rest
    assert not (tmp_path / "copy" / "huge.bin").exists() and not (tmp_path / "copy" / ".git").exists()


def test_many_medium_files_keep_what_fits_the_same_way_every_time(ws, tmp_path: Path) -> None:
    for i in range(30):
        (ws.path / "data").mkdir(exist_ok=True)
        (ws.path / "data" / f"part-{i:02}.txt").write_text(f"{i}" * 100_000)
    report = snapshot(ws.path, ws.source, tmp_path / "a", limit=1 * MB)
    again = snapshot(ws.path, ws.source, tmp_path / "b", limit=1 * MB)
    assert report.kept_bytes <= 1 * MB and len(report.over_limit) == 20
    assert [o.path for o in report.over_limit] == [o.path for o in again.over_limit]
    assert len(list((tmp_path / "a" / "data").iterdir())) == 10


def test_a_huge_binary_replacing_a_file_is_graded_as_the_file_was(ws, tmp_path: Path) -> None:
    (ws.path / "logo.png").write_bytes(b"\0" + os.urandom(2 * MB))
    report = snapshot(ws.path, ws.source, tmp_path / "copy", limit=1 * MB)
    assert [(o.path, o.status) for o in report.over_limit] == [("logo.png", "modified")]
    assert (tmp_path / "copy" / "logo.png").read_bytes() == (ws.source / "logo.png").read_bytes()
    assert compare_trees(ws.source, tmp_path / "copy").empty


def test_a_sparse_file_counts_as_what_reading_it_gives_and_is_not_read(ws, tmp_path: Path) -> None:
    with open(ws.path / "sparse.img", "wb") as f:
        f.truncate(10 * 1024**3)  # 10 GiB that take no room on disk
    report = snapshot(ws.path, ws.source, tmp_path / "copy")
    [big] = report.over_limit  # never read: not copied, not hashed
    assert big.size == 10 * 1024**3 and big.allocated < MB and big.sha256 is None and big.size > HASH_LIMIT
    assert _sizes(tmp_path / "copy") < MB


def test_a_file_still_growing_is_kept_as_it_was_first_seen(ws, tmp_path: Path, monkeypatch) -> None:
    """A writer that outlived the agent keeps appending while the copy is made: the copy takes the size the file had
    when it was looked at, so it ends, and says so."""
    from skillassay.workspace import limits

    grow = ws.path / "grow.log"
    grow.write_bytes(b"x" * 200_000)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys\nf = open(sys.argv[1], 'ab', buffering=0)\nwhile True:\n    f.write(b'y' * 65536)\n"),
        str(grow)])
    copy = limits._copy_bounded

    def copy_after_more_was_written(src, dst, info):
        if src.name == "grow.log":  # the writer surely wrote after the file was looked at
            start = src.stat().st_size
            while src.stat().st_size < start + 1_000_000:
                time.sleep(0.01)
        return copy(src, dst, info)

    monkeypatch.setattr(limits, "_copy_bounded", copy_after_more_was_written)
    try:
        while grow.stat().st_size < 2 * MB:
            time.sleep(0.01)
        report = snapshot(ws.path, ws.source, tmp_path / "copy", limit=50 * MB)
    finally:
        writer.kill()
        writer.wait()
    copied = (tmp_path / "copy" / "grow.log").stat().st_size
    assert report.grew == ["grow.log"]
    assert copied == report.kept_bytes < grow.stat().st_size - 1_000_000


def test_fifos_links_build_folders_and_the_agents_repository(ws, tmp_path: Path) -> None:
    os.mkfifo(ws.path / "pipe")  # opening it to read would block forever
    os.symlink("/etc/passwd", ws.path / "link")
    (ws.path / "dist").mkdir()
    (ws.path / "dist" / "bundle.js").write_text("x" * 5 * MB)  # build output: neither copied nor counted
    (ws.path / "secret.txt").write_text("in history only\n")
    git(ws.path, "add", "-A")
    git(ws.path, "commit", "-qm", "agent commit")
    report = snapshot(ws.path, ws.source, tmp_path / "copy", limit=1 * MB)
    copy = tmp_path / "copy"
    assert report.special == ["pipe"] and not (copy / "pipe").exists()
    assert os.readlink(copy / "link") == "/etc/passwd"
    assert (copy / "dist").is_dir() and not any((copy / "dist").iterdir())
    assert compare_trees(ws.source, copy).skipped == ["dist/"]
    assert not report.over_limit and not (copy / ".git").exists()


def test_cap_logs_keeps_the_head_and_the_tail(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "big.txt").write_bytes(b"w" * 5000)  # the kept workspace is not a log
    (tmp_path / "agent.stdout.log").write_bytes(b"HEAD" + b"." * 10_000 + b"TAIL")
    (tmp_path / "small.log").write_bytes(b"ok")
    assert cap_logs(tmp_path, limit=1000) == ["agent.stdout.log"]
    data = (tmp_path / "agent.stdout.log").read_bytes()
    assert data.startswith(b"HEAD") and data.endswith(b"TAIL") and b"9008 bytes left out" in data
    assert len(data) < 1200 and (tmp_path / "workspace" / "big.txt").stat().st_size == 5000
