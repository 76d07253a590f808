from __future__ import annotations

import pytest
from process_helpers import make_definition, write_tree

from skillassay.definitions.models import EvalDefinition
from skillassay.graders.base import ProcessContext
from skillassay.transcripts import Transcript


@pytest.fixture
def make_ctx(tmp_path):
    """make_ctx(pristine_files, modified_files, transcript=None, definition=None) -> ProcessContext"""

    def make(
        pristine: dict[str, str],
        modified: dict[str, str],
        transcript: Transcript | None = None,
        definition: EvalDefinition | None = None,
    ) -> ProcessContext:
        root = tmp_path / f"ctx{len(list(tmp_path.glob('ctx*')))}"
        p = write_tree(root / "pristine", pristine)
        m = write_tree(root / "modified", modified)
        return ProcessContext(
            definition=definition or make_definition(root),
            pristine_dir=p,
            modified_dir=m,
            transcript=transcript,
            work_dir=root / "work",
        )

    return make
