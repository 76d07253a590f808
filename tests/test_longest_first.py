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
