"""``skillassay rubric``: output shape, defaults, determinism, and exit 2 with a useful message on bad input;
each through typer and through the console script's entry point (``main``, which takes the typer-free fast
path)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from rubric_helpers import write_tree
from typer.testing import CliRunner

from skillassay.cli.main import app, main

RUBRIC = {
    "categories": [
        {"name": "api_path_selection", "weight": 15, "check": "api_path_match"},
        {"name": "file_targeting", "weight": 20, "check": "files_modified_match"},
        {"name": "integration_placement", "weight": 20, "check": "calls_in_expected_functions"},
        {"name": "api_correctness", "weight": 20, "check": "required_params_present"},
        {"name": "lifecycle_completeness", "weight": 15, "check": "all_handlers_modified"},
        {"name": "webhook_setup", "weight": 10, "check": "webhook_route_added"},
    ]
}
KEY = {
    "expected_files_modified": ["service.py"],
    "expected_calls": {"create": ["customers.push_data"]},
    "expected_placements": {"customers.push_data": ["create_reservation"]},
    "required_parameters": {"push_data": ["customer_key", "reservations[].space_keys"]},
}
CONFIG = {"fixture": "mini", "expected_api_path": "reservation_automations"}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "evals" / "fixtures" / "mini").mkdir(parents=True)
    (tmp_path / "evals" / "rubric.json").write_text(json.dumps(RUBRIC))
    fixture = tmp_path / "evals" / "fixtures" / "mini"
    (fixture / "answer_key.json").write_text(json.dumps(KEY))
    (fixture / "eval_config.json").write_text(json.dumps(CONFIG))
    write_tree(fixture / "app", {"service.py": "def create_reservation(r):\n    return r\n"})
    write_tree(
        tmp_path / "work",
        {
            "service.py": """
        from seam import Seam


        def create_reservation(r):
            Seam().customers.push_data(customer_key="p", reservations=[{"space_keys": ["u"]}])
            return r
    """
        },
    )
    return fixture


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _through_main(*args: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(["rubric", *args])
        except SystemExit as exc:
            code = exc.code or 0
    return Result(code, out.getvalue(), err.getvalue())


def _through_typer(*args: str) -> Result:
    r = CliRunner().invoke(app, ["rubric", *args])
    return Result(r.exit_code, r.stdout, r.stderr)


@pytest.fixture(params=["main", "typer"])
def run(request):
    return _through_main if request.param == "main" else _through_typer


def _args(fixture: Path) -> list[str]:
    return [
        "--pristine",
        str(fixture / "app"),
        "--modified",
        str(fixture.parents[2] / "work"),
        "--fixture-dir",
        str(fixture),
    ]


def test_output_with_evidence_and_plain(suite: Path, run):
    full = run(*_args(suite))
    assert full.exit_code == 0, full.output
    data = json.loads(full.stdout)
    assert data["total"] == 90.0  # everything but a webhook route
    assert data["categories"]["api_correctness"]["evidence"][0]["location"] == "service.py:5"
    plain = json.loads(run(*_args(suite), "--plain").stdout)
    expected = {c["name"]: {"score": 1.0, "weighted": float(c["weight"])} for c in RUBRIC["categories"]}
    expected["webhook_setup"] = {"score": 0.0, "weighted": 0.0}
    assert plain == {"total": 90.0, "categories": expected}


def test_byte_identical_output(suite: Path, run):
    assert run(*_args(suite)).stdout == run(*_args(suite)).stdout


def test_missing_answer_key(suite: Path, run):
    (suite / "answer_key.json").unlink()
    result = run(*_args(suite))
    assert result.exit_code == 2
    assert "answer_key.json" in result.stderr and "file is missing" in result.stderr


def test_invalid_json(suite: Path, run):
    (suite / "eval_config.json").write_text("{not json")
    result = run(*_args(suite))
    assert result.exit_code == 2
    assert "eval_config.json" in result.stderr and "invalid JSON" in result.stderr


def test_unknown_answer_key_field(suite: Path, run):
    (suite / "answer_key.json").write_text(json.dumps({**KEY, "expected_cals": {}}))
    result = run(*_args(suite))
    assert result.exit_code == 2
    assert "answer_key.json at /expected_cals" in result.stderr


def test_unknown_check_name(suite: Path, run, tmp_path: Path):
    rubric = {"categories": [{"name": "x", "weight": 100, "check": "calls_everywhere"}]}
    other = tmp_path / "other-rubric.json"
    other.write_text(json.dumps(rubric))
    result = run(*_args(suite), "--rubric", str(other))
    assert result.exit_code == 2
    assert "other-rubric.json" in result.stderr
    assert "/categories/0/check" in result.stderr and "calls_everywhere" in result.stderr


def test_unknown_api_path(suite: Path, run):
    (suite / "eval_config.json").write_text(json.dumps({**CONFIG, "expected_api_path": "magic"}))
    result = run(*_args(suite))
    assert result.exit_code == 2
    assert "expected_api_path" in result.stderr and "magic" in result.stderr


def test_help_explains_every_option(run):
    result = run("--help")
    assert result.exit_code == 0
    for option in ("--pristine", "--modified", "--fixture-dir", "--rubric", "--plain"):
        assert option in result.stdout


def test_both_ways_print_the_same(suite: Path):
    for extra in ([], ["--plain"]):
        a, b = _through_main(*_args(suite), *extra), _through_typer(*_args(suite), *extra)
        assert (a.exit_code, a.stdout) == (b.exit_code, b.stdout) == (0, a.stdout)
    (suite / "answer_key.json").write_text(json.dumps({**KEY, "expected_cals": {}}))
    a, b = _through_main(*_args(suite)), _through_typer(*_args(suite))
    assert (a.exit_code, a.stderr) == (b.exit_code, b.stderr) and a.exit_code == 2


def test_every_problem_reported_at_once(suite: Path, run):
    (suite / "answer_key.json").write_text(json.dumps({**KEY, "expected_calls": {"create": "not a list"}}))
    (suite / "eval_config.json").write_text(json.dumps({**CONFIG, "expected_api_path": "magic"}))
    result = run(*_args(suite))
    assert result.exit_code == 2
    assert "answer_key.json at /expected_calls/create" in result.stderr and "magic" in result.stderr


def test_usage_mistakes_go_through_typer(suite: Path, run):
    result = run("--pristine", str(suite / "app"), "--fixture-dir", str(suite))  # --modified missing
    assert result.exit_code == 2 and "--modified" in result.output
    result = run(*_args(suite), "--bogus")
    assert result.exit_code == 2 and "--bogus" in result.output


def test_the_cli_judges_lifecycle_from_the_fixtures_test_endpoints():
    """eval_config.json's test endpoints reach the rubric through the typer-free fast path too."""
    from rubric_helpers import REPO

    fixture = REPO / "evals" / "fixtures" / "flask-py"
    out = _through_main(
        "--pristine",
        str(fixture / "app"),
        "--modified",
        str(fixture / "test_golden"),
        "--fixture-dir",
        str(fixture),
    )
    assert out.exit_code == 0, out.output
    lifecycle = json.loads(out.stdout)["categories"]["lifecycle_completeness"]["evidence"]
    assert any(
        e["message"].startswith(
            "update: customers.push_data reached from PUT /api/reservations/{{RESERVATION_ID}}"
        )
        for e in lifecycle
    ), lifecycle
