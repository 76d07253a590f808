"""The command line as a whole: ``cli/main.py`` registers every command itself (no test imports anything by
hand), a command's module is imported only when that command runs, and ``rubric``'s typer-free path accepts
exactly the typer command's options and loads none of the heavy libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from skillassay.cli.main import COMMANDS, app
from skillassay.seam.cli import fast

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "evals" / "fixtures" / "express-ts"
HEAVY = ("typer", "click", "rich", "pydantic", "jsonschema", "httpx", "jinja2", "yaml")


def _fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter (nothing imported beforehand); it prints one JSON object."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _modules_after_main(args: list[str]) -> dict:
    return _fresh(
        "import io, json, sys, contextlib\n"
        "from skillassay.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({args!r}); code = 0\n"
        "    except SystemExit as e:\n"
        "        code = e.code or 0\n"
        "print(json.dumps({'code': code, 'out': out.getvalue(), 'modules': sorted(sys.modules)}))\n"
    )


def test_app_is_complete_in_a_fresh_interpreter():
    got = _fresh(
        "import json, typer\n"
        "from skillassay.cli.main import app\n"
        "group = typer.main.get_command(app)\n"
        "names = group.list_commands(None)\n"
        "found = [n for n in names if group.get_command(None, n) is not None]\n"
        "print(json.dumps({'names': names, 'found': found}))\n"
    )
    assert got["names"] == got["found"] == list(COMMANDS)


def test_root_help_lists_every_command_and_each_command_has_help():
    runner = CliRunner()
    root = runner.invoke(app, ["--help"])
    assert root.exit_code == 0
    for name in COMMANDS:
        assert name in root.stdout
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert f"skillassay {name}" in result.stdout


def test_every_command_module_exports_its_commands():
    import importlib

    for name, module in COMMANDS.items():
        group = typer.main.get_group(importlib.import_module(module).commands)
        assert name in group.commands, (name, module)


def test_a_command_imports_only_its_own_module():
    got = _modules_after_main(["list", "evals", "--json"])
    assert got["code"] == 0 and json.loads(got["out"])
    loaded = {m for m in got["modules"] if m.startswith("skillassay.cli.")}
    # its own module, and the options several commands share; never another command's module
    assert loaded == {"skillassay.cli.main", "skillassay.cli.definitions", "skillassay.cli.options"}


def test_rubric_runs_without_typer_rich_or_pydantic():
    got = _modules_after_main(
        [
            "rubric",
            "--pristine",
            str(GOLDEN / "app"),
            "--modified",
            str(GOLDEN / "test_golden"),
            "--fixture-dir",
            str(GOLDEN),
            "--plain",
        ]
    )
    assert got["code"] == 0 and json.loads(got["out"])["total"] == 100.0
    heavy = [m for m in got["modules"] if m.split(".")[0] in HEAVY]
    assert heavy == []


def test_rubric_as_a_whole_process_prints_its_whole_result():
    # that process ends without the interpreter's teardown (cli/main.py, _exit_now): what it wrote to a pipe
    # (block-buffered: none of it written yet) must still all arrive, and be what the command gives in process
    argv = ["rubric", "--pristine", str(GOLDEN / "app"), "--modified", str(GOLDEN / "test_golden")]
    argv += ["--fixture-dir", str(GOLDEN)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = [sys.executable, "-m", "skillassay", *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout) == json.loads(_modules_after_main(argv)["out"])


def _rubric_modules(fixture: str) -> dict:
    folder = REPO / "evals" / "fixtures" / fixture
    return _modules_after_main(
        [
            "rubric",
            "--pristine",
            str(folder / "app"),
            "--modified",
            str(folder / "test_golden"),
            "--fixture-dir",
            str(folder),
            "--plain",
        ]
    )


# what a grade of Python files alone must never load: the tree-sitter parsers and their grammars,
# importlib.metadata's scan of every installed distribution (entry points are read by plugins.quick), the
# emulator (its OpenAPI document: the rubric reads the route names from its own list) and shutil with the
# compression modules it imports (grading reads trees, never copies them)
NOT_FOR_PYTHON = (
    "tree_sitter",
    "tree_sitter_javascript",
    "tree_sitter_typescript",
    "tree_sitter_ruby",
    "importlib.metadata",
    "skillassay.seam.emulator",
    "skillassay.seam.emulator.spec",
    "shutil",
    "lzma",
    "bz2",
)


# what no grade loads, whatever its languages: a grammar package's extras (its query files, read through
# importlib.resources, which imports tempfile, shutil and the compression modules) and the programs a stack
# runs to install an app (subprocess, shlex)
NEVER_FOR_A_GRADE = ("importlib.resources", "tempfile", "shutil", "lzma", "bz2", "subprocess", "shlex")


@pytest.mark.parametrize("fixture", ["express-ts", "rails-rb", "php-laravel", "fastapi-py"])
def test_no_grade_loads_a_grammar_package_or_a_process_runner(fixture: str):
    got = _rubric_modules(fixture)
    assert got["code"] == 0 and json.loads(got["out"])["total"] == 100.0
    assert sorted(m for m in got["modules"] if m in NEVER_FOR_A_GRADE) == []


@pytest.mark.parametrize("fixture", ["flask-py", "fastapi-py"])
def test_a_python_only_change_loads_no_javascript_grammar(fixture: str):
    got = _rubric_modules(fixture)
    assert got["code"] == 0 and json.loads(got["out"])["total"] == 100.0
    modules = set(got["modules"])
    assert "skillassay.languages.python" in modules  # the change was parsed, by the Python parser alone
    assert sorted(m for m in modules if m in NOT_FOR_PYTHON or m == "skillassay.languages.typescript") == []
    assert "skillassay.languages.ruby" not in modules


@pytest.mark.parametrize("fixture", ["rails-rb", "cowork-rails-rb"])
def test_a_raw_http_change_reads_the_route_names_not_the_openapi_document(fixture: str):
    # these goldens call Seam through Faraday: the routes are matched without parsing the 2 MB document
    got = _rubric_modules(fixture)
    assert got["code"] == 0 and json.loads(got["out"])["total"] == 100.0
    modules = set(got["modules"])
    assert "skillassay.seam.rubric.rawhttp" in modules  # the raw HTTP calls were looked at
    assert sorted(m for m in modules if m.startswith("skillassay.seam.emulator") or m == "gzip") == []
    assert sorted(m for m in modules if m in ("tree_sitter_typescript", "skillassay.languages.python")) == []


def test_a_typescript_change_loads_the_typescript_grammar():
    # the counterpart: the same look at sys.modules sees a grammar when the change needs one
    got = _rubric_modules("express-ts")
    assert got["code"] == 0 and json.loads(got["out"])["total"] == 100.0
    grammar = {"tree_sitter", "tree_sitter_typescript._binding", "skillassay.languages.typescript"}
    assert grammar <= set(got["modules"])
    assert "importlib.metadata" not in got["modules"]
    # the grammar's compiled binding alone: its package's __init__ (importlib.resources, and with it tempfile,
    # shutil and the compression modules) is not run
    assert sorted(m for m in got["modules"] if m in NEVER_FOR_A_GRADE) == []
    # and only that one: neither the Ruby grammar nor the Python parser, nor the emulator
    unneeded = ("tree_sitter_ruby", "skillassay.languages.ruby", "skillassay.languages.python")
    loaded = [m for m in got["modules"] if m in unneeded or m.startswith("skillassay.seam.emulator")]
    assert loaded == []


def test_fast_options_are_the_typer_commands_options():
    from skillassay.seam.cli.rubric import commands

    command = typer.main.get_group(commands).commands["rubric"]
    typer_options = {opt: (p.name, not p.is_flag) for p in command.params for opt in p.opts}
    assert typer_options == fast.OPTIONS
    required = {p.name for p in command.params if p.required}
    assert required == set(fast.REQUIRED)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--pristine", "a", "--modified", "b"],  # --fixture-dir missing
        ["--pristine", "a", "--modified", "b", "--fixture-dir", "c", "--unknown"],
        ["--pristine", "a", "--pristine", "b", "--modified", "b", "--fixture-dir", "c"],
        ["--pristine"],
    ],
)
def test_fast_path_leaves_anything_unusual_to_typer(argv):
    assert fast.rubric(argv) is None


def test_fast_path_reads_equals_form(tmp_path: Path):
    assert fast._parse(["--pristine=a", "--modified", "b", "--fixture-dir=c", "--plain"]) == {
        "pristine": "a",
        "modified": "b",
        "fixture_dir": "c",
        "rubric_file": None,
        "plain": True,
    }
