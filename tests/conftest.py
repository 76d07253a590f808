from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent
EVALS = REPO / "evals"

from parts import IN_CI  # noqa: E402 - beside this file, after the paths it needs

# a test over long_test_limit seconds without @pytest.mark.long(reason=...) fails a CI run
# (tests/long_guard.py); the modules go to the xdist workers longest first (tests/longest_first.py)
pytest_plugins = ["long_guard", "longest_first"]

# Hypothesis's timing checks measure the machine, not the code: on 2 loaded cores (the suite's own apps
# building beside it) input generation can take over a second and fail a test that asserts nothing about time
settings.register_profile("skillassay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("skillassay")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def evals_dir() -> Path:
    return EVALS


class _Counting(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.hits += 1
        self.send_response(200)
        self.send_header("Content-Length", "7")
        self.end_headers()
        self.wfile.write(b"reached")

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    """A loopback listener on the host (another run's app, a database...): what a sealed agent or app must not
    reach. ``hits`` counts the GETs it answered."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    srv.hits = 0
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def pytest_configure(config: pytest.Config) -> None:
    # fixture apps are imported/run from copies; never leave bytecode in the source tree
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # pytest-xdist's workers get COLUMNS=80 from their launcher; a test that wants a width sets its own
    # (tables are fitted to $COLUMNS off a terminal), the rest see the CLI as a pipe does
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop("COLUMNS", None)
    # jobs in tests run no golden canary unless they ask (tests/orchestrator/test_canary.py does): most tests'
    # evals are synthetic, and each canary is three more gradings per eval on an empty cache
    os.environ.setdefault("SKILLASSAY_CANARY_RUNS", "0")
    # runs one at a time unless a test asks for --jobs: the suite's own workers already fill the cores, and a
    # test's expectations of order stay its own (the default elsewhere: orchestrator/config.py default_jobs)
    os.environ.setdefault("SKILLASSAY_JOBS", "1")
    # every `skillassay rubric` grades afresh unless a test asks for the memo (tests/cli/test_rubric_memo.py):
    # tests that count the modules a grade loads, or patch a grader, must see the grade itself
    os.environ.setdefault("SKILLASSAY_RUBRIC_MEMO", "off")
    config.addinivalue_line(
        "markers", "needs(available, what): the test needs a part of the machine (see conftest)"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        available, what = mark.args
        if not available:
            if IN_CI:
                pytest.fail(
                    f"missing {what} (CI=true: a missing part fails the run; scripts/setup.sh installs it)",
                    pytrace=False,
                )
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
