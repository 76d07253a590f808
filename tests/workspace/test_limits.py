"""The size limit: the run's one bounded copy of the workspace (workspace/bounded_copy.py). One huge file,
many medium files, a huge binary replacing a file, a sparse file, a file still growing while it is copied,
a fifo, the agent's repository; and the logs of a run folder cut to their first and last bytes."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillassay.store.files import cap_logs
from skillassay.workspace import compare_trees, create_workspace
from skillassay.workspace.bounded_copy import HASH_LIMIT, snapshot
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
    """A writer that outlived the agent keeps appending while the copy is made: the copy takes the size the
    file had when it was looked at, so it ends, and says so."""
    from skillassay.workspace import bounded_copy as limits

    grow = ws.path / "grow.log"
    grow.write_bytes(b"x" * 200_000)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys\nf = open(sys.argv[1], 'ab', buffering=0)\nwhile True:\n    f.write(b'y' * "
                "65536)\n"
            ),
            str(grow),
        ]
    )
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


def test_a_flood_of_files_keeps_the_first_max_entries_and_counts_the_rest(ws, tmp_path: Path) -> None:
    """200,000 empty files made every later step cost hours: beyond ``max_entries`` new or changed entries (in
    the walk's order) a new one is absent with all under it, a changed file is as it was, and the rest are
    counted."""
    (ws.path / "flood").mkdir()
    for i in range(50):
        (ws.path / "flood" / f"f{i:02}").touch()
    (ws.path / "logo.png").write_bytes(b"new logo")  # changed, within the limit
    (ws.path / "src" / "main.py").write_text("print('changed too late')\n")  # changed, beyond it
    (ws.path / "src" / "zdir" / "deeper").mkdir(parents=True)  # a new folder beyond it: its subtree goes too
    (ws.path / "src" / "zdir" / "deeper" / "deep.txt").write_text("x\n")
    # walk order: flood/ (1), logo.png (2), flood/f00 (3), flood/f01 (4), then the rest is left out
    report = snapshot(ws.path, ws.source, tmp_path / "copy", max_entries=4)
    copy = tmp_path / "copy"
    assert report.max_entries == 4 and report.exceeded
    assert report.entries_left_out == 48 + 4  # flood/f02..f49, src/zdir, its folder and file, src/main.py
    assert report.entries_left_out_sample == [f"flood/f{i:02}" for i in range(2, 22)]
    assert sorted(p.name for p in (copy / "flood").iterdir()) == ["f00", "f01"]
    assert not (copy / "src" / "zdir").exists()
    assert (copy / "src" / "main.py").read_text() == "print('hi')\n"  # as the app had it
    change = compare_trees(ws.source, copy)
    assert change.added == ["flood/f00", "flood/f01"] and change.modified == ["logo.png"]
    assert report.change_bytes == report.kept_bytes == len(b"new logo") and not report.over_limit
    again = snapshot(ws.path, ws.source, tmp_path / "again", max_entries=4)
    # the same run keeps the same files
    assert again.entries_left_out_sample == report.entries_left_out_sample
    within = snapshot(ws.path, ws.source, tmp_path / "within", max_entries=100)
    assert within.entries_left_out == 0 and not within.exceeded
    assert len(compare_trees(ws.source, tmp_path / "within").added) == 50 + 1  # the flood and deep.txt


def test_past_the_count_a_file_where_the_app_had_a_link_or_a_folder_is_never_copied(
    ws, tmp_path: Path
) -> None:
    """Left out by count, a file is not measured against the size limit: it must never reach the copy."""
    os.symlink("main.py", ws.source / "src" / "alias.py")
    (ws.source / "src" / "pkg").mkdir()
    (ws.source / "src" / "pkg" / "mod.py").write_text("y = 1\n")
    ws = create_workspace(ws.source, tmp_path / "ws2")
    (ws.path / "new").touch()
    (ws.path / "src" / "alias.py").unlink()
    (ws.path / "src" / "alias.py").write_bytes(os.urandom(2 * MB))
    shutil.rmtree(ws.path / "src" / "pkg")
    (ws.path / "src" / "pkg").write_bytes(os.urandom(2 * MB))
    report = snapshot(ws.path, ws.source, tmp_path / "copy", limit=1 * MB, max_entries=1)
    copy = tmp_path / "copy"
    assert report.entries_left_out == 2 and not report.over_limit and _sizes(copy) < MB
    assert os.readlink(copy / "src" / "alias.py") == "main.py"  # the link, as the app had it
    assert not (copy / "src" / "pkg").exists()


def test_fifos_beyond_a_hundred_are_counted_not_named(ws, tmp_path: Path) -> None:
    for i in range(105):
        os.mkfifo(ws.path / f"pipe{i:03}")
    report = snapshot(ws.path, ws.source, tmp_path / "copy")
    assert len(report.special) == 100 and report.special_more == 5 and report.special[0] == "pipe000"
