"""A language outside skillassay is one module plus an entry point: found through a real installed
distribution (a ``.dist-info`` folder with ``entry_points.txt`` on sys.path), parsed lazily, and graded
with the SDK surface its Seam SDK shares (``Module.sdk``), named in evidence by its own label. The toy
language stands in for Ruby or PHP."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest
from rubric_helpers import PLAN_RUBRIC, scores

import skillassay.languages as languages
from skillassay import plugins
from skillassay.seam.plan import AnswerKey
from skillassay.seam.rubric import grade

TOY_MODULE = '''
"""Toy language: `def name` opens a function; an indented `a.b.c(key: value, ...)` line is a call with keywords."""
import re

from skillassay.languages.base import Call, Function, Module, Value

DEF = re.compile(r"^def (\\w+)")
CALL = re.compile(r"^\\s+([\\w.]+)\\((.*)\\)\\s*$")


def parse(source: bytes, path: str) -> Module:
    module = Module(path=path, language="toy", sdk="python", sdk_label="Toy SDK (toy-seam 1.0)")
    current = None
    for number, line in enumerate(source.decode().splitlines(), 1):
        if line.startswith("require "):
            module.import_sources.append(line.split()[1])
        elif (found := DEF.match(line)):
            module.functions.append(Function(name=found[1], qualname=found[1], start_line=number, end_line=number))
            current = len(module.functions) - 1
        elif (found := CALL.match(line)) and current is not None:
            keys = [part.split(":")[0].strip() for part in found[2].split(",") if ":" in part]
            module.calls.append(Call(chain=tuple(found[1].split(".")), line=number, scope=current,
                                     kwargs={k: Value("other", number) for k in keys}))
            module.functions[current].end_line = number
    return module
'''  # noqa: E501 - code inside a string, kept as written


@pytest.fixture
def toy_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    site = tmp_path / "site"
    (site / "toylang-1.0.dist-info").mkdir(parents=True)
    (site / "skillassay_toylang.py").write_text(TOY_MODULE)
    (site / "toylang-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toylang\nVersion: 1.0\n"
    )
    (site / "toylang-1.0.dist-info" / "entry_points.txt").write_text(
        "[skillassay.languages]\n.toy = skillassay_toylang:parse\n"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    plugins.refresh()
    yield
    plugins.refresh()
    sys.modules.pop("skillassay_toylang", None)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip())
    return root


KEY = AnswerKey(
    expected_files_modified=["bookings.toy"],
    expected_calls={
        "create": ["customers.push_data"],
        "update": ["customers.push_data"],
        "cancel": ["customers.delete_data"],
    },
    expected_placements={
        "customers.push_data": ["create_booking", "update_booking"],
        "customers.delete_data": ["cancel_booking"],
    },
    required_parameters={
        "push_data": ["customer_key", "reservations", "user_identities"],
        "delete_data": ["reservation_keys"],
    },
)


def test_an_entry_point_adds_a_language(toy_language) -> None:
    assert ".toy" in languages.extensions()
    assert "skillassay_toylang" not in sys.modules  # nothing imported until a .toy file is parsed
    parse = languages.parser_for("app/bookings.toy")
    assert parse is not None and parse.__module__ == "skillassay_toylang"
    module = parse(
        b"require seam\ndef create_booking\n  seam.customers.push_data(customer_key: k)\n", "bookings.toy"
    )
    assert [c.chain for c in module.calls] == [("seam", "customers", "push_data")]
    # built-ins stay
    assert languages.parser_for("app/bookings.py").__module__ == "skillassay.languages.python"


def test_a_plugin_language_is_graded_against_the_sdk_it_shares(toy_language, tmp_path: Path) -> None:
    pristine = _tree(
        tmp_path / "pristine",
        {
            "bookings.toy": """
            def create_booking
              db.save(booking: b)
            def update_booking
              db.save(booking: b)
            def cancel_booking
              db.delete(booking: b)
        """,
        },
    )
    modified = _tree(
        tmp_path / "modified",
        {
            "bookings.toy": """
            require seam
            def create_booking
              seam.customers.push_data(customer_key: k, reservations: r, user_identities: u)
            def update_booking
              seam.customers.pushData(customer_key: k, reservations: r, user_identities: u)
            def cancel_booking
              seam.customers.delete_data(reservation_keys: r)
        """,
        },
    )
    result = grade(pristine, modified, KEY, PLAN_RUBRIC, "reservation_automations")
    got = scores(result)
    assert got["api_path_selection"] == 1.0 and got["integration_placement"] == 1.0
    assert got["lifecycle_completeness"] == 1.0
    # snake_case with keyword arguments, checked against the Python surface; the camelCase call is no method
    # of it
    assert got["api_correctness"] == 0.75  # push_data: (1 + 0) / 2 call sites; delete_data: 1
    problems = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert any(
        "Toy SDK (toy-seam 1.0) has no `customers.pushData`; its method is `customers.push_data`" in p
        for p in problems
    ), problems
