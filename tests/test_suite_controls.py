"""The shipped suite, as CI checks it: every definition valid, and every golden solution and negative control
scores what is expected of it (`skillassay check evals --controls`, both layers, on the embedded emulator)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app

pytestmark = pytest.mark.slow


def test_check_controls_on_the_shipped_suite(evals_dir: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(evals_dir), "--controls"], terminal_width=240)
    assert result.exit_code == 0, result.output
    out = result.output
    stacks = ("express-ts", "flask-py", "nextjs-ts", "fastapi-py")
    for eval_id in (*stacks, *(f"{p}-{s}" for p in ("hotel", "cowork") for s in stacks), "cancellation-support"):
        assert eval_id[:16] in out  # the table may cut long ids
    assert "✗" not in out
    assert out.count("✓") >= 12 * 4 + 6  # 12 Seam fixtures x (golden, pristine, 2 controls) + the agent eval's 6
