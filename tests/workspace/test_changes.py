"""One ChangeSet, one skip-list: what the agent changed is computed once and every layer sees the same files.

Build output at the app's top (build/, dist/...) is out of the change for every layer and never copied; a
folder of the same name deeper down is source like any other; a .gitignore the agent writes hides nothing;
symlinks are part of the change as links and never read through."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.agents.reference import apply_golden
from skillassay.apps.backends.backend import copy_app
from skillassay.apps.deps import tree_snapshot
from skillassay.cli.main import app
from skillassay.graders.base import ProcessContext, copy_workspace
from skillassay.seam.rubric import grade as grade_rubric
from skillassay.workspace import compare_trees, create_workspace
from skillassay.workspace.changes import walk

REPO = Path(__file__).resolve().parents[2]


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


PRISTINE = {"src/app.ts": "export const a = 1;\n", "package.json": "{}\n", "data.db": "seed"}


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    pristine = _write(tmp_path / "app", PRISTINE)
    ws = create_workspace(pristine, tmp_path / "ws")
    _write(
        ws.path,
        {
            "src/app.ts": "export const a = 2;\n",
            "build/out.ts": "export const hidden = 1;\n",  # top-level build output: out of the change
            "dist/index.js": "compiled\n",
            "coverage/lcov.info": "TN:\n",
            # a source folder that happens to be called build
            "src/build/steps.ts": "export const step = 1;\n",
            "node_modules/x/index.js": "dep\n",
            "src/node_modules/y.js": "dep\n",
            "orders.db": "rows",
            "src/__pycache__/m.cpython-311.pyc": "",
            "src/secret.ts": "export const s = 1;\n",
            ".gitignore": "src/secret.ts\n",  # the agent hides a file from git: not from us
        },
    )
    return pristine, ws.path


def test_one_skip_list(trees):
    pristine, modified = trees
    change = compare_trees(pristine, modified)
    assert change.added == [".gitignore", "src/build/steps.ts", "src/secret.ts"]
    assert change.modified == ["src/app.ts"]
    assert change.deleted == []  # the seed database is not the agent's to delete or keep
    assert change.skipped == ["build/", "coverage/", "dist/"]
    patch = change.patch()
    assert "src/secret.ts" in patch and "src/build/steps.ts" in patch
    assert "hidden" not in patch and "compiled" not in patch and "node_modules" not in patch


def test_every_layer_sees_the_same_files(trees, tmp_path: Path):
    pristine, modified = trees
    change = compare_trees(pristine, modified)
    # the workspace's own view, the rubric's and the process graders' are this one change
    from skillassay.workspace.workspace import Workspace

    ws = Workspace(path=modified, source=pristine, pristine_commit="x")
    assert ws.compute_change().files == change.files
    from skillassay.seam.plan import AnswerKey, Rubric, RubricCategory

    result = grade_rubric(
        pristine,
        modified,
        AnswerKey(),
        Rubric([RubricCategory("f", 100, "files_modified_match")]),
        "reservation_automations",
    )
    assert result.changed_files == change.written
    ctx = ProcessContext(
        definition=None,
        pristine_dir=pristine,
        modified_dir=modified,  # type: ignore[arg-type]
        transcript=None,
        work_dir=tmp_path,
    )
    assert ctx.change.files == change.files
    # copies (the sandbox's and the process graders' work copies) hold exactly what can be part of a change,
    # plus the files that are never an edit (the seed database)
    for copy in (lambda d: copy_app(modified, d), lambda d: copy_workspace(modified, d)):
        dest = tmp_path / f"copy{id(copy)}"
        copy(dest)
        assert set(walk(dest)) == set(walk(modified))
        assert not (dest / "build").exists() and (dest / "src" / "build" / "steps.ts").exists()
        assert (dest / "data.db").exists() and not (dest / "node_modules").exists()


def test_reference_agent_and_build_cache_use_the_same_list(tmp_path: Path):
    golden = _write(
        tmp_path / "golden", {"src/app.ts": "2\n", "build/x.js": "out\n", "src/build/y.ts": "y\n"}
    )
    ws = _write(
        tmp_path / "ws", {"src/app.ts": "1\n", "dist/keep.js": "built\n", "node_modules/a/i.js": "dep\n"}
    )
    calls = apply_golden(golden, ws)
    assert sorted(p for c in calls for p in c.paths) == ["src/app.ts", "src/build/y.ts"]
    assert (ws / "dist" / "keep.js").exists() and not (ws / "build").exists()
    # the build cache sees output folders (what a build produces) but never dependencies
    snap = tree_snapshot(ws)
    assert "dist/keep.js" in snap and not any(k.startswith("node_modules") for k in snap)


def test_symlinks_are_links(tmp_path: Path):
    outside = _write(
        tmp_path / "outside", {"secret.txt": "TOP SECRET\n", "dir/a.ts": "export const a = 1;\n"}
    )
    pristine = _write(tmp_path / "a", {"src/x.ts": "1\n"})
    modified = _write(tmp_path / "b", {"src/x.ts": "1\n"})
    os.symlink(outside / "secret.txt", modified / "src" / "leak.ts")
    os.symlink(outside / "dir", modified / "src" / "linked")
    shutil.rmtree(modified / "src")
    os.symlink(outside / "dir", modified / "src")  # the agent swaps a folder for a link
    change = compare_trees(pristine, modified)
    assert change.deleted == ["src/x.ts"] and change.added == ["src"] and change.file("src").symlink
    assert change.read("src/a.ts", "modified") is None  # through a linked folder: refused
    assert "TOP SECRET" not in change.patch() and "export const a" not in change.patch()


def test_binary_and_large_files_by_name(tmp_path: Path):
    pristine = _write(tmp_path / "a", {"big.js": "x\n"})
    modified = _write(tmp_path / "b", {"big.js": "y\n" * 600_000})
    (modified / "img.png").write_bytes(b"\x89PNG\0\0")
    change = compare_trees(pristine, modified)
    assert change.file("img.png").binary and not change.file("big.js").binary
    patch = change.patch()
    assert "Binary files /dev/null and b/img.png differ" in patch
    assert "Binary files a/big.js and b/big.js differ" in patch  # over the patch's size limit: by name
    assert change.to_json()["files"][0] == {
        "path": "big.js",
        "status": "modified",
        "binary": False,
        "symlink": False,
        "added_lines": 0,
        "deleted_lines": 0,
    }


def test_a_run_records_the_change_the_graders_saw(tmp_path: Path):
    """diff.patch, changes.json and rubric.json of one run come from one ChangeSet: a file under the top-level
    build/ is in none of them, one under src/build/ is in all."""
    suite = tmp_path / "evals"
    shutil.copytree(
        REPO / "evals" / "fixtures" / "flask-py",
        suite / "fixtures" / "flask-py",
        ignore=shutil.ignore_patterns("test_controls"),
    )
    shutil.copy(REPO / "evals" / "rubric.json", suite / "rubric.json")
    command = (
        "cd {workspace} && mkdir -p build src/build && echo 'x = 1' > build/hidden.py"
        " && echo 'y = 2' > src/build/seen.py"
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            "command",
            "--command",
            f'sh -c "{command}"',
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "results"),
            "--json",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    [run] = json.loads(result.stdout)["runs"]
    run_dir = tmp_path / "results" / run["run_dir"]
    changes = json.loads((run_dir / "changes.json").read_text())
    rubric = json.loads((run_dir / "rubric.json").read_text())
    patch = (run_dir / "diff.patch").read_text()
    assert [f["path"] for f in changes["files"]] == ["src/build/seen.py"] == rubric["changed_files"]
    assert changes["skipped"] == ["build/"]
    assert "src/build/seen.py" in patch and "hidden" not in patch
    assert run["files_changed"] == 1
