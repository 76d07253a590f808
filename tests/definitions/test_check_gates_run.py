"""`check` gates `run`: every malformed definition that `check` rejects, `run` refuses too, both with exit 2
and a message naming the file and the field. One validation path
(``skillassay.definitions.suite.inspect_one``) serves both, so the two cannot disagree; this test holds
them to it, case by case."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app

runner = CliRunner()

FX = "fixtures/express-ts"
TOML = "agent-evals/cancellation-support.toml"


@pytest.fixture(scope="module")
def pristine_suite(tmp_path_factory: pytest.TempPathFactory, evals_dir: Path) -> Path:
    """A valid suite of two evals (one of each format), copied once; each case breaks a copy of it."""
    dst = tmp_path_factory.mktemp("suite") / "evals"
    (dst / "fixtures").mkdir(parents=True)
    (dst / "agent-evals").mkdir()
    shutil.copy(evals_dir / "rubric.json", dst / "rubric.json")
    skip = shutil.ignore_patterns("node_modules", "dist", "test_controls", "__pycache__")
    shutil.copytree(evals_dir / FX, dst / FX, ignore=skip)
    shutil.copytree(evals_dir / "fixtures/order-service", dst / "fixtures/order-service", ignore=skip)
    shutil.copy(evals_dir / TOML, dst / TOML)
    shutil.copytree(
        evals_dir / "agent-evals/cancellation-support", dst / "agent-evals/cancellation-support", ignore=skip
    )
    return dst


def _json(rel: str, fn: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        path = suite / rel
        data = json.loads(path.read_text())
        fn(data)
        path.write_text(json.dumps(data, indent=2))

    return edit


def _text(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        path = suite / rel
        text = path.read_text()
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, 1))

    return edit


def _write(rel: str, content: str) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        (suite / rel).write_text(content)

    return edit


def _remove(rel: str) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        p = suite / rel
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()

    return edit


def _symlink(rel: str, target: str) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        shutil.rmtree(suite / rel)
        (suite / rel).symlink_to(target)

    return edit


def _control_without_folder(suite: Path) -> None:
    (suite / FX / "test_controls").mkdir()
    (suite / FX / "test_controls/ghost.expected.json").write_text('{"description": "no folder beside it"}')


def _nested(rel: str, depth: int) -> Callable[[Path], None]:
    return _write(rel, "[" * depth + "]" * depth)


CFG = f"{FX}/eval_config.json"
KEY = f"{FX}/answer_key.json"
create = lambda d: d["test_endpoints"]["create"]  # noqa: E731

# (id, edit, file named, field named). The field is a JSON pointer, a Dockerfile line, or "" where the file
# itself (or folder) is the problem.
CASES: list[tuple[str, Callable[[Path], None], str, str]] = [
    # --- the cases of issue 14 that `run` used to let through
    (
        "bad-http-method",
        _json(CFG, lambda d: create(d).update(method="FETCH")),
        "eval_config.json",
        "/test_endpoints/create/method",
    ),
    (
        "unknown-api-path",
        _json(CFG, lambda d: d.update(expected_api_path="teleport")),
        "eval_config.json",
        "/expected_api_path",
    ),
    (
        "weights-sum-90",
        _json("rubric.json", lambda d: d["categories"][0].update(weight=5)),
        "rubric.json",
        "/categories",
    ),
    (
        "dotdot-in-answer-key",
        _json(KEY, lambda d: d["expected_new_files_allowed"].append("../../outside.ts")),
        "answer_key.json",
        "/expected_new_files_allowed/4",
    ),
    (
        "threshold-500",
        _json(CFG, lambda d: d.update(pass_threshold=500)),
        "eval_config.json",
        "/pass_threshold",
    ),
    (
        "absolute-url-endpoint",
        _json(CFG, lambda d: create(d).update(path="http://evil.example/api/reservations")),
        "eval_config.json",
        "/test_endpoints/create/path",
    ),
    (
        "unknown-rubric-check",
        _json("rubric.json", lambda d: d["categories"][0].update(check="vibes_match")),
        "rubric.json",
        "/categories/0/check",
    ),
    (
        "unknown-sdk-method",
        _json(KEY, lambda d: d["expected_calls"]["create"].append("customers.push_dta")),
        "answer_key.json",
        "/expected_calls/create/1",
    ),
    ("prompt-20mb", _json(CFG, lambda d: d.update(prompt="x" * 20_000_000)), "eval_config.json", "/prompt"),
    (
        "multi-stage-dockerfile",
        _write(
            f"{FX}/Dockerfile",
            'FROM node:20 AS build\nRUN npm ci\nFROM node:20-slim\nCMD ["node", "dist/index.js"]\n',
        ),
        "Dockerfile",
        "line 3",
    ),
    ("missing-test-golden", _remove(f"{FX}/test_golden"), "test_golden", ""),
    (
        "negative-timeout",
        _json(CFG, lambda d: d.update(timeouts={"health": -5})),
        "eval_config.json",
        "/timeouts/health",
    ),
    (
        "invalid-regex-toml",
        _text(TOML, 'operation = "(?i)cancel"', 'operation = "(cancel"'),
        "cancellation-support.toml",
        "/criteria/0/options/operation",
    ),
    (
        "hidden-tests-at-etc",
        _text(
            TOML, "[criteria.options]\npartial = false", '[criteria.options]\npartial = false\npath = "/etc"'
        ),
        "cancellation-support.toml",
        "/criteria/1/options/path",
    ),
    (
        "empty-gate-command",
        _text(TOML, 'command = "python -m compileall -q orders"', 'command = "  "'),
        "cancellation-support.toml",
        "/quality_requirements/0/command",
    ),
    (
        "fixture-dotdot",
        _text(TOML, 'fixture = "order-service"', 'fixture = "../../evals/fixtures/order-service"'),
        "cancellation-support.toml",
        "/fixture",
    ),
    ("app-symlink-to-etc", _symlink(f"{FX}/app", "/etc"), "app", ""),
    ("json-nested-100k", _nested(KEY, 100_000), "answer_key.json", ""),
    (
        "missing-seam-section",
        _json(CFG, lambda d: create(d)["payload"].pop("unitId")),
        "eval_config.json",
        "/seam",
    ),
    # --- the rest of the 41: already refused by both, kept so they stay refused
    ("missing-answer-key", _remove(KEY), "answer_key.json", ""),
    (
        "invalid-json",
        _write(CFG, '{\n  "fixture": "express-ts",\n  "prompt": oops\n}'),
        "eval_config.json",
        "line 3",
    ),
    ("unknown-field", _json(CFG, lambda d: d.update(colour="blue")), "eval_config.json", "/colour"),
    (
        "wrong-type-port",
        _json(CFG, lambda d: d.update(app_port="three thousand")),
        "eval_config.json",
        "/app_port",
    ),
    ("missing-prompt", _json(CFG, lambda d: d.pop("prompt")), "eval_config.json", "/prompt"),
    ("missing-dockerfile", _remove(f"{FX}/Dockerfile"), "Dockerfile", ""),
    ("missing-app", _remove(f"{FX}/app"), "app", ""),
    ("rubric-invalid-json", _write("rubric.json", "{ nope"), "rubric.json", "line 1"),
    (
        "duplicate-category",
        _json("rubric.json", lambda d: d["categories"][1].update(name="api_path_selection")),
        "rubric.json",
        "/categories/1/name",
    ),
    (
        "negative-category-weight",
        _json("rubric.json", lambda d: d["categories"][0].update(weight=-15)),
        "rubric.json",
        "/categories/0/weight",
    ),
    (
        "empty-response-id-path",
        _json(CFG, lambda d: create(d).update(response_id_path=" . ")),
        "eval_config.json",
        "/test_endpoints/create/response_id_path",
    ),
    (
        "missing-response-id-path",
        _json(CFG, lambda d: create(d).pop("response_id_path")),
        "eval_config.json",
        "/test_endpoints/create/response_id_path",
    ),
    (
        "absolute-answer-key-path",
        _json(KEY, lambda d: d["expected_files_modified"].insert(0, "/etc/passwd")),
        "answer_key.json",
        "/expected_files_modified/0",
    ),
    (
        "nonexistent-modified-file",
        _json(KEY, lambda d: d["expected_files_modified"].insert(0, "src/nope.ts")),
        "answer_key.json",
        "/expected_files_modified/0",
    ),
    (
        "undefined-placement",
        _json(KEY, lambda d: d["expected_placements"]["customers.push_data"].insert(0, "nope")),
        "answer_key.json",
        "/expected_placements/customers.push_data/0",
    ),
    ("control-without-folder", _control_without_folder, "ghost.expected.json", ""),
    ("toml-syntax", _text(TOML, 'title = "', "title = "), "cancellation-support.toml", "invalid TOML"),
    (
        "unknown-grader",
        _text(TOML, 'grader = "diff"', 'grader = "vibes"'),
        "cancellation-support.toml",
        "/criteria/0/grader",
    ),
    (
        "duplicate-criterion",
        _text(TOML, 'id = "respects_transitions"', 'id = "cancels_via_service"'),
        "cancellation-support.toml",
        "/criteria/1/id",
    ),
    (
        "id-not-file-name",
        _text(TOML, 'id = "cancellation-support"', 'id = "something-else"'),
        "cancellation-support.toml",
        "/id",
    ),
    (
        "zero-weight",
        _text(TOML, "weight = 25", "weight = 0"),
        "cancellation-support.toml",
        "/criteria/0/weight",
    ),
    (
        "toml-threshold",
        _text(TOML, "pass_threshold = 0.8", "pass_threshold = 1.5"),
        "cancellation-support.toml",
        "/pass_threshold",
    ),
    (
        "unknown-required-gate",
        _text(TOML, 'requires = ["build"]', 'requires = ["compile"]'),
        "cancellation-support.toml",
        "/quality_requirements/1/requires/0",
    ),
    (
        "unknown-criterion-gate",
        _text(TOML, 'gates = ["build"]', 'gates = ["compile"]'),
        "cancellation-support.toml",
        "/criteria/0/gates/0",
    ),
    (
        "empty-prompt",
        _text(TOML, 'prompt = """', 'prompt = ""\nunused = """'),
        "cancellation-support.toml",
        "/prompt",
    ),
    (
        "missing-hidden-tests",
        _remove("agent-evals/cancellation-support/hidden_tests"),
        "cancellation-support.toml",
        "/criteria/1/options/path",
    ),
    (
        "unknown-fixture",
        _text(TOML, 'fixture = "order-service"', 'fixture = "order-servic"'),
        "cancellation-support.toml",
        "/fixture",
    ),
]


def _named(output: str, file: str, field: str) -> bool:
    """One error line names the file and (when there is one) the field."""
    lines = [ln for ln in output.splitlines() if ln.startswith("error") and file in ln]
    return any(field in ln for ln in lines) if field else bool(lines)


@pytest.mark.parametrize(("edit", "file", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_and_run_refuse_with_file_and_field(
    pristine_suite: Path, tmp_path: Path, edit, file: str, field: str
) -> None:
    suite = tmp_path / "evals"
    shutil.copytree(pristine_suite, suite, symlinks=True)
    edit(suite)

    checked = runner.invoke(app, ["check", str(suite)])
    assert checked.exit_code == 2, checked.output
    assert _named(checked.output, file, field), checked.output

    results = tmp_path / "results"
    ran = runner.invoke(
        app, ["run", str(suite), "--agent", "noop", "--layers", "rubric", "--results", str(results)]
    )
    assert ran.exit_code == 2, ran.output
    assert _named(ran.output, file, field), ran.output
    assert not (results.exists() and any(results.glob("*/job.json"))), "a refused job must record nothing"


def test_the_valid_copy_passes_both(pristine_suite: Path, tmp_path: Path) -> None:
    """The cases above fail for their edit, not because the copied suite is already broken."""
    checked = runner.invoke(app, ["check", str(pristine_suite)])
    assert checked.exit_code == 0, checked.output


def test_huge_and_deep_inputs_exit_2_without_a_traceback(pristine_suite: Path, tmp_path: Path) -> None:
    """Through the real console script: a 100,000-deep JSON file and a deep TOML array are errors, not
    crashes.
    """
    suite = tmp_path / "evals"
    shutil.copytree(pristine_suite, suite, symlinks=True)
    _nested(CFG, 100_000)(suite)
    _text(TOML, "pass_threshold = 0.8", "pass_threshold = 0.8\nnotes_deep = " + "[" * 50_000 + "]" * 50_000)(
        suite
    )
    exe = Path(sys.executable).parent / "skillassay"
    env = {**os.environ, "NO_COLOR": "1"}
    for argv in (
        ["check", str(suite)],
        ["run", str(suite), "--agent", "noop", "--results", str(tmp_path / "r")],
    ):
        proc = subprocess.run([str(exe), *argv], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout
        assert re.search(r"eval_config\.json.*nested", proc.stderr), proc.stderr
        assert re.search(r"cancellation-support\.toml.*nested", proc.stderr), proc.stderr
