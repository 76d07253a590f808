"""The shipped suite, as CI checks it: every definition valid, and every golden solution and negative control
scores what is expected of it (`skillassay check evals --controls`, both layers, on the embedded emulator), on
a new user's machine: the home under /tmp and new (every app runs its own environment, wherever the cache
lies), skillassay's cache the test session's own (``SKILLASSAY_CACHE_DIR`` as the suite runs: in CI a folder
empty when the run starts, so each install and build here runs once in the run, sealed, reaching the eval's
registries, shared with whichever other test needs the same tree; tests/test_first_run.py keeps a cache of its
own, empty, for the README's first run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_home import HOME_VARIABLES, fresh_home
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.definitions import load_suite
from skillassay.paths import cache_dir

# every app installed and built (from nothing in a CI run, for each tree no other test built first): longer
# than the suite's default limit
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3000),
    pytest.mark.long(reason="every golden and control of the shipped suite built and graded, empty cache"),
]


def test_check_controls_on_the_shipped_suite(evals_dir: Path) -> None:
    # --jobs 3: evals graded at once (their sandbox waits overlap); the table keeps the suite's order
    session_cache = str(cache_dir())  # the run's, read before the new home hides it
    with fresh_home() as env:
        result = CliRunner().invoke(
            app,
            ["check", str(evals_dir), "--controls", "--jobs", "3"],
            terminal_width=240,
            env={**env, **dict.fromkeys(HOME_VARIABLES), "SKILLASSAY_CACHE_DIR": session_cache},
        )
    assert result.exit_code == 0, result.output
    out = result.output
    stacks = ("express-ts", "flask-py", "nextjs-ts", "fastapi-py")
    for eval_id in (
        *stacks,
        *(f"{p}-{s}" for p in ("hotel", "cowork") for s in stacks),
        "cancellation-support",
    ):
        assert eval_id[:16] in out  # the table may cut long ids
    assert "✗" not in out
    # 12 Seam fixtures x (golden, pristine, 2 controls) + the agent eval's 6
    assert out.count("✓") >= 12 * 4 + 6
    table = out[out.index("Golden solutions and negative controls") :]
    rows = [line.split("│") for line in table.splitlines() if line.startswith("│")]
    width = max(len(cells[1].strip()) for cells in rows)  # the eval column folds long ids at its width
    ids = [d.id[:width] for d in load_suite(evals_dir)]
    firsts = [cells[1].strip() for cells in rows if cells[1].strip() in ids]  # not the folded tails
    shown = [name for i, name in enumerate(firsts) if i == 0 or name != firsts[i - 1]]
    assert shown == ids  # the suite's order, not the order graded
