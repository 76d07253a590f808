"""What code under test can leave behind to forge a pytest verdict: shared by the grader-level attacks
(graders/hidden_attacks.py) and the real CLIs' attacks (orchestrator/test_redteam_forgery.py)."""

# rewrites the JUnit file named on pytest's command line (drops every failure) and leaves with exit code 0
FORGE_JUNIT = """
import atexit as _atexit, os as _os, re as _re, sys as _sys


def _forge_junit():
    for arg in _sys.argv:
        if arg.startswith("--junitxml="):
            path = arg.split("=", 1)[1]
            try:
                text = open(path).read()
            except OSError:
                continue
            text = _re.sub(r"<failure.*?</failure>", "", text, flags=_re.S)
            text = _re.sub(r'(failures|errors)="\\d+"', r'\\1="0"', text)
            open(path, "w").write(text)
    _os._exit(0)


_atexit.register(_forge_junit)
"""
# turns every test's report into a pass
MAKEREPORT = """

import pytest as _pytest


@_pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""
