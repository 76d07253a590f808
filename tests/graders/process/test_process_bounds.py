"""Issue 23, item 2 (no abstention), the graders' side: what the agent leaves in its workspace cannot make a
grader or detector fail as the harness (an unscored run, rerun by --resume: a free reroll). A step the change
makes unmeasurable is the agent's failure, with the reason (a criterion earns 0, a forbidden behaviour counts
as detected), once the same step is seen to work on the pristine app; what fails there too, or raises what no
content can provoke, stays the harness's."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import make_definition, write_tree

from skillassay.graders import engine, evaluate
from skillassay.graders.base import Detection, GradeResult, Unmeasurable
from skillassay.languages import bounds, pyparse

APP = {
    "orders/service.py": "class OrderService:\n    def pay(self, order):\n        return order\n",
    "orders/models.py": "STATUSES = ['pending', 'paid']\n",
}
WIDE = "X = " + " + ".join(["1"] * 100_000) + "\n"  # the parser itself overflows: RecursionError
SIGNS = "X = " + "-" * 100_000 + "1\n"  # the parser runs out of memory: MemoryError
DEEP_IN_EXISTING = APP["orders/service.py"].replace(
    "        return order\n", "        return order + " + " + ".join(["1"] * 2500) + "\n"
)
DEFINITION = {
    "criteria": [
        {
            "id": "scope",
            "description": "d",
            "weight": 1,
            "grader": "diff",
            "options": {"scope": ["orders/**"], "preserve_functions": True},
        }
    ],
    "forbidden": [
        {
            "id": "db",
            "description": "d",
            "detector": "database_writes",
            "options": {"owners": ["orders/service.py"]},
        },
        {
            "id": "parallel",
            "description": "d",
            "detector": "parallel_service",
            "options": {"owning_module": "orders/service.py", "operation": "(?i)cancel"},
        },
    ],
}


def _evaluate(tmp_path: Path, modified: dict[str, str], **definition):
    d = make_definition(tmp_path, **(definition or DEFINITION))
    return evaluate(
        d,
        write_tree(tmp_path / "p", APP),
        write_tree(tmp_path / "m", {**APP, **modified}),
        None,
        tmp_path / "work",
    )


@pytest.mark.parametrize(
    ("source", "why"),
    [(WIDE, "RecursionError"), (SIGNS, "MemoryError")],
    ids=["100,000-term expression", "100,000 signs"],
)
def test_a_file_no_parser_takes_is_detected_not_a_harness_error(
    tmp_path: Path, source: str, why: str
) -> None:
    """The detectors behind `writes_database_directly` and `adds_parallel_service` raised, and the run was a
    harness error; now what cannot be read cannot be cleared: both behaviours count as detected, the file
    named."""
    r = _evaluate(tmp_path, {"orders/cancel.py": source})
    assert r.failures == []
    assert r.forbidden_observed == ["db", "parallel"] and r.verdict.passed is False
    for found in r.forbidden:
        [evidence] = found.evidence
        assert evidence.startswith("unmeasurable because of the change: orders/cancel.py: ")
        assert why in evidence


def test_a_tree_too_deep_for_the_graders_readers_earns_nothing(tmp_path: Path) -> None:
    """A 2,500-term expression in an existing function parses, but `ast.dump` (is the function unchanged?)
    overflowed: a harness error. Now the tree's depth is bounded where it is parsed: the criterion earns 0,
    with the reason."""
    r = _evaluate(tmp_path, {"orders/service.py": DEEP_IN_EXISTING})
    assert r.failures == []
    [scope] = r.criteria
    assert scope.fraction == 0.0
    assert scope.evidence == [
        (
            "unmeasurable because of the change: orders/service.py: its syntax tree nests "
            f"more than {bounds.MAX_DEPTH} levels deep (the parsers' bound)"
        )
    ]


def test_a_plugin_detector_that_says_unmeasurable_is_checked_on_the_pristine_app(
    tmp_path: Path, monkeypatch
) -> None:
    """A plug-in's own Unmeasurable goes through the same rule: believed when the pristine app measures."""

    def detect(behaviour, ctx) -> Detection:
        if "orders/blob.bin" in ctx.change.added:
            raise Unmeasurable("orders/blob.bin: not a format this detector reads")
        return Detection(observed=False, evidence=["clean"])

    monkeypatch.setitem(engine.DETECTORS, "acme_blob", detect)
    r = _evaluate(
        tmp_path,
        {"orders/blob.bin": "?"},
        forbidden=[{"id": "blob", "description": "d", "detector": "acme_blob"}],
    )
    assert r.failures == [] and r.forbidden_observed == ["blob"]
    assert r.forbidden[0].evidence == [
        ("unmeasurable because of the change: orders/blob.bin: not a format this detector reads")
    ]


@pytest.mark.parametrize(
    "error", [RecursionError("grader bug"), Unmeasurable("always")], ids=["RecursionError", "Unmeasurable"]
)
def test_a_grader_that_fails_on_the_pristine_app_too_stays_a_harness_error(
    tmp_path: Path, monkeypatch, error: Exception
) -> None:
    """The evidence is the pristine app: a grader that cannot measure it either is broken, whatever it
    says.
    """

    def grade(criterion, ctx) -> GradeResult:
        raise error

    monkeypatch.setitem(engine.GRADERS, "acme_broken", grade)
    r = _evaluate(
        tmp_path,
        {"orders/new.py": "X = 1\n"},
        criteria=[{"id": "c", "description": "d", "weight": 1, "grader": "acme_broken"}],
    )
    [failure] = r.failures
    assert failure.stage == "grader:c" and "fails on the pristine app too" in failure.message
    assert r.criteria[0].fraction is None


def test_an_exception_no_content_can_provoke_stays_a_harness_error(tmp_path: Path, monkeypatch) -> None:
    """A KeyError raised only on the change is still a bug of the grader's, never the agent's 0."""

    def grade(criterion, ctx) -> GradeResult:
        if ctx.change.added:
            raise KeyError("missing")
        return GradeResult(fraction=1.0)

    monkeypatch.setitem(engine.GRADERS, "acme_keyerror", grade)
    r = _evaluate(
        tmp_path,
        {"orders/new.py": "X = 1\n"},
        criteria=[{"id": "c", "description": "d", "weight": 1, "grader": "acme_keyerror"}],
    )
    assert [f.stage for f in r.failures] == ["grader:c"] and "KeyError" in r.failures[0].message


def test_a_folder_where_the_grader_wants_a_file_is_the_changes_failure(tmp_path: Path, monkeypatch) -> None:
    """An OSError about a path in the workspace (here: a folder where a file was expected) is the change's
    doing when the pristine app, which has a file there, measures."""

    def grade(criterion, ctx) -> GradeResult:
        return GradeResult(fraction=float(len((ctx.modified_dir / "orders" / "models.py").read_text()) > 0))

    monkeypatch.setitem(engine.GRADERS, "acme_reads", grade)
    d = make_definition(
        tmp_path, criteria=[{"id": "c", "description": "d", "weight": 1, "grader": "acme_reads"}]
    )
    modified = write_tree(
        tmp_path / "m", {"orders/service.py": APP["orders/service.py"], "orders/models.py/x": ""}
    )
    r = evaluate(d, write_tree(tmp_path / "p", APP), modified, None, tmp_path / "work")
    assert r.failures == [] and r.criteria[0].fraction == 0.0
    assert r.criteria[0].evidence == [
        ("unmeasurable because of the change: orders/models.py: Is a directory (IsADirectoryError)")
    ]


def test_parsing_is_bounded_in_size_and_cpu_time() -> None:
    with pytest.raises(bounds.Unparsable, match="beyond the parsers' bound"):
        pyparse.parse("#" * (bounds.MAX_SOURCE_BYTES + 1), "big.py")
    source = "\n".join(f"def f{i}(a, b):\n    return [a + b * {i} for _ in range(3)]" for i in range(300))
    with bounds.budget(0.0), pytest.raises(bounds.Unparsable, match="more CPU time than the bound"):
        pyparse.parse(source, "spent.py")  # the budget is spent by the parse that goes over it
    pyparse.parse(source, "outside.py")  # no budget outside a grader's call


def test_the_raised_recursion_limit_stays_raised_while_any_thread_needs_it() -> None:
    """Each TypeScript parse raised the limit and put back what it had found: two at once, and the first to
    finish lowered it under the other (whose deep file then looked too deep)."""
    import sys

    before = sys.getrecursionlimit()
    with bounds.deep_recursion(before + 5000):
        with bounds.deep_recursion(before + 5000):
            pass
        assert sys.getrecursionlimit() == before + 5000
    assert sys.getrecursionlimit() == before
