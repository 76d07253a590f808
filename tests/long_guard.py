"""A pytest plugin that keeps single tests short: with CI=true a test whose setup and call together take
longer than the ``long_test_limit`` ini option (seconds) fails the session unless it carries
``@pytest.mark.long(reason="...")`` saying why it needs the time. At the end it prints the modules that took
longest (the sum of their tests' setup, call and teardown), where sharing a fixture or splitting a module pays
most; ``--write-module-seconds PATH`` writes the same sums by scheduling scope (``longest_first.scope_of``:
the module, or the finer scopes a split module is scheduled in), what ``tests/longest_first.py`` orders by.

Durations are collected from the test reports (``pytest_runtest_logreport``), which under pytest-xdist reach
the controller from every worker, so the verdict is the whole run's. Registered from tests/conftest.py.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

LIMIT_OPTION = "long_test_limit"
MARKER = "long"
SLOWEST_MODULES = 10
# the marker's reason, carried to the controller in the test's reports (and into a JUnit XML's properties)
REASON_PROPERTY = "long_reason"
WRITE_OPTION = "--write-module-seconds"


def _in_ci() -> bool:
    # read when the session ends, not at import (the same reading as tests/parts.py's IN_CI)
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


@dataclass
class Durations:
    """What the reports said: each test's setup+call seconds, each scheduling scope's total (setup, call and
    teardown), the tests marked long."""

    tests: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    scopes: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    marked: set[str] = field(default_factory=set)

    def add(self, report: pytest.TestReport) -> None:
        # imported here, not at the top: pytest rewrites the asserts of a plugin imported first as a plugin
        from longest_first import scope_of

        self.scopes[scope_of(report.nodeid)] += report.duration
        if report.when in ("setup", "call"):
            self.tests[report.nodeid] += report.duration
        if any(name == REASON_PROPERTY for name, _ in report.user_properties):
            self.marked.add(report.nodeid)

    def modules(self) -> dict[str, float]:
        """Each module's total: the sum of its scopes'."""
        from longest_first import module_of

        totals: dict[str, float] = defaultdict(float)
        for scope, seconds in self.scopes.items():
            totals[module_of(scope)] += seconds
        return totals

    def over(self, limit: float) -> list[tuple[str, float]]:
        """The unmarked tests over ``limit``, slowest first."""
        slow = [(t, s) for t, s in self.tests.items() if s > limit and t not in self.marked]
        return sorted(slow, key=lambda ts: -ts[1])


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        LIMIT_OPTION,
        "seconds a test's setup+call may take without @pytest.mark.long(reason=...) (fails the run under CI)",
        default="120",
    )
    parser.addoption(
        WRITE_OPTION,
        metavar="PATH",
        default=None,
        help="write each scheduling scope's seconds (setup+call+teardown; a scope is a module unless "
        "tests/longest_first.py splits it) as JSON to PATH at the end (tests/longest_first.py reads "
        "tests/module_seconds.json to send the longest scopes first)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(reason): the test may take longer than {LIMIT_OPTION} seconds, for this reason"
    )
    raw = config.getini(LIMIT_OPTION)
    try:
        limit = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{LIMIT_OPTION} = {raw!r}: not a number of seconds") from None
    # a worker of pytest-xdist only runs tests: its reports are replayed on the controller, which judges
    if not hasattr(config, "workerinput"):
        written = config.getoption(WRITE_OPTION)
        config.pluginmanager.register(
            LongGuard(limit, Path(written) if written else None), "long_guard_session"
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(MARKER):
        reason = mark.kwargs.get("reason", mark.args[0] if mark.args else "")
        if not isinstance(reason, str) or not reason.strip():
            pytest.fail(f"@pytest.mark.{MARKER} needs reason='why the test takes long'", pytrace=False)
        item.user_properties.append((REASON_PROPERTY, reason))
        return


class LongGuard:
    """The controller's (or the single process's) view of the run's durations and its verdict."""

    def __init__(self, limit: float, seconds_file: Path | None = None) -> None:
        self.limit = limit
        self.seconds_file = seconds_file
        self.durations = Durations()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations.add(report)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _in_ci() and self.durations.over(self.limit) and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.seconds_file is not None:
            scopes = sorted(self.durations.scopes.items(), key=lambda ss: -ss[1])
            self.seconds_file.write_text(json.dumps({n: round(s, 1) for n, s in scopes}, indent=0) + "\n")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        modules = sorted(self.durations.modules().items(), key=lambda ms: -ms[1])[:SLOWEST_MODULES]
        if modules:
            terminalreporter.write_sep("=", f"slowest {len(modules)} modules (setup+call+teardown)")
            for name, seconds in modules:
                terminalreporter.write_line(f"{seconds:9.2f}s {name}")
        over = self.durations.over(self.limit)
        if not over:
            return
        verdict = "fails the run (CI=true)" if _in_ci() else "would fail the run under CI=true"
        terminalreporter.write_sep(
            "=", f"tests over {self.limit:g}s without @pytest.mark.{MARKER}(reason=...)", red=True
        )
        for nodeid, seconds in over:
            terminalreporter.write_line(f"{nodeid} took {seconds:.1f}s (limit {self.limit:g}s): {verdict}")
