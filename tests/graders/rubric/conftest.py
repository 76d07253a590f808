from __future__ import annotations

from pathlib import Path

import pytest
from rubric_helpers import App


@pytest.fixture
def make_app(tmp_path: Path):
    def make(pristine: dict[str, str], changes: dict[str, str]) -> App:
        return App(tmp_path, pristine, changes)

    return make
