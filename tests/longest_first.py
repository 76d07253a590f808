"""A pytest plugin that hands pytest-xdist its work longest first, so no long scope starts last and keeps one
worker busy while the others idle.

A scope is what ``--dist loadscope`` keeps on one worker: xdist's own is the module (or the class). The three
longest modules would then pin the run's wall time on one worker each, so ``SPLIT_SCOPES`` cuts them finer,
by node id: each case of the sandbox fixtures its own scope, the Next.js/FastAPI fixtures one scope per
fixture app (its variants prepared together), each test of the mutants its own. ``SplitScopeScheduling``
hands xdist those scopes (``scope_of``) and ``--no-loadscope-reorder`` keeps the order this plugin gives
them instead of xdist's own, by number of tests, which put the one-test whole-suite modules, the longest of
all, at the very end.

A scope's expected seconds: its figure in ``module_seconds.json`` beside this file (what the last full run's
scopes took, setup+call+teardown, as ``tests/long_guard.py`` writes it with ``--write-module-seconds PATH``).
A file from before the split names whole modules: such a module's figure is shared among its scopes by
their estimates. No figure: an estimate from the markers (a test marked ``long`` counts as the limit, a
``slow`` one as 10 s, any other as half a second). Within a scope the tests keep their order. The order
changes which tests run when, and on which worker, never which tests run. Registered from tests/conftest.py.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

SECONDS_FILE = Path(__file__).resolve().parent / "module_seconds.json"
SECONDS_INI = "module_seconds_file"
SLOW_TEST_SECONDS = 10.0
OTHER_TEST_SECONDS = 0.5

# {module node id: a pattern matched at the start of a test's name (what follows "module::")}: a test it
# matches is scheduled in the scope "module::<group 1>", one it does not in xdist's own (the module)
SPLIT_SCOPES: dict[str, re.Pattern[str]] = {
    # each case builds and grades one variant; the module's one module fixture (shared_emulator) is cheap
    "tests/graders/sandbox/test_sandbox_fixtures.py": re.compile(r"(test_fixture_scores\[.+\])$"),
    # one scope per fixture app: its variants (app, test_golden, control:<name>, each run in one or more
    # modes) prepared together on its first case's setup, two at a time; fixture names hold dashes, control
    # names and modes too, so the fixture ends where the variant starts
    "tests/fixtures/test_nextjs_fastapi_fixtures.py": re.compile(
        r"(test_variant_builds_and_serves_the_lifecycle\[.+?)-(?:app|test_golden|control:)"
    ),
    # no module fixture: every test its own scope
    "tests/orchestrator/test_mutants.py": re.compile(r"(.+)"),
}

ScopeOf = Callable[[str], str]


def scope_of(nodeid: str, splits: Mapping[str, re.Pattern[str]] = SPLIT_SCOPES) -> str:
    """The scope pytest-xdist keeps ``nodeid`` in: its ``splits`` scope, else xdist's own (the node id up to
    its last ``::``: the module, or the class)."""
    module, _, name = nodeid.partition("::")
    pattern = splits.get(module)
    found = pattern.match(name) if pattern is not None else None
    if found is not None:
        return f"{module}::{found.group(1)}"
    return nodeid.rsplit("::", 1)[0]


def module_of(scope: str) -> str:
    return scope.split("::", 1)[0]


class SplitScopeScheduling(LoadScopeScheduling):
    """``--dist loadscope`` with the scopes of ``scope_of``; the rest (the work queue in collection order
    under ``--no-loadscope-reorder``) is xdist's."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)


def measured_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    """{scope or module node id: seconds} from ``path`` ({} when it is missing)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise pytest.UsageError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        raise pytest.UsageError(f"{path}: expected {{scope: seconds}}")
    return {str(k): float(v) for k, v in data.items()}


def estimated_seconds(item: pytest.Item, limit: float) -> float:
    if item.get_closest_marker("long") is not None:
        return limit
    if item.get_closest_marker("slow") is not None:
        return SLOW_TEST_SECONDS
    return OTHER_TEST_SECONDS


def expected_seconds(estimate: Mapping[str, float], measured: Mapping[str, float]) -> dict[str, float]:
    """{scope: seconds} for the scopes of ``estimate`` ({scope: seconds from the markers}): the figure
    ``measured`` has for the scope; where ``measured`` names the scope's module only (figures from before
    its split), that module's figure shared among its scopes by their estimates; else the estimate."""
    by_scope = {module_of(k) for k in measured if "::" in k}  # modules whose figures are by scope
    module_estimate: dict[str, float] = defaultdict(float)
    for scope, seconds in estimate.items():
        module_estimate[module_of(scope)] += seconds
    expected = {}
    for scope, seconds in estimate.items():
        module = module_of(scope)
        if module in measured and module not in by_scope:
            expected[scope] = measured[module] * (seconds / module_estimate[module])
        else:
            expected[scope] = measured.get(scope, seconds)
    return expected


def longest_first(
    items: list[pytest.Item], measured: dict[str, float], limit: float, scope: ScopeOf = scope_of
) -> list[pytest.Item]:
    """``items`` with whole scopes ordered by expected seconds, longest first (ties: collection order)."""
    estimate: dict[str, float] = defaultdict(float)
    first_seen: dict[str, int] = {}
    scopes = [scope(item.nodeid) for item in items]
    for i, (item, name) in enumerate(zip(items, scopes, strict=True)):
        first_seen.setdefault(name, i)
        estimate[name] += estimated_seconds(item, limit)
    seconds = expected_seconds(estimate, measured)
    rank = {name: (-seconds[name], first_seen[name]) for name in first_seen}
    order = sorted(range(len(items)), key=lambda i: rank[scopes[i]])  # stable: a scope's own order stays
    return [items[i] for i in order]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(SECONDS_INI, "JSON {scope: seconds} of the last full run (longest first)", default="")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadScopeScheduling | None:
    """The scheduler of ``--dist loadscope`` (xdist's own for every other mode)."""
    if config.getvalue("dist") != "loadscope":
        return None
    return SplitScopeScheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    named = config.getini(SECONDS_INI)
    path = Path(config.rootpath, named) if named else SECONDS_FILE
    try:
        limit = float(config.getini("long_test_limit"))
    except (ValueError, TypeError):  # long_guard not loaded: its default
        limit = 120.0
    items[:] = longest_first(items, measured_seconds(path), limit)
