"""Terminal output that fits and reads: 80 columns with no word broken (columns are left out instead),
progress naming each run's eval and phase, flags without a `<bool>`, help in whole sentences, one-line
usage errors with a "did you mean", the known jobs for a wrong `runs --job`, and no interval for a single
run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from synthetic_runs import make_job

from skillassay.cli.progress import RunProgress
from skillassay.orchestrator.job import JobOptions, run_job
from skillassay.phases import RunKey
from skillassay.report.tables import summary_table
from skillassay.scoring.stats import summarize

SKILLASSAY = [sys.executable, "-m", "skillassay"]
EVALS = ("cowork-express-ts", "hotel-fastapi-py")


def _cli(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    """The entry point in a child process (what a shell sees), for the run whose console is made at import."""
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run(
        [*SKILLASSAY, *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )


@pytest.fixture
def main(capsys, monkeypatch):
    """``skillassay ARGS`` in this process, through the same ``main`` as the entry point: (code, stdout,
    stderr).
    """
    from skillassay.cli.main import main as entry

    def call(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setenv("NO_COLOR", "1")
        capsys.readouterr()
        try:
            entry(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)

    return call


def _whole(text: str, *words: str) -> None:
    """Each word appears whole on some line, and no line is wider than 80 columns."""
    lines = text.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    for w in words:
        assert any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", ln) for ln in lines), (w, text)


def test_the_run_summary_and_runs_table_fit_80_columns(tmp_path: Path, evals_dir: Path, main) -> None:
    results = tmp_path / "r"
    out = _cli(
        "run", str(evals_dir), "--fixtures", ",".join(EVALS), "--layers", "rubric", "--results", str(results)
    )
    assert out.returncode == 0, out.stderr
    _whole(out.stdout, *EVALS, "Eval", "Verdict", "Notes")
    assert "Rubri\n" not in out.stdout and "cowork-e" not in out.stdout.replace("cowork-express-ts", "")
    job = next(p.parent.name for p in results.glob("*/job.json"))
    runs = main("runs", "--job", job, "--results", str(results))
    assert runs.returncode == 0, runs.stderr
    _whole(runs.stdout, *EVALS, "eval", "outcome", "verdict", "completed")
    jobs = main("runs", "--results", str(results))
    _whole(jobs.stdout, job, "job", "agent", "status")


def test_progress_names_the_eval_and_phase_of_each_run(tmp_path: Path, evals_dir: Path) -> None:
    heard: list[tuple[str, str]] = []

    def on_event(kind, record, exc, job_id=None, run=None, phase=None):
        if kind == "phase":
            heard.append((run.label(), phase))

    run_job(
        JobOptions(suite=evals_dir, fixtures=["flask-py"], layers="rubric", results=tmp_path / "r"),
        on_event=on_event,
    )
    assert heard[:3] == [
        ("flask-py run 1", "workspace"),
        ("flask-py run 1", "agent"),
        ("flask-py run 1", "grading"),
    ]

    con = Console(width=80, record=True, force_terminal=False)
    shown = RunProgress(con, "reference", total=2)
    shown.phase(RunKey("j", "cowork-express-ts", "baseline", 1), "install")
    shown.phase(RunKey("j", "hotel-fastapi-py", "skill", 1), "agent")
    con.print(shown.progress.make_tasks_table(shown.progress.tasks))
    text = con.export_text()
    assert re.search(r"cowork-express-ts baseline run 1 +install", text) and "hotel-fastapi-py run 1" in text
    _whole(text, "agent", "install", "0/2")


def test_help_has_no_bool_metavars_and_whole_sentences(main) -> None:
    root = main("--help", columns=200)
    assert "<bool>" not in root.stdout
    # regrade's description, once broken mid-sentence at a newline
    assert "print what changed." in root.stdout
    run = main("run", "--help", columns=200)
    assert run.returncode == 0 and "--baseline" in run.stdout and "<bool>" not in run.stdout
    assert "app logs, run.json)" in run.stdout


def _one_error(out: subprocess.CompletedProcess, *needles: str) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "Input should" not in lines[0] and "╭" not in lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_usage_errors_are_one_line_with_did_you_mean(evals_dir: Path, main) -> None:
    _one_error(_cli("runz"), "no command 'runz'", "did you mean run")  # and from a shell, the same
    _one_error(main("run", "--jbos", "2"), "run: no option --jbos", "did you mean --jobs?")
    _one_error(main("run", "--jobs", "0"), "--jobs must be at least 1")
    _one_error(main("run", "--runs", "two"), "--runs must be a whole number")
    _one_error(
        main("run", str(evals_dir), "--fixtures", "flsk-py", "--layers", "rubric"),
        "unknown eval(s): flsk-py",
        "did you mean flask-py?",
    )


def test_runs_of_an_unknown_job_lists_the_known_ones(tmp_path: Path, main) -> None:
    make_job(tmp_path, job_id="20261201-000000-aaaa", evals=("flask-py",), runs=1, artifacts=False)
    main("runs", "--results", str(tmp_path), "--reindex")
    _one_error(
        main("runs", "--job", "nope", "--results", str(tmp_path)),
        "no job 'nope'",
        "known: 20261201-000000-aaaa",
    )
    line = _one_error(main("runs", "--job", "20261201-000000-aaab", "--results", str(tmp_path)))
    assert "did you mean 20261201-000000-aaaa?" in line


def test_one_run_has_no_interval(tmp_path: Path) -> None:
    _, runs = make_job(tmp_path, evals=("flask-py",), runs=1, artifacts=False)
    con = Console(width=200, record=True)
    con.print(summary_table("Job", summarize(runs), runs))
    text = con.export_text()
    score = f"{runs[0].verdict.score * 100:.1f}%"
    assert f"{score} – {score}" not in text and "–" in text
    assert json.dumps(text)  # rendered
