from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVALS = REPO / "evals"

from parts import IN_CI


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def evals_dir() -> Path:
    return EVALS


def pytest_configure(config: pytest.Config) -> None:
    # fixture apps are imported/run from copies; never leave bytecode in the source tree
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    config.addinivalue_line("markers", "needs(available, what): the test needs a part of the machine (see conftest)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        available, what = mark.args
        if not available:
            if IN_CI:
                pytest.fail(f"missing {what} (CI=true: a missing part fails the run; scripts/setup.sh installs it)",
                            pytrace=False)
            pytest.skip(f"missing {what}")


_hidden: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        why = "xfail" if hasattr(report, "wasxfail") else "skipped"
        _hidden.append(f"{report.nodeid} ({why})")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if IN_CI and _hidden and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if IN_CI and _hidden:
        terminalreporter.section("hidden work (CI=true)", red=True)
        terminalreporter.write_line(f"{len(_hidden)} test(s) skipped or xfailed; in CI that fails the run:")
        for line in _hidden:
            terminalreporter.write_line(f"  {line}")
