"""Tree comparison, symlinks, skipped directories, and the unchanged-handler search."""

from __future__ import annotations

import os
from pathlib import Path

from rubric_helpers import write_tree

from skillassay.seam.plan import AnswerKey
from skillassay.workspace.changes import compare_trees


def test_compare_trees(tmp_path: Path):
    pristine = write_tree(
        tmp_path / "a",
        {
            "x.py": "1\n",
            "y.py": "2\n",
            "gone.py": "3\n",
            "node_modules/m/i.js": "a\n",
            "sub/__pycache__/c.pyc": "x",
        },
    )
    modified = write_tree(
        tmp_path / "b",
        {
            "x.py": "1\n",
            "y.py": "22\n",
            "new.ts": "4\n",
            "node_modules/m/i.js": "changed\n",
            "dist/out.js": "built\n",
            ".git/HEAD": "ref\n",
        },
    )
    changes = compare_trees(pristine, modified)
    assert changes.modified == ["y.py"]
    assert changes.added == ["new.ts"]
    assert changes.deleted == ["gone.py"]
    assert changes.unchanged == ["x.py"]


def test_symlinks_are_never_followed(tmp_path: Path, make_app):
    outside = write_tree(
        tmp_path / "outside",
        {
            "secret.ts": """
        import { Seam } from 'seam';
        export async function createReservation() { await new Seam().customers.pushData({}); }
    """,
            "dir/a.ts": "export const a = 1;\n",
        },
    )
    app = make_app({"src/service.ts": "export async function createReservation() {}\n"}, {})
    os.symlink(outside / "secret.ts", app.modified / "src" / "linked.ts")
    os.symlink(outside / "dir", app.modified / "src" / "linkeddir")
    changes = compare_trees(app.pristine, app.modified)
    assert changes.added == ["src/linked.ts", "src/linkeddir"]
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
    )
    result = app.grade(key)
    assert result.categories["api_path_selection"].score == 0.0  # the link's target was not read


def test_unchanged_handler_reaches_a_changed_wrapper(make_app):
    pristine = {
        "src/routes.ts": """
            import { saveReservation } from './store';
            export async function createReservation(req: any) { return saveReservation(req.body); }
        """,
        "src/store.ts": "export async function saveReservation(r: any) { return r; }\n",
    }
    store = """
        import { Seam } from 'seam';
        const seam = new Seam();
        export async function saveReservation(r: any) {
          await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
          return r;
        }
    """
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
    )
    result = make_app(pristine, {"src/store.ts": store}).grade(key)
    placement = result.categories["integration_placement"]
    assert placement.score == 1.0
    assert "createReservation -> saveReservation" in placement.evidence[0].message


def test_async_handler_wrapper_names_the_function(make_app):
    source = """
        import { Seam } from 'seam';
        const seam = new Seam();
        const asyncHandler = (fn: any) => fn;
        export const createReservation = asyncHandler(async (req: any, res: any) => {
          await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
          res.json({});
        });
    """
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
    )
    result = make_app({"src/r.ts": "export {};\n"}, {"src/r.ts": source}).grade(key)
    assert result.categories["integration_placement"].score == 1.0
