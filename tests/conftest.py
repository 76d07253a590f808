from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVALS = REPO / "evals"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def evals_dir() -> Path:
    return EVALS


def pytest_configure(config: pytest.Config) -> None:
    # fixture apps are imported/run from copies; never leave bytecode in the source tree
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
