"""Names one part declares and another keeps a table of: each pair is held equal here, so that editing one
alone fails (the plan's rubric checks and the rubric's registry, the plan's API paths and their signature
calls, the mutant classes and the table of docs/mutants.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillassay.orchestrator.mutants.classes import AGENT_CLASSES, SEAM_CLASSES
from skillassay.seam.config import API_PATHS
from skillassay.seam.plan import RUBRIC_CHECKS
from skillassay.seam.rubric import checks

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_check_the_plan_names_is_registered_and_no_other():
    assert sorted(checks.CHECKS) == sorted(RUBRIC_CHECKS)


def test_a_check_the_plan_does_not_name_is_refused_at_registration():
    with pytest.raises(ValueError, match="not one of the plan's RUBRIC_CHECKS"):
        checks.check("api_path_matches")
    assert "api_path_matches" not in checks.CHECKS


def test_every_api_path_has_its_signature_call_and_aliases_name_paths():
    assert sorted(checks.PATH_SIGNATURES) == sorted(API_PATHS)
    assert set(checks.PATH_ALIASES.values()) <= set(API_PATHS)
    assert all(checks.canonical_path(alias) == path for alias, path in checks.PATH_ALIASES.items())


def _documented_classes() -> dict[str, list[str]]:
    """docs/mutants.md's tables: class id -> the expectation columns (the first word of each after the
    description)."""
    rows = {}
    for line in (DOCS / "mutants.md").read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| `(\w+)` \|(.*)\|\s*$", line)
        if found:
            cells = [c.strip() for c in found.group(2).split("|")]
            rows[found.group(1)] = [c.split()[0] for c in cells[1:]]
    return rows


def test_the_mutant_classes_are_the_table_of_the_docs():
    documented = _documented_classes()
    assert sorted(documented) == sorted(c.id for c in (*SEAM_CLASSES, *AGENT_CLASSES))
    for c in SEAM_CLASSES:
        assert documented[c.id] == [c.expect.get("rubric", "any"), c.expect.get("sandbox", "any")], c.id
    for c in AGENT_CLASSES:
        assert documented[c.id][-1] == c.expect.get("process", "any"), c.id
