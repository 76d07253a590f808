"""Red team, issue 23 item 2: a losing agent must not be able to abstain. Unscored runs (harness errors) are
left out of every figure and rerun by --resume, so an agent that turns its failure into one improves its arm.
What the workspace holds can no longer do that: a step it makes unmeasurable is the agent's failure, with the
reason."""

from __future__ import annotations

import base64
import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.definitions.suite import load_suite
from skillassay.orchestrator.grading import grade
from skillassay.store import open as open_store
from skillassay.workspace.changes import copy_ignore

runner = CliRunner()

# the agent's whole work: a new module the parser cannot take (100,000 terms: RecursionError), and a
# 2,500-term expression in an existing function of the owning module (it parses; `ast.dump` of it overflowed)
ABSTAIN = r"""
open("orders/cancel.py", "w").write("X = " + " + ".join(["1"] * 100000) + "\n")
s = open("orders/service.py").read()
at = s.index("\n", s.index("    def ")) + 1
open("orders/service.py", "w").write(s[:at] + "        _x = " + " + ".join(["1"] * 2500) + "\n" + s[at:])
"""


def test_files_no_parser_takes_fail_the_run_instead_of_making_it_unscored(
    tmp_path: Path, evals_dir: Path
) -> None:
    """Before: `writes_database_directly` and `adds_parallel_service` raised RecursionError, and so did
    `scope_discipline`: a harness error, never scored, rerun by --resume (a free reroll)."""
    blob = base64.b64encode(ABSTAIN.encode()).decode()
    script = f"cd {{workspace}} && {sys.executable} -c \"import base64; exec(base64.b64decode('{blob}'))\""
    out = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            f"/bin/sh -c {shlex.quote(script)}",
            "--fixtures",
            "cancellation-support",
            "--results",
            str(tmp_path),
            "--json",
        ],
    )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    assert run["outcome"] == "completed" and run["harness_failures"] == [], run["error"]
    assert run["verdict"]["passed"] is False
    assert set(run["verdict"]["forbidden_observed"]) >= {"writes_database_directly", "adds_parallel_service"}
    process = json.loads((tmp_path / run["run_dir"] / "process.json").read_text())
    found = {f["id"]: f["evidence"] for f in process["forbidden"] if f["observed"]}
    assert found["adds_parallel_service"] == [
        (
            "unmeasurable because of the change: orders/cancel.py: nested "
            "too deep for the parsers (RecursionError)"
        )
    ]
    scope = next(c for c in process["criteria"] if c["id"] == "scope_discipline")
    assert scope["fraction"] == 0.0
    assert "orders/service.py: its syntax tree nests more than" in scope["evidence"][0]
    job = json.loads(out.stdout)["job_id"]
    assert open_store(tmp_path).missing_runs(job) == []  # --resume does not reroll it


@pytest.mark.parametrize(
    ("fixture", "rel", "tail"),
    [
        ("flask-py", "app.py", "\nX = " + "-" * 100_000 + "1\n"),  # MemoryError in Python's parser
        # RecursionError in the outline's walk
        ("express-ts", "src/index.ts", "\nconst X = " + " + ".join(["1"] * 100_000) + ";\n"),
    ],
    ids=["python: 100,000 signs", "typescript: 100,000 terms"],
)
def test_a_file_the_rubric_cannot_parse_scores_zero_with_the_reason(
    tmp_path: Path, evals_dir: Path, fixture: str, rel: str, tail: str
) -> None:
    """Before: the rubric raised (MemoryError, RecursionError): a harness error. Now the pristine app grades,
    so the change is why: every category 0, the file and the bound named."""
    import shutil

    [definition] = load_suite(evals_dir, [fixture])
    modified = tmp_path / "app"
    shutil.copytree(definition.app_dir, modified, ignore=copy_ignore(definition.app_dir))
    with (modified / rel).open("a") as fh:
        fh.write(tail)
    out = grade(definition, modified, tmp_path / "run", "r1", layers="rubric")
    assert out.failures == [] and out.grades["rubric_total"] == 0.0
    evidence = {c["evidence"][0]["message"] for c in out.rubric["categories"].values()}
    assert len(evidence) == 1 and evidence.pop().startswith(f"unmeasurable because of the change: {rel}: ")
    assert out.verdict is not None and out.verdict.passed is False


@pytest.mark.slow
def test_a_folder_where_the_harness_wrote_its_report_fails_the_run_instead_of_unscoring_it(
    tmp_path: Path, evals_dir: Path
) -> None:
    """The agent writes the `cancels_any_status` control's wrong change (honestly 75%, fail), then
    `mkdir .skillassay-junit.xml` and exit 1. Before: the JUnit report had that fixed name in the workspace,
    the harness's own unlink raised IsADirectoryError: a harness error, never scored, rerun by --resume."""
    from test_e2e_agents import changed_files, writer_command

    fx = evals_dir / "fixtures" / "order-service"
    write = writer_command(changed_files(fx / "app", fx / "test_controls" / "cancels_any_status"))
    command = f"/bin/sh -c {shlex.quote(f'{write} && mkdir .skillassay-junit.xml && exit 1')}"
    out = runner.invoke(
        app,
        [
            "run",
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            command,
            "--fixtures",
            "cancellation-support",
            "--runs",
            "1",
            "--results",
            str(tmp_path),
            "--json",
        ],
    )
    assert out.exit_code in (0, 1), out.output
    [run] = json.loads(out.stdout)["runs"]
    assert (tmp_path / run["run_dir"] / "workspace" / ".skillassay-junit.xml").is_dir()  # the attack happened
    assert run["outcome"] in ("agent_error", "completed"), run.get("error")
    assert run["harness_failures"] == []
    verdict = run["verdict"]
    assert verdict["passed"] is False and verdict["score"] == pytest.approx(0.75), verdict  # honest figure
    job = json.loads(out.stdout)["job_id"]
    assert open_store(tmp_path).missing_runs(job) == []  # --resume does not reroll it
