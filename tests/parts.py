"""Parts of the machine that tests need, and the rule for when one is missing.

In CI (``CI=true``) nothing may hide: a test that needs a missing part fails, and any skip or xfail fails the
session (tests/conftest.py). Outside CI a missing part skips, with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
CHROMIUM = Path("/usr/bin/chromium")


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """Mark a test that needs a part of the machine (a pinned CLI, strace, Chromium, node, bubblewrap, ...).

    Missing: skipped outside CI, failed in CI, so a set-up script that forgot an install step cannot pass by
    skipping the very tests that would have caught it."""
    return pytest.mark.needs(available, what)


def has(binary: str) -> bool:
    return shutil.which(binary) is not None


def pinned_node_version(package: str) -> str:
    """The version node/package.json pins for ``package`` (the CLIs the tests must find)."""
    return json.loads((REPO / "node" / "package.json").read_text())["dependencies"][package]
