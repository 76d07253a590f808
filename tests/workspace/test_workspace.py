"""The scratch workspace: a clean copy, one pristine commit, and the change an agent made (its ChangeSet)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from skillassay.workspace import create_workspace, safe_read


@pytest.fixture()
def app(tmp_path: Path) -> Path:
    src = tmp_path / "fixture" / "app"
    (src / "src").mkdir(parents=True)
    (src / "src" / "index.ts").write_text("export const a = 1;\n")
    (src / "src" / "old.ts").write_text("export const old = 1;\n")
    (src / "package.json").write_text('{"name": "x"}\n')
    for junk in ("node_modules/dep", "dist", "build", "__pycache__", ".venv/bin", ".git"):
        (src / junk).mkdir(parents=True)
        (src / junk / "f").write_text("junk")
    return src


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_copy_leaves_out_dependencies_and_build_output(app: Path, tmp_path: Path) -> None:
    ws = create_workspace(app, tmp_path / "ws")
    names = {p.name for p in ws.path.iterdir()}
    assert names == {"src", "package.json", ".git"}
    log = subprocess.run(["git", "log", "--format=%an <%ae>|%s"], cwd=ws.path, capture_output=True, text=True)
    assert log.stdout.strip().splitlines() == ["skillassay <skillassay@localhost>|pristine"]


def test_pristine_commit_does_not_depend_on_user_git_config(app: Path, tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Someone Else\n[commit]\n\tgpgsign = true\n")
    monkeypatch.setenv("HOME", str(home))
    a = create_workspace(app, tmp_path / "a")
    b = create_workspace(app, tmp_path / "b")
    assert a.pristine_commit == b.pristine_commit  # fixed identity and date: same content, same commit


def test_fixture_is_never_modified(app: Path, tmp_path: Path) -> None:
    before = _tree(app)
    ws = create_workspace(app, tmp_path / "ws")
    (ws.path / "src" / "index.ts").write_text("changed\n")
    ws.compute_change().patch()
    assert _tree(app) == before


def test_change_lists_added_modified_deleted_and_binary(app: Path, tmp_path: Path) -> None:
    ws = create_workspace(app, tmp_path / "ws")
    (ws.path / "src" / "index.ts").write_text("export const a = 2;\nexport const b = 3;\n")
    (ws.path / "src" / "old.ts").unlink()
    (ws.path / "src" / "seam.ts").write_text("import { Seam } from 'seam';\n")
    (ws.path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (ws.path / "node_modules").mkdir()
    (ws.path / "node_modules" / "seam.js").write_text("ignored")
    change = ws.compute_change()
    assert change.added == ["logo.png", "src/seam.ts"]
    assert change.modified == ["src/index.ts"]
    assert change.deleted == ["src/old.ts"]
    assert change.file("logo.png").binary and change.line_counts("logo.png") == (0, 0)
    assert change.line_counts("src/index.ts") == (2, 1)
    patch = change.patch()
    assert "+export const b = 3;" in patch and "Binary files /dev/null and b/logo.png differ" in patch
    assert "node_modules" not in patch


def test_no_change_is_empty(app: Path, tmp_path: Path) -> None:
    ws = create_workspace(app, tmp_path / "ws")
    change = ws.compute_change()
    assert change.empty and change.patch() == ""


def test_symlink_out_of_workspace_is_not_followed(app: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    ws = create_workspace(app, tmp_path / "ws")
    os.symlink(secret, ws.path / "src" / "leak.ts")
    change = ws.compute_change()
    assert "src/leak.ts" in change.added
    assert change.file("src/leak.ts").symlink
    assert "TOP SECRET" not in change.patch()  # recorded as a link, not its target's content
    assert f"+{secret}" in change.patch() and change.read("src/leak.ts", "modified") is None
    assert safe_read(ws.path, "src/leak.ts") is None
    assert safe_read(ws.path, "../secret.txt") is None
    assert safe_read(ws.path, "src/index.ts") == "export const a = 1;\n"


def test_refuses_non_empty_destination(app: Path, tmp_path: Path) -> None:
    dest = tmp_path / "ws"
    dest.mkdir()
    (dest / "x").write_text("x")
    from skillassay.errors import InfrastructureError

    with pytest.raises(InfrastructureError, match="not empty"):
        create_workspace(app, dest)
