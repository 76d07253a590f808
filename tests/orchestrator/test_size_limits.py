"""A change larger than the run's limit is recorded as such, graded on the rest, and stored once: an agent
that solves the task and also writes a huge file, a huge binary, a sparse file and a big file only in its
git history; an agent that prints more than a log may keep."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from typer.testing import CliRunner

from skillassay.cli.main import app

runner = CliRunner()
MB = 1_000_000


def _run(args: list[str]) -> dict:
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _stored(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() or p.is_symlink())


def test_a_change_over_the_limit_is_listed_graded_on_the_rest_and_stored_once(
    tmp_path: Path, evals_dir: Path
) -> None:
    agent_dir = tmp_path / "agent"  # mounted read-only into the agent's sandbox: its program and the solution
    shutil.copytree(evals_dir / "fixtures" / "order-service" / "test_golden", agent_dir / "golden")
    golden = agent_dir / "golden"
    script = (
        "import os, shutil, subprocess, sys\n"
        f"shutil.copytree({str(golden)!r}, '.', dirs_exist_ok=True)\n"  # the task, done
        "open('huge.txt', 'w').write(os.urandom(1_500_000).hex())\n"  # 3 MB of text
        "open('orders/blob.bin', 'wb').write(b'\\0' + os.urandom(2_000_000))\n"  # a binary
        # 1 GiB, sparse: as big as a sealed process may make a file (docs/sealing.md, "Limits")
        "f = open('disk.img', 'wb'); f.truncate(1024**3); f.close()\n"
        "open('history.bin', 'wb').write(os.urandom(3_000_000))\n"  # committed, then removed: only in .git
        "git = ['git', '-c', 'user.name=a', '-c', 'user.email=a@b.invalid']\n"
        "subprocess.run(git + ['add', 'history.bin'], check=True)\n"
        "subprocess.run(git + ['commit', '-qm', 'big'], check=True)\n"
        "subprocess.run(git + ['rm', '-q', 'history.bin'], check=True)\n"
        "subprocess.run(git + ['commit', '-qm', 'gone'], check=True)\n"
        "print('Added order cancellation in OrderService.')\n"  # no claim it cannot show it checked
    )
    (agent_dir / "agent.py").write_text(script)
    results = tmp_path / "results"
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            f"{sys.executable} {agent_dir / 'agent.py'}",
            "--fixtures",
            "cancellation-support",
            "--results",
            str(results),
            "--json",
            "--max-change-size",
            "1MB",
            "--mount",
            str(agent_dir),
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed", run.get("error")
    assert run["verdict"]["passed"] is True, run["verdict"]  # graded on the rest: the golden solution
    size = run["size"]
    assert size["limit"] == MB and size["kept_bytes"] <= MB
    over = {o["path"]: o for o in size["over_limit"]}
    assert set(over) == {"huge.txt", "orders/blob.bin", "disk.img"}
    assert over["disk.img"]["size"] == 1024**3 and over["disk.img"]["allocated"] < MB
    assert over["huge.txt"]["sha256"].startswith("sha256:") and over["orders/blob.bin"]["status"] == "added"

    run_dir = results / run["run_dir"]
    changes = json.loads((run_dir / "changes.json").read_text())
    assert {o["path"] for o in changes["over_limit"]} == set(over)
    assert not {f["path"] for f in changes["files"]} & set(over)
    patch = (run_dir / "diff.patch").read_text()
    assert "huge.txt" not in patch and "disk.img" not in patch and "orders/service.py" in patch
    for name in over:
        assert not (run_dir / "workspace" / name).exists()
    page = runner.invoke(app, ["report", "--results", str(results), "--html", str(tmp_path / "site")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "site" / "jobs" / out["job_id"] / "cancellation-support" / "run_1.html").read_text()
    assert "3 file(s) over the 1 MB limit left out" in html
    # stored once: no copy of the workspace under grading/, no history of the agent's in the kept repository
    assert not [p for p in (run_dir / "grading").iterdir() if p.is_dir()]
    assert _stored(results) < 1 * MB, sorted(
        (p.stat().st_size, str(p)) for p in results.rglob("*") if p.is_file()
    )[-5:]


def test_a_cli_that_prints_too_much_keeps_the_head_and_the_tail_of_its_output(
    tmp_path: Path, evals_dir: Path
) -> None:
    script = (
        "import sys\nprint('FIRST')\nfor _ in range(25): sys.stdout.write('z' * "
        "1_000_000)\nprint('\\nLAST')\n"
    )
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.py").write_text(script)
    results = tmp_path / "results"
    command = f"{sys.executable} {tmp_path / 'agent' / 'agent.py'}"
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            command,
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(results),
            "--json",
            "--mount",
            str(tmp_path / "agent"),
        ]
    )
    [run] = out["runs"]
    run_dir = results / run["run_dir"]
    log = (run_dir / "agent.stdout.log").read_bytes()
    assert log.startswith(b"FIRST") and log.rstrip().endswith(b"LAST") and b"bytes left out here" in log
    assert len(log) < 20_001_000
    assert "agent.stdout.log" in run["size"]["logs_cut"]
    # the command agent's message is the end of its output (its last MB): the transcript never needed cutting
    assert (
        "transcript.json" not in run["size"]["logs_cut"]
        and (run_dir / "transcript.json").stat().st_size < 3 * MB
    )
    assert _stored(results) < 45 * MB


def test_the_limit_comes_from_the_eval_unless_the_job_sets_it(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    app_dir = suite / "fixtures" / "tiny" / "app"
    app_dir.mkdir(parents=True)
    (app_dir / "app.py").write_text("x = 1\n")
    (suite / "fixtures" / "tiny" / "test_golden").mkdir()
    (suite / "fixtures" / "tiny" / "test_golden" / "app.py").write_text("x = 2\n")
    (suite / "agent-evals").mkdir()
    (suite / "agent-evals" / "tiny-eval.toml").write_text(
        'id = "tiny-eval"\ntitle = "t"\nprompt = "p"\nfixture = "tiny"\nmax_change_size = "10KB"\n'
        '[[criteria]]\nid = "c"\ndescription = "d"\nweight = 1\ngrader = "diff"\n'
        '[criteria.options]\nowning_module = "app.py"\n'
    )
    command = f"{sys.executable} -c \"open('blob.txt', 'w').write('b' * 50_000)\""
    base = [
        str(suite),
        "--agent",
        "command",
        "--command",
        command,
        "--results",
        str(tmp_path / "r"),
        "--json",
    ]
    [run] = _run(base)["runs"]
    assert run["size"]["limit"] == 10_000 and [o["path"] for o in run["size"]["over_limit"]] == ["blob.txt"]
    [run] = _run([*base, "--max-change-size", "1MiB"])["runs"]
    assert run["size"]["limit"] == 1024**2 and run["size"]["over_limit"] == [] and run["files_changed"] == 1
    bad = runner.invoke(app, ["run", *base, "--max-change-size", "lots"])
    assert bad.exit_code == 2 and "--max-change-size" in bad.output


def test_a_flood_of_empty_files_is_cut_to_the_count_limit_and_graded_on_the_rest(
    tmp_path: Path, evals_dir: Path
) -> None:
    """An agent that made 200,000 empty files kept a run busy for hours (every step after it costs per file):
    past 10,000 new entries the rest are left out, counted, and the run is graded (the agent's doing, never
    the harness's)."""
    script = "import os\nos.mkdir('flood')\nfor i in range(12_000): open(f'flood/{i:05}', 'w').close()\n"
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.py").write_text(script)
    results = tmp_path / "results"
    out = _run(
        [
            str(evals_dir),
            "--agent",
            "command",
            "--command",
            f"{sys.executable} {tmp_path / 'agent' / 'agent.py'}",
            "--fixtures",
            "flask-py",
            "--layers",
            "rubric",
            "--results",
            str(results),
            "--json",
            "--mount",
            str(tmp_path / "agent"),
        ]
    )
    [run] = out["runs"]
    assert run["outcome"] == "completed" and not run["harness_failures"], run.get("error")
    size = run["size"]
    # the folder counts
    assert size["max_entries"] == 10_000 and size["entries_left_out"] == 12_000 + 1 - 10_000
    assert (
        size["entries_left_out_sample"][0] == f"flood/{10_000 - 1:05}"
        and len(size["entries_left_out_sample"]) == 20
    )
    assert run["files_changed"] == 10_000 - 1
    assert any("left out" in n for n in run["config"]["notes"])
    run_dir = results / run["run_dir"]
    assert json.loads((run_dir / "changes.json").read_text())["entries_left_out"] == size["entries_left_out"]
    assert len(list((run_dir / "workspace" / "flood").iterdir())) == 10_000 - 1
    page = runner.invoke(app, ["report", "--results", str(results), "--html", str(tmp_path / "site")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "site" / "jobs" / out["job_id"] / "flask-py" / "run_1.html").read_text()
    assert "2001 new or changed file(s)/folder(s) beyond the first 10000 left out" in html
