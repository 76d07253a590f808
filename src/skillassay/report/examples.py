"""The scoring examples of the Evals page: the design document's worked examples, one set, computed from the
shipped eval's criteria by the harness's own ``decide``
(``skillassay.scoring.examples.DOCUMENT_EXAMPLES``)."""

from __future__ import annotations

from skillassay.scoring.examples import DOCUMENT_EXAMPLES, DocumentExample

ScoringExample = DocumentExample


def scoring_examples() -> list[ScoringExample]:
    return list(DOCUMENT_EXAMPLES)
