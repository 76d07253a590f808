"""Graders that run commands: quality gates, hidden tests, meaningful tests; and evaluate() tying them
together."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import make_definition, shell, transcript, write_tree

from skillassay.definitions.agent_eval import Criterion, QualityGate
from skillassay.graders import evaluate, gates, hidden_tests, meaningful_tests
from skillassay.graders.base import HarnessFault

APP = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
    # the app's own environment has pytest (the harness's does not count)
    "requirements.txt": "pytest==9.2.0\n",
}
WITH_SUB = {
    **APP,
    "calc.py": APP["calc.py"] + "\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_sub.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n\n\n"
    "def test_add_again():\n    from calc import add\n    assert add(2, 2) == 4\n",
}
PY = "python -m pytest -q -p no:cacheprovider"


def gate(id, command, **kw):
    return QualityGate(id=id, command=command, **kw)


# ----------------------------------------------------------------------------- gates
def test_gate_statuses(make_ctx):
    ctx = make_ctx(APP, APP)
    results = gates.run_gates(
        [
            gate("build", "python -m compileall -q calc.py", kind="build"),
            gate("test", PY, kind="test", requires=["build"], unavailable_exit_codes=[5, 127]),
            gate("lint", "definitely-not-a-command-xyz"),
            gate("fails", ["python", "-c", "raise SystemExit(3)"]),
            gate("after_fail", "true", requires=["fails"]),
            gate("slow", ["python", "-c", "import time; time.sleep(5)"], timeout=0.5),
            gate("none", f"{PY} -k nothing_matches", unavailable_exit_codes=[5]),
        ],
        ctx,
    )
    status = {k: v.status for k, v in results.items()}
    assert status == {
        "build": "passed",
        "test": "passed",
        "lint": "unavailable",
        "fails": "failed",
        "after_fail": "not_run",
        "slow": "failed",
        "none": "unavailable",
    }
    assert results["fails"].exit_code == 3 and "timed out" in results["slow"].reason
    assert not (ctx.modified_dir / "__pycache__").exists()  # gates ran in a copy


def test_gates_grader_and_gate_dependency(tmp_path):
    pristine = write_tree(tmp_path / "p", APP)
    broken = write_tree(tmp_path / "m", {**APP, "calc.py": "def add(a, b):\n    return a - b\n"})
    d = make_definition(
        tmp_path,
        gates=[gate("test", PY, kind="test")],
        criteria=[
            Criterion(id="gated", description="", weight=1, grader="gates"),
            Criterion(
                id="needs_tests",
                description="",
                weight=1,
                grader="diff",
                gates=["test"],
                options={"owning_module": "calc.py"},
            ),
            Criterion(
                id="needs_missing",
                description="",
                weight=1,
                grader="diff",
                gates=["nope"],
                options={"owning_module": "calc.py"},
            ),
        ],
    )
    r = evaluate(d, pristine, broken, None, tmp_path / "w")
    by_id = {c.id: c for c in r.criteria}
    assert r.gates[0].status == "failed"
    assert by_id["gated"].fraction == 0.0
    assert by_id["needs_tests"].fraction == 0.0 and "gate test failed" in by_id["needs_tests"].evidence[0]
    assert by_id["needs_missing"].fraction is None
    assert r.verdict.unjudged == ["needs_missing"] and any("needs_missing unjudged" in n for n in r.notes)


# ----------------------------------------------------------------------------- hidden tests
def _hidden_definition(tmp_path, partial=True):
    d = make_definition(
        tmp_path,
        criteria=[
            Criterion(
                id="hidden", description="", weight=1, grader="hidden_tests", options={"partial": partial}
            )
        ],
    )
    write_tree(
        d.source.parent / "demo" / "hidden_tests",
        {
            "test_hidden_sub.py": "from calc import sub\n\n\ndef test_h1():\n    assert sub(5, 3) == 2\n\n\n"
            "def test_h2():\n    assert sub(0, 3) == -3\n\n\n"
            "def test_h3():\n    assert sub(1, 1) == 1\n",  # deliberately wrong: 2 of 3 pass
        },
    )
    return d


def test_hidden_tests(tmp_path, make_ctx):
    d = _hidden_definition(tmp_path)
    crit = d.criteria[0]
    ctx = make_ctx(APP, WITH_SUB, definition=d)
    r = hidden_tests.grade(crit, ctx)
    assert abs(r.fraction - 2 / 3) < 1e-9 and r.evidence[0] == "hidden tests: 2/3 passed"
    assert not (ctx.modified_dir / "tests" / "_hidden").exists()  # the agent's workspace is never touched
    # all or nothing
    d2 = _hidden_definition(tmp_path / "b", partial=False)
    assert hidden_tests.grade(d2.criteria[0], make_ctx(APP, WITH_SUB, definition=d2)).fraction == 0.0
    # pristine code: the module does not even import
    r = hidden_tests.grade(crit, make_ctx(APP, APP, definition=d))
    assert r.fraction == 0.0


def test_hidden_tests_folder_missing(tmp_path, make_ctx):
    d = make_definition(
        tmp_path, criteria=[Criterion(id="h", description="", weight=1, grader="hidden_tests")]
    )
    # `check` refuses such a definition; a harness failure here
    with pytest.raises(HarnessFault, match="missing"):
        hidden_tests.grade(d.criteria[0], make_ctx(APP, WITH_SUB, definition=d))


# ----------------------------------------------------------------------------- meaningful tests
MEANINGFUL = Criterion(id="meaningful", description="", weight=1, grader="meaningful_tests")


def test_new_tests_that_detect_the_change(make_ctx):
    r = meaningful_tests.grade(MEANINGFUL, make_ctx(APP, WITH_SUB))
    assert r.fraction == 1.0, r.evidence
    assert (
        "2/2 new tests fail on the pristine code; 2/2 pass on the modified code" in r.evidence[0]
    )  # import error


def test_new_tests_that_pass_on_the_old_code_earn_nothing(make_ctx):
    only_old = {
        **APP,
        "calc.py": WITH_SUB["calc.py"],
        "tests/test_more.py": "from calc import add\n\n\ndef test_more():\n    assert add(0, 0) == 0\n",
    }
    r = meaningful_tests.grade(MEANINGFUL, make_ctx(APP, only_old))
    assert r.fraction == 0.0 and "do not detect the change" in r.evidence[-1]


def test_failing_new_tests_reduce_the_share(make_ctx):
    files = {
        **WITH_SUB,
        "tests/test_sub.py": WITH_SUB["tests/test_sub.py"]
        + "\n\ndef test_wrong():\n    from calc import sub\n    assert sub(1, 1) == 5\n",
    }
    r = meaningful_tests.grade(MEANINGFUL, make_ctx(APP, files))
    assert abs(r.fraction - 2 / 3) < 1e-9


def test_no_new_tests(make_ctx):
    r = meaningful_tests.grade(MEANINGFUL, make_ctx(APP, {**APP, "calc.py": WITH_SUB["calc.py"]}))
    assert r.fraction == 0.0 and r.evidence == ["the agent added no tests"]


# ----------------------------------------------------------------------------- evaluate
def test_evaluate_unknown_grader_and_crashes_are_harness_failures(tmp_path, monkeypatch):
    """A grader or detector that crashes (or does not exist) is the harness's failure: recorded as such (the
    run becomes a harness_error), never zero points, never an unflagged forbidden behaviour."""
    from skillassay.graders import engine as ev

    pristine = write_tree(tmp_path / "p", APP)
    modified = write_tree(tmp_path / "m", WITH_SUB)
    d = make_definition(
        tmp_path,
        criteria=[
            Criterion(id="odd", description="", weight=1, grader="rubric"),
            Criterion(
                id="boom", description="", weight=1, grader="diff", options={"owning_module": "calc.py"}
            ),
            Criterion(id="ok", description="", weight=2, grader="diff", options={"owning_module": "calc.py"}),
        ],
        forbidden=[
            {"id": "db", "description": "", "detector": "database_writes"},
            {"id": "claims", "description": "", "detector": "unsupported_claims"},
        ],
    )

    real = ev.GRADERS["diff"]

    def flaky(criterion, ctx):
        if criterion.id == "boom":
            raise RuntimeError("kaput")
        return real(criterion, ctx)

    def broken_detector(behaviour, ctx):
        raise OSError("detector cannot read")

    monkeypatch.setitem(ev.GRADERS, "diff", flaky)
    monkeypatch.setitem(ev.DETECTORS, "database_writes", broken_detector)
    r = evaluate(
        d, pristine, modified, transcript(shell("pytest", 0), final="All tests pass."), tmp_path / "w"
    )
    assert [(f.stage, f.message) for f in r.failures] == [
        ("grader:odd", "no grader 'rubric'"),
        ("grader:boom", "RuntimeError: kaput"),
        ("detector:db", "OSError: detector cannot read"),
    ]
    assert all(f.traceback for f in r.failures)
    assert "the harness failed (kaput)" in r.criteria[1].evidence[0]
    assert not next(f for f in r.forbidden if f.id == "db").checked
    assert r.forbidden_observed == []
    monkeypatch.undo()
    # without a transcript the transcript detectors say they could not look
    r = evaluate(d, pristine, modified, None, tmp_path / "w2")
    assert not next(f for f in r.forbidden if f.id == "claims").checked
    assert any("claims not checked" in n for n in r.notes)


def test_new_tests_in_a_class_and_in_an_existing_file(make_ctx):
    files = {
        **APP,
        "calc.py": WITH_SUB["calc.py"],
        "tests/test_calc.py": APP["tests/test_calc.py"]
        + "\n\nclass TestSub:\n    def test_sub(self):\n        from calc import sub\n\n"
        "        assert sub(3, 2) == 1\n",
    }
    r = meaningful_tests.grade(MEANINGFUL, make_ctx(APP, files))
    assert r.fraction == 1.0, r.evidence
    assert "tests/test_calc.py::TestSub.test_sub: modified passed, pristine failed" in r.evidence


# --------------------------------------------------------------------------- gates the harness cannot measure
PYTEST = "python -m pytest -q -p no:cacheprovider"


def _gated(tmp_path: Path, command: str, modified: dict[str, str]):
    d = make_definition(
        tmp_path,
        gates=[QualityGate(id="test", command=command, kind="test", unavailable_exit_codes=[5, 127])],
        criteria=[
            Criterion(
                id="tests_pass",
                description="",
                weight=1,
                grader="diff",
                gates=["test"],
                options={"owning_module": "calc.py"},
            )
        ],
    )
    return evaluate(
        d, write_tree(tmp_path / "p", APP), write_tree(tmp_path / "m", modified), None, tmp_path / "w"
    )


def test_a_gate_the_harness_cannot_run_is_a_harness_failure(tmp_path: Path) -> None:
    r = _gated(tmp_path, "definitely-not-a-command-xyz", {**APP, "calc.py": APP["calc.py"] + "\n# ok\n"})
    assert [f.stage for f in r.failures] == ["gate:test"] and "command not found" in r.failures[0].message


def test_a_gate_the_agent_made_unmeasurable_is_a_failed_gate(tmp_path: Path) -> None:
    """Issue 14: pytest's "no tests collected" (exit 5) because the agent deleted the tests: the agent's
    doing, not the harness's (the pristine app's tests can be run)."""
    r = _gated(tmp_path, PYTEST, {"calc.py": APP["calc.py"], "requirements.txt": APP["requirements.txt"]})
    assert r.failures == []
    [gate] = r.gates
    assert gate.status == "failed" and "the change made it unmeasurable" in gate.reason
    assert r.criteria[0].fraction == 0.0
