"""Open registries: another package adds an agent, a grader, a detector or a service by declaring entry
points, without touching skillassay; skillassay's own are found the same way, and a package cannot take
over their names.

The other package is a real distribution on sys.path (a ``*.dist-info`` with ``entry_points.txt`` beside its
module), which is what ``pip install`` leaves; importlib.metadata finds it like any installed one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillassay import plugins
from skillassay.agents import available_agents, get_agent
from skillassay.definitions.native import load_native
from skillassay.errors import DefinitionError
from skillassay.graders import evaluate
from skillassay.services import available_services, service_class

REPO = Path(__file__).resolve().parent.parent

MODULE = """
from pydantic import BaseModel

from skillassay.agents.base import Agent, AgentResult
from skillassay.graders.base import Detection, GradeResult
from skillassay.transcripts import Transcript


class AcmeAgent(Agent):
    name = "acme"
    description = "writes ACME.md"

    def run(self, ctx):
        (ctx.workspace / "ACME.md").write_text("made by acme\\n")
        return AgentResult(status="completed", exit_code=0, transcript=Transcript(agent="acme"))


class WordsOptions(BaseModel):
    word: str


def grade_words(criterion, ctx):
    word = WordsOptions.model_validate(criterion.options).word
    hits = [p for p in ctx.change.written if word in (ctx.change.read(p, "modified") or "")]
    return GradeResult(fraction=1.0 if hits else 0.0, evidence=[f"{word!r} in {hits}"])


grade_words.options = WordsOptions


def detect_todo(behaviour, ctx):
    found = [p for p in ctx.change.written if "TODO" in (ctx.change.read(p, "modified") or "")]
    return Detection(observed=bool(found), evidence=found)


def hijacked_diff(criterion, ctx):
    return GradeResult(fraction=1.0, evidence=["hijacked"])


class AcmeService:
    def start(self, host="127.0.0.1", port=0):
        self.base_url = f"http://{host}:{port}"
        return self

    def stop(self):
        pass
"""

ENTRY_POINTS = """
[skillassay.agents]
acme = acme_plugin:AcmeAgent

[skillassay.graders]
acme_words = acme_plugin:grade_words
diff = acme_plugin:hijacked_diff

[skillassay.detectors]
acme_todo = acme_plugin:detect_todo

[skillassay.services]
acme = acme_plugin:AcmeService
"""


def make_distribution(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "acme_plugin.py").write_text(MODULE)
    info = root / "acme_skillassay-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-skillassay\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (info / "RECORD").write_text("")
    return root


@pytest.fixture
def acme(tmp_path: Path, monkeypatch):
    root = make_distribution(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    plugins.refresh()
    yield root
    plugins.refresh()


def test_shipped_ones_are_entry_points_too():
    assert available_agents() == ["claude-code", "codex", "command", "noop", "reference"]
    assert plugins.names("skillassay.graders") == [
        "diff",
        "gates",
        "hidden_tests",
        "llm_judge",
        "meaningful_tests",
        "policy",
    ]
    assert set(plugins.names("skillassay.detectors")) == {
        "database_writes",
        "forbidden_commands",
        "parallel_service",
        "test_tampering",
        "unsupported_claims",
    }
    assert available_services() == ["seam"]
    assert service_class("seam").__name__ == "SeamEmulator"
    assert all(plugins.shipped("skillassay.agents", n) for n in available_agents())


def test_another_package_adds_an_agent_and_a_service(acme):
    assert available_agents()[-1] == "acme" and get_agent("acme").description == "writes ACME.md"
    assert "acme" in available_services() and service_class("acme")().start(port=5).base_url.endswith(":5")


def test_a_shipped_name_cannot_be_taken_over(acme):
    assert plugins.load("skillassay.graders", "diff").__module__ == "skillassay.graders.diff"
    assert plugins.conflicts("skillassay.graders") == [
        "skillassay.graders: 'diff' of acme-skillassay ignored (skillassay ships that name)"
    ]


EVAL = """
id = "acme-eval"
title = "Uses another package's grader and detector"
prompt = "Write the word."
fixture = "tiny"

[[criteria]]
id = "says_it"
description = "The change says the word"
weight = 1
grader = "acme_words"
[criteria.options]
word = "{word}"

[[forbidden_behaviour]]
id = "no_todos"
description = "No TODO left behind"
detector = "acme_todo"
"""


def test_another_package_adds_a_grader_and_a_detector(acme, tmp_path: Path):
    suite = tmp_path / "suite"
    (suite / "fixtures" / "tiny" / "app").mkdir(parents=True)
    (suite / "fixtures" / "tiny" / "app" / "app.py").write_text("x = 1\n")
    (suite / "agent-evals").mkdir()
    path = suite / "agent-evals" / "acme-eval.toml"
    path.write_text(EVAL.format(word="hello"))
    definition = load_native(path, suite)
    modified = tmp_path / "modified"
    modified.mkdir()
    (modified / "app.py").write_text("x = 'hello'  # TODO\n")
    result = evaluate(definition, definition.app_dir, modified, None, tmp_path / "work")
    assert result.criteria[0].fraction == 1.0 and result.criteria[0].evidence == ["'hello' in ['app.py']"]
    assert result.forbidden_observed == ["no_todos"] and result.verdict.disqualified
    # the package's own options model checks the definition when it loads: file + field, exit 2
    path.write_text(EVAL.format(word="hello").replace('word = "hello"', "words = 3"))
    with pytest.raises(DefinitionError) as info:
        load_native(path, suite)
    [problem] = info.value.problems
    assert problem.pointer == "/criteria/0" and "options/word" in problem.message
    # an unknown grader is still an error that lists every known one, the package's too
    path.write_text(EVAL.format(word="x").replace('"acme_words"', '"acme_wordz"'))
    with pytest.raises(DefinitionError) as info:
        load_native(path, suite)
    [problem] = info.value.problems
    assert (
        problem.pointer == "/criteria/0/grader"
        and "acme_words" in problem.message
        and "diff" in problem.message
    )


def test_an_installed_package_runs_through_the_cli(tmp_path: Path, evals_dir: Path):
    """A fresh interpreter with the package on its path: ``skillassay run --agent acme`` finds it."""
    root = make_distribution(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillassay",
            "run",
            str(evals_dir),
            "--agent",
            "acme",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(tmp_path / "results"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    [run] = json.loads(proc.stdout)["runs"]
    assert run["agent"] == "acme" and run["outcome"] == "completed"
    assert "made by acme" in (tmp_path / "results" / run["run_dir"] / "diff.patch").read_text()


def test_stale_metadata_is_named(monkeypatch):
    """skillassay's own entry points missing (an old editable install): a clear error, not an empty
    registry.
    """
    import importlib.metadata as md

    monkeypatch.setattr(md, "entry_points", lambda **kw: [])
    plugins.refresh()
    try:
        with pytest.raises(plugins.PluginError, match=textwrap.shorten("reinstall it", 20)):
            plugins.names("skillassay.agents")
    finally:
        monkeypatch.undo()
        plugins.refresh()
