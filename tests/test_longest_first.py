"""tests/longest_first.py: whole modules handed out longest first (measured seconds, else an estimate from the
markers), each module's tests in their own order, the same tests collected; and under pytest-xdist's
``--dist loadscope --no-loadscope-reorder`` the first worker is sent the longest module first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent

MODULES = {
    # three quick tests: xdist's own reordering (by number of tests) would send this first
    "test_a_many_quick": "def test_one(): pass\ndef test_two(): pass\ndef test_three(): pass\n",
    "test_b_slow": "import pytest\n@pytest.mark.slow\ndef test_builds(): pass\n@pytest.mark.slow\n"
    "def test_builds_again(): pass\n",
    "test_c_long": "import pytest\n@pytest.mark.long(reason='the whole suite')\n"
    "def test_whole_suite(): pass\n",
}
INI = """
[pytest]
markers =
    slow: slow
    long(reason): long
long_test_limit = 120
module_seconds_file = seconds.json
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(**MODULES)
    monkeypatch.setenv("PYTHONPATH", str(HERE))  # the plugins by name, as tests/conftest.py loads them
    return pytester


def _collected(
    suite: pytest.Pytester, plugins: tuple[str, ...] = ("long_guard", "longest_first")
) -> list[str]:
    loaded = [arg for name in plugins for arg in ("-p", name)]
    result = suite.runpytest_subprocess(*loaded, "-p", "no:cacheprovider", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    return [line for line in result.stdout.lines if "::" in line]


def test_without_figures_the_markers_decide(suite: pytest.Pytester) -> None:
    assert _collected(suite) == [
        "test_c_long.py::test_whole_suite",
        "test_b_slow.py::test_builds",
        "test_b_slow.py::test_builds_again",
        "test_a_many_quick.py::test_one",
        "test_a_many_quick.py::test_two",
        "test_a_many_quick.py::test_three",
    ]


def test_measured_seconds_come_before_the_estimate(suite: pytest.Pytester) -> None:
    (suite.path / "seconds.json").write_text(
        json.dumps({"test_a_many_quick.py": 500, "test_c_long.py": 3, "gone/test_removed.py": 900})
    )
    got = _collected(suite)
    # a module the figures name that no longer exists changes nothing; one they miss is estimated (b: 20 s)
    assert [line.split("::")[0] for line in got] == [
        "test_a_many_quick.py",
        "test_a_many_quick.py",
        "test_a_many_quick.py",
        "test_b_slow.py",
        "test_b_slow.py",
        "test_c_long.py",
    ]
    assert sorted(got) == sorted(_collected(suite, plugins=("long_guard",)))  # the same tests, reordered


def test_a_broken_figures_file_is_a_usage_error(suite: pytest.Pytester) -> None:
    (suite.path / "seconds.json").write_text("{not json")
    result = suite.runpytest_subprocess("-p", "long_guard", "-p", "longest_first", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "seconds.json: not JSON" in result.stderr.str()


def test_the_long_guard_writes_the_figures_the_order_reads(suite: pytest.Pytester) -> None:
    out = suite.path / "written.json"
    result = suite.runpytest_subprocess(
        "-p", "long_guard", "-p", "longest_first", "-p", "no:cacheprovider", f"--write-module-seconds={out}"
    )
    assert result.ret == 0, result.stdout.str()
    written = json.loads(out.read_text())
    assert set(written) == {f"{name}.py" for name in MODULES}
    assert all(isinstance(s, float) and s >= 0 for s in written.values())


def _ran_modules(suite: pytest.Pytester, *args: str) -> list[str]:
    result = suite.runpytest_subprocess(
        "-p", "long_guard", "-p", "longest_first", "-p", "no:cacheprovider", "-n", "1", "--dist", "loadscope",
        "-v", *args,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    ran = [line.split("::")[0].split()[-1] for line in result.stdout.lines if "PASSED" in line]
    return list(dict.fromkeys(ran))


def test_xdist_sends_the_longest_module_first(suite: pytest.Pytester) -> None:
    # one worker: the order it runs the modules in is the order they were handed out
    (suite.path / "seconds.json").write_text(json.dumps({"test_b_slow.py": 500}))
    want = ["test_b_slow.py", "test_c_long.py", "test_a_many_quick.py"]
    assert _ran_modules(suite, "--no-loadscope-reorder") == want
    # xdist's own order (by number of tests) undoes it: why pyproject's addopts turn it off
    assert _ran_modules(suite)[0] == "test_a_many_quick.py"


# ----------------------------------------------------------------------------- scopes finer than a module
SANDBOX = "tests/graders/sandbox/test_sandbox_fixtures.py"
APPS = "tests/fixtures/test_nextjs_fastapi_fixtures.py"
MUTANTS = "tests/orchestrator/test_mutants.py"
LIFECYCLE = "test_variant_builds_and_serves_the_lifecycle"


def test_the_split_modules_scopes_come_from_the_node_ids() -> None:
    from longest_first import scope_of

    # each sandbox case its own scope; the module's other test keeps xdist's own scope, the module
    for case in ("express-ts-golden", "cowork-rails-rb-control-wrong-path", "flask-py-pristine"):
        assert (
            scope_of(f"{SANDBOX}::test_fixture_scores[{case}]") == f"{SANDBOX}::test_fixture_scores[{case}]"
        )
    assert scope_of(f"{SANDBOX}::test_two_fixtures_at_once_do_not_interfere") == SANDBOX
    # one scope per fixture app, whatever dashes its name, its control and its mode hold
    cowork = {
        scope_of(f"{APPS}::{LIFECYCLE}[cowork-fastapi-py-{variant}]")
        for variant in (
            "app-plain",
            "test_golden-no-key",
            "test_golden-recording",
            "control:wrong-path-recording",
            "control:incomplete-recording",
        )
    }
    assert cowork == {f"{APPS}::{LIFECYCLE}[cowork-fastapi-py"}
    assert scope_of(f"{APPS}::{LIFECYCLE}[fastapi-py-control:wrong-path-recording]") == (
        f"{APPS}::{LIFECYCLE}[fastapi-py"
    )
    assert scope_of(f"{APPS}::test_definition_files_load_and_agree[cowork-fastapi-py]") == APPS
    # every mutants test its own scope, each parameter too
    for name in (
        "test_check_mutants_on_the_shipped_suite",
        "test_every_typescript_mutant_type_checks[nextjs-ts]",
    ):
        assert scope_of(f"{MUTANTS}::{name}") == f"{MUTANTS}::{name}"
    # a module not in the table: xdist's own scope, the module or the class
    assert scope_of("tests/test_house.py::test_layers") == "tests/test_house.py"
    assert scope_of("tests/x/test_y.py::TestZ::test_w[a]") == "tests/x/test_y.py::TestZ"


MUTANTS_SUITE = (
    "import pytest\n"
    "def test_a(): pass\n"
    "def test_b(): pass\n"
    "@pytest.mark.long(reason='the whole suite')\n"
    "def test_c(): pass\n"
)


@pytest.fixture
def split_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A suite with a module at the path the table splits (every test its own scope) beside one it does
    not."""
    pytester.makeini(INI)
    pytester.makepyfile(
        **{MUTANTS.removesuffix(".py"): MUTANTS_SUITE, "test_other": "def test_one(): pass\n"}
    )
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    return pytester


def test_a_split_modules_scopes_are_ordered_among_the_others(split_suite: pytest.Pytester) -> None:
    (split_suite.path / "seconds.json").write_text(
        json.dumps({f"{MUTANTS}::test_b": 300, "test_other.py": 200, f"{MUTANTS}::test_a": 100})
    )
    # figures by scope: the other module comes between two scopes of the split one; test_c has no figure
    # (an estimate of 120 s)
    assert _collected(split_suite) == [
        f"{MUTANTS}::test_b",
        "test_other.py::test_one",
        f"{MUTANTS}::test_c",
        f"{MUTANTS}::test_a",
    ]


def test_a_figure_for_the_whole_split_module_is_shared_by_the_estimates(split_suite: pytest.Pytester) -> None:
    # from before the split: the module's 300 s shared as its markers say (test_c about 298 s, the others 1 s)
    (split_suite.path / "seconds.json").write_text(json.dumps({MUTANTS: 300, "test_other.py": 200}))
    assert _collected(split_suite) == [
        f"{MUTANTS}::test_c",
        "test_other.py::test_one",
        f"{MUTANTS}::test_a",
        f"{MUTANTS}::test_b",
    ]


def _ran(suite: pytest.Pytester, workers: int) -> list[tuple[str, str]]:
    """(worker, test) of each passed test, in the order the run reported them."""
    result = suite.runpytest_subprocess(
        "-p", "long_guard", "-p", "longest_first", "-p", "no:cacheprovider", "-n", str(workers),
        "--dist", "loadscope", "--no-loadscope-reorder", "-v",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    return [
        (line.split("[")[1].split("]")[0], line.split()[-1])
        for line in result.stdout.lines
        if line.startswith("[gw") and "PASSED" in line
    ]


def test_xdist_runs_the_scopes_in_that_order_and_on_more_than_one_worker(
    split_suite: pytest.Pytester,
) -> None:
    (split_suite.path / "seconds.json").write_text(
        json.dumps({f"{MUTANTS}::test_b": 300, "test_other.py": 200, f"{MUTANTS}::test_a": 100})
    )
    # one worker: the scopes run in the order they were handed out, the split module's around the other one
    ran = [test for _, test in _ran(split_suite, 1)]
    assert ran == [
        f"{MUTANTS}::test_b",
        "test_other.py::test_one",
        f"{MUTANTS}::test_c",
        f"{MUTANTS}::test_a",
    ]
    # two workers: xdist's own scopes would keep the split module on one of them
    (split_suite.path / "test_other.py").unlink()
    workers = {worker for worker, test in _ran(split_suite, 2) if test.startswith(MUTANTS)}
    assert workers == {"gw0", "gw1"}
