"""`skillassay check` on the shipped suite and on broken copies: exit 2 and a message naming file and
field.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

# registers the subcommands
from skillassay.cli.main import app
from skillassay.definitions import load_suite
from skillassay.definitions.check import check_path

runner = CliRunner()


def _errors(path: Path):
    return [p for p in check_path(path) if p.severity == "error"]


@pytest.fixture()
def suite(tmp_path: Path, evals_dir: Path) -> Path:
    """A copy of the shipped suite with one Seam fixture, small enough to break in each test."""
    dst = tmp_path / "evals"
    (dst / "fixtures").mkdir(parents=True)
    shutil.copy(evals_dir / "rubric.json", dst / "rubric.json")
    shutil.copytree(
        evals_dir / "fixtures" / "express-ts",
        dst / "fixtures" / "express-ts",
        ignore=shutil.ignore_patterns("node_modules", "dist", "test_controls"),
    )
    return dst


def _edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data, indent=2))


def test_shipped_suite_passes(evals_dir: Path) -> None:
    result = runner.invoke(app, ["check", str(evals_dir)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_shipped_suite_loads_one_model_per_eval(evals_dir: Path) -> None:
    evals = load_suite(evals_dir)
    ids = {e.id for e in evals}
    assert {"express-ts", "flask-py"} <= ids
    ts = next(e for e in evals if e.id == "express-ts")
    assert ts.language == "typescript" and ts.app_port == 3000 and ts.api_path == "reservation_automations"


def test_copy_is_valid(suite: Path) -> None:
    assert _errors(suite) == []


def test_missing_file(suite: Path) -> None:
    (suite / "fixtures/express-ts/answer_key.json").unlink()
    result = runner.invoke(app, ["check", str(suite)])
    assert result.exit_code == 2
    assert "answer_key.json" in result.output and "missing" in result.output


def test_missing_app_and_dockerfile(suite: Path) -> None:
    shutil.rmtree(suite / "fixtures/express-ts/app")
    (suite / "fixtures/express-ts/Dockerfile").unlink()
    msgs = [str(p) for p in _errors(suite)]
    assert any("app" in m and "pristine app folder is missing" in m for m in msgs)
    assert any("Dockerfile" in m and "missing" in m for m in msgs)


def test_invalid_json_reports_line_and_column(suite: Path) -> None:
    cfg = suite / "fixtures/express-ts/eval_config.json"
    cfg.write_text('{\n  "fixture": "express-ts",\n  "prompt": oops\n}')
    result = runner.invoke(app, ["check", str(suite)])
    assert result.exit_code == 2
    assert "eval_config.json" in result.output
    assert "line 3, column 13" in result.output


def test_unknown_check(suite: Path) -> None:
    _edit(suite / "rubric.json", lambda d: d["categories"][2].update(check="calls_somewhere"))
    [p] = _errors(suite)
    assert p.file.name == "rubric.json" and p.pointer == "/categories/2/check"
    assert "calls_somewhere" in p.message and "calls_in_expected_functions" in p.message


def test_weights_must_sum_to_100(suite: Path) -> None:
    _edit(suite / "rubric.json", lambda d: d["categories"][0].update(weight=20))
    [p] = _errors(suite)
    assert p.pointer == "/categories" and "105" in p.message and "100" in p.message


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.ts", "src/../../x.ts"])
def test_answer_key_paths_stay_inside_app(suite: Path, bad: str) -> None:
    _edit(
        suite / "fixtures/express-ts/answer_key.json", lambda d: d["expected_new_files_allowed"].append(bad)
    )
    errors = _errors(suite)
    assert len(errors) == 1
    p = errors[0]
    assert p.file.name == "answer_key.json" and p.pointer.startswith("/expected_new_files_allowed/")
    assert ("absolute" in p.message) or ("escapes" in p.message)


def test_placement_naming_undefined_function(suite: Path) -> None:
    _edit(
        suite / "fixtures/express-ts/answer_key.json",
        lambda d: d["expected_placements"]["customers.push_data"].append("bookReservation"),
    )
    errors = _errors(suite)
    assert len(errors) == 1
    p = errors[0]
    assert p.pointer == "/expected_placements/customers.push_data/2"
    assert "bookReservation" in p.message and "not defined" in p.message


def test_empty_response_id_path(suite: Path) -> None:
    _edit(
        suite / "fixtures/express-ts/eval_config.json",
        lambda d: d["test_endpoints"]["create"].update(response_id_path=""),
    )
    [p] = _errors(suite)
    assert p.pointer == "/test_endpoints/create/response_id_path" and "empty" in p.message


def test_wrong_field_type_names_pointer(suite: Path) -> None:
    _edit(suite / "fixtures/express-ts/eval_config.json", lambda d: d.update(app_port="three thousand"))
    [p] = _errors(suite)
    assert p.pointer == "/app_port"


def test_unknown_field_is_named(suite: Path) -> None:
    _edit(suite / "fixtures/express-ts/answer_key.json", lambda d: d.update(expected_fils_modified=[]))
    [p] = _errors(suite)
    assert p.pointer == "/expected_fils_modified" and "unknown field" in p.message


def test_unknown_api_path(suite: Path) -> None:
    _edit(
        suite / "fixtures/express-ts/eval_config.json", lambda d: d.update(expected_api_path="smoke_signals")
    )
    [p] = _errors(suite)
    assert p.pointer == "/expected_api_path" and "reservation_automations" in p.message


def test_nonexistent_path_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_list_shows_api_path_stack_and_port(evals_dir: Path) -> None:
    result = runner.invoke(app, ["list", str(evals_dir), "--json"])
    assert result.exit_code == 0
    rows = {r["id"]: r for r in json.loads(result.output)}
    assert rows["flask-py"]["stack"] == "python-flask" and rows["flask-py"]["app_port"] == 5000
    assert rows["express-ts"]["api_path"] == "reservation_automations"
    assert rows["nextjs-ts"]["stack"] == "typescript-nextjs" and rows["hotel-nextjs-ts"]["app_port"] == 3000
    assert rows["fastapi-py"]["stack"] == "python-fastapi" and rows["cowork-fastapi-py"]["app_port"] == 8000
    assert rows["hotel-express-ts"]["stack"] == "typescript-express"
    assert rows["cowork-rails-rb"]["stack"] == "ruby-rails" and rows["hotel-rails-rb"]["app_port"] == 3000
    assert rows["php-laravel"]["stack"] == "php-laravel" and rows["php-laravel"]["app_port"] == 8000
    assert rows["hotel-php-laravel"]["api_path"] == "access_grants"
    cowork = rows["cowork-php-laravel"]
    assert cowork["stack"] == "php-laravel" and cowork["app_port"] == 8000


def test_parameters_the_real_api_rejects_are_flagged(suite: Path) -> None:
    """The plan's own key asks for `customer_key` on delete_data: a warning naming the real parameter and
    what it does.
    """
    _edit(
        suite / "fixtures/express-ts/answer_key.json",
        lambda d: d["required_parameters"].update(delete_data=["customer_key", "reservation_keys"]),
    )
    problems = check_path(suite)
    assert [p for p in problems if p.severity == "error"] == []
    [w] = [p for p in problems if p.severity == "warning"]
    assert w.pointer == "/required_parameters/delete_data/0"
    assert "customer_keys" in w.message and "ALL of the customer's data" in w.message
    result = runner.invoke(app, ["check", str(suite), "--strict"])
    assert result.exit_code == 2


def test_one_wrong_type_does_not_hide_other_errors(suite: Path) -> None:
    def breaks(d):
        d["app_port"] = "abc"
        d["test_endpoints"]["update"]["method"] = "FETCH"

    _edit(suite / "fixtures/express-ts/eval_config.json", breaks)
    pointers = {p.pointer for p in _errors(suite)}
    assert pointers == {"/app_port", "/test_endpoints/update/method"}


def test_white_box_hidden_tests_are_flagged_as_forgeable(tmp_path: Path, evals_dir: Path) -> None:
    """The shipped eval's hidden tests are black-box; without `mode` they are white-box, which `check`
    warns of.
    """
    suite = tmp_path / "evals"
    shutil.copytree(evals_dir / "agent-evals", suite / "agent-evals")
    shutil.copytree(evals_dir / "fixtures" / "order-service", suite / "fixtures" / "order-service")
    toml = suite / "agent-evals" / "cancellation-support.toml"
    assert not [p for p in check_path(toml) if "forgeable" in p.message]
    text = toml.read_text()
    toml.write_text("\n".join(line for line in text.splitlines() if not line.startswith("mode = ")) + "\n")
    [w] = [p for p in check_path(toml) if "forgeable" in p.message]
    assert w.severity == "warning" and w.pointer == "/criteria/1/options/mode", w
    out = runner.invoke(app, ["check", str(suite)])
    assert out.exit_code == 0 and "forgeable" in out.output, out.output
