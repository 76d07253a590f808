"""A pytest plugin that hands pytest-xdist the modules longest first, so no long module starts last and keeps
one worker busy while the others idle (``--dist loadscope`` sends whole modules to workers in collection
order; ``--no-loadscope-reorder`` keeps that order instead of xdist's own, by number of tests, which put the
one-test whole-suite modules, the longest of all, at the very end).

A module's expected seconds: its figure in ``module_seconds.json`` beside this file (what the last full run's
modules took, setup+call+teardown, as ``tests/long_guard.py`` writes it with ``--write-module-seconds PATH``),
else an estimate from its markers (a test marked ``long`` counts as the limit, a ``slow`` one as 10 s, any
other as half a second). Within a module the tests keep their order. The order changes which tests run when,
never which tests run. Registered from tests/conftest.py.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

SECONDS_FILE = Path(__file__).resolve().parent / "module_seconds.json"
SECONDS_INI = "module_seconds_file"
SLOW_TEST_SECONDS = 10.0
OTHER_TEST_SECONDS = 0.5


def measured_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    """{module node id: seconds} from ``path`` ({} when it is missing)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise pytest.UsageError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        raise pytest.UsageError(f"{path}: expected {{module: seconds}}")
    return {str(k): float(v) for k, v in data.items()}


def estimated_seconds(item: pytest.Item, limit: float) -> float:
    if item.get_closest_marker("long") is not None:
        return limit
    if item.get_closest_marker("slow") is not None:
        return SLOW_TEST_SECONDS
    return OTHER_TEST_SECONDS


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def longest_first(items: list[pytest.Item], measured: dict[str, float], limit: float) -> list[pytest.Item]:
    """``items`` with whole modules ordered by expected seconds, longest first (ties: collection order)."""
    estimate: dict[str, float] = defaultdict(float)
    first_seen: dict[str, int] = {}
    for i, item in enumerate(items):
        module = module_of(item)
        first_seen.setdefault(module, i)
        estimate[module] += estimated_seconds(item, limit)
    seconds = {m: measured.get(m, estimate[m]) for m in first_seen}
    rank = {m: (-seconds[m], first_seen[m]) for m in first_seen}
    return sorted(items, key=lambda item: rank[module_of(item)])  # stable: a module's own order stays


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(SECONDS_INI, "JSON {module: seconds} of the last full run (longest first)", default="")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    named = config.getini(SECONDS_INI)
    path = Path(config.rootpath, named) if named else SECONDS_FILE
    try:
        limit = float(config.getini("long_test_limit"))
    except (ValueError, TypeError):  # long_guard not loaded: its default
        limit = 120.0
    items[:] = longest_first(items, measured_seconds(path), limit)
