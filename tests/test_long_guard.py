"""tests/long_guard.py: a test over the limit without @pytest.mark.long(reason=...) fails a CI run, in one
process and under pytest-xdist (where the durations reach the controller from the workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent

# a limit of 0.4 s against a test that sleeps 0.9 s: far apart enough that a loaded machine's scheduling
# cannot turn the fast tests slow or the slow one fast (a sleep only ever lasts longer)
SUITE = """
import time
import pytest

@pytest.fixture
def slow_setup():
    time.sleep(0.3)

def test_fast():
    pass

def test_slow():
    time.sleep(0.9)

def test_slow_by_setup_and_call(slow_setup):
    time.sleep(0.3)

@pytest.mark.long(reason="builds a whole app")
def test_slow_and_marked():
    time.sleep(0.9)

@pytest.mark.parametrize("size", ["long"])  # "long" among its keywords, but no marker
def test_slow_with_a_long_id(size):
    time.sleep(0.9)
"""

INI = """
[pytest]
long_test_limit = 0.4
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_timed=SUITE)
    # the plugin is imported by name from beside this file, as tests/conftest.py does
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    return pytester


def _run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest_subprocess("-p", "long_guard", "-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_an_unmarked_slow_test_fails_a_ci_run(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    monkeypatch.setenv("CI", "true")
    result = _run(suite, *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*5 passed*"])  # every test passed: the verdict is the guard's
    out = result.stdout.str()
    assert "test_timed.py::test_slow took " in out
    assert "test_timed.py::test_slow_by_setup_and_call took 0." in out  # setup and call summed
    assert "test_timed.py::test_slow_with_a_long_id[long] took " in out
    assert "fails the run (CI=true)" in out
    assert "test_slow_and_marked took" not in out
    assert "test_fast took" not in out
    result.stdout.fnmatch_lines(["*slowest 1 modules*", "*s test_timed.py"])


def test_outside_ci_the_run_passes_and_says_what_would_fail(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = _run(suite, "-k", "not marked and not long_id")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_timed.py::test_slow took * would fail the run under CI=true"])


def test_marked_slow_tests_pass_a_ci_run(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    result = _run(suite, "-k", "fast or marked")
    assert result.ret == pytest.ExitCode.OK
    assert " took " not in result.stdout.str()


def test_the_marker_needs_a_reason(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    suite.makepyfile(
        test_unexplained="""
import pytest

@pytest.mark.long
def test_unexplained():
    pass

@pytest.mark.long(reason="  ")
def test_blank():
    pass
"""
    )
    result = _run(suite, "test_unexplained.py")
    result.stdout.fnmatch_lines(["*2 error*"])
    assert result.stdout.str().count("@pytest.mark.long needs reason=") == 2


def test_a_limit_that_is_no_number_is_a_usage_error(suite: pytest.Pytester) -> None:
    suite.makeini("[pytest]\nlong_test_limit = two minutes\n")
    result = _run(suite)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*long_test_limit = 'two minutes': not a number of seconds*"])
