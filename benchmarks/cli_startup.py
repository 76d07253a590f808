"""``skillassay rubric`` as a whole process, beside the plan's checker, on every shipped golden, paired.

    .venv/bin/python benchmarks/cli_startup.py [--runs 11] [--fixture express-ts,...] [--plan-checker PATH]

For each fixture with an ``eval_config.json`` (all of them unless ``--fixture`` names some), three commands
run paired (one after another in each round, in turn) on its golden solution:
- floor: ``python -c "import json, re"``, what any Python checker pays before reading a file;
- the checker: with ``--plan-checker PATH``, the plan's own ``rubric_checker.py`` (a copy you bring: it is
  public as ``evals/rubric_checker.py`` in seamapi/seam-plugin; none of its code is in this repository), run
  with ``--pristine --modified --fixture-dir`` from a temporary folder beside this suite's ``rubric.json``
  (it reads the rubric next to itself); without it, a stdlib mimic in the plan checker's style (walk the
  tree, regexes over the sources, JSON). The output says which one was measured;
- ``skillassay rubric --plain``: the real grader, through the installed console script.

Prints, per golden, the median wall time and CPU time (user + system) of each command and the rubric's
median paired difference to the checker (rubric minus checker, round by round: negative is faster), then
the medians over all goldens. Target: the rubric faster than the plan's checker on each golden. Byte code is
cached as after a first run (in a temporary folder, so the source tree stays clean); on a loaded machine
wall time stretches while CPU time does not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

REGEX_CHECKER = r"""
import json, os, re, sys
modified, key_file = sys.argv[1], sys.argv[2]
key = json.load(open(key_file))
call = re.compile(r"\b(?:seam|client)\s*\.\s*(\w+)\s*\.\s*(\w+)\s*\(")
found = set()
for root, dirs, files in os.walk(modified):
    dirs[:] = [d for d in dirs if d not in ("node_modules", "dist", "build", ".git", "__pycache__", ".venv")]
    for name in files:
        if name.endswith((".ts", ".js", ".py")):
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                for ns, method in call.findall(f.read()):
                    found.add(ns + "." + re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", method).lower())
expected = {c for calls in key.get("expected_calls", {}).values() for c in calls}
score = len(expected & found) / len(expected) if expected else 0.0
print(json.dumps({"total": round(100 * score, 2), "categories": {"calls": {"score": score}}}))
"""


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one run of ``argv``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


FLOOR = 'floor: python -c "import json, re"'
RUBRIC = "skillassay rubric --plain"


def goldens(names: str | None) -> list[Path]:
    """The fixtures to measure: every plan fixture (one with eval_config.json), or those ``names`` lists."""
    found = sorted(p.parent for p in (REPO / "evals" / "fixtures").glob("*/eval_config.json"))
    if names is None:
        return found
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = sorted(set(wanted) - {f.name for f in found})
    if unknown:
        raise SystemExit(f"error: --fixture: no plan fixture {', '.join(unknown)}")
    return [f for f in found if f.name in wanted]


def rubric_argv(python: str) -> list[str]:
    script = Path(python).parent / "skillassay"
    return [str(script)] if script.exists() else [python, "-m", "skillassay"]


def checker_commands(
    fixture: Path, python: str, plan_checker: Path | None, tmp: Path
) -> tuple[str, list[str]]:
    """The name and argv of the checker to compare against: the plan's own when a copy is given."""
    if plan_checker is not None:
        return "plan's rubric_checker.py", [
            python,
            str(tmp / "plan" / "rubric_checker.py"),
            "--pristine",
            str(fixture / "app"),
            "--modified",
            str(fixture / "test_golden"),
            "--fixture-dir",
            str(fixture),
        ]
    return "regex mimic (plan style)", [
        python,
        str(tmp / "regex_checker.py"),
        str(fixture / "test_golden"),
        str(fixture / "answer_key.json"),
    ]


def prepare(tmp: Path, plan_checker: Path | None) -> None:
    (tmp / "regex_checker.py").write_text(REGEX_CHECKER)
    if plan_checker is not None:
        if not plan_checker.is_file():
            raise SystemExit(f"error: --plan-checker {plan_checker}: no such file")
        (tmp / "plan").mkdir()
        shutil.copyfile(plan_checker, tmp / "plan" / "rubric_checker.py")
        shutil.copyfile(REPO / "evals" / "rubric.json", tmp / "plan" / "rubric.json")


def measure_golden(
    fixture: Path, commands: dict[str, list[str]], env: dict[str, str], runs: int
) -> dict[str, list[tuple[float, float, float]]]:
    for argv in commands.values():  # warm: byte code written, files in the page cache
        measure(argv, env)
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(measure(argv, env))
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=11, help="paired rounds per golden (default 11)")
    ap.add_argument("--fixture", help="comma-separated fixtures under evals/fixtures (default: every golden)")
    ap.add_argument(
        "--plan-checker",
        type=Path,
        help="a copy of the plan's evals/rubric_checker.py to compare against (default: the regex mimic)",
    )
    args = ap.parse_args()

    python = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="skillassay-startup-"))
    rows: list[tuple[str, dict[str, float]]] = []
    checker_name = ""
    try:
        prepare(tmp, args.plan_checker)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's second run finds its byte code cached
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        print(
            f"{args.runs} paired rounds per golden, {python} (Python {sys.version.split()[0]}), "
            f"load average {os.getloadavg()[0]:.2f} at the start"
        )
        print(HEADER)
        for fixture in goldens(args.fixture):
            checker_name, checker = checker_commands(fixture, python, args.plan_checker, tmp)
            rubric = [
                *rubric_argv(python),
                "rubric",
                "--pristine",
                str(fixture / "app"),
                "--modified",
                str(fixture / "test_golden"),
                "--fixture-dir",
                str(fixture),
                "--plain",
            ]
            commands = {FLOOR: [python, "-c", "import json, re"], checker_name: checker, RUBRIC: rubric}
            samples = measure_golden(fixture, commands, env, args.runs)
            rows.append((fixture.name, summarise(samples, checker_name)))
            print_row(fixture.name, rows[-1][1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_totals(rows, checker_name)
    return 0


def summarise(samples: dict[str, list[tuple[float, float, float]]], checker: str) -> dict[str, float]:
    def med(name: str, i: int) -> float:
        return statistics.median(r[i] for r in samples[name])

    def paired(i: int) -> float:
        return statistics.median(r[i] - c[i] for r, c in zip(samples[RUBRIC], samples[checker], strict=True))

    return {
        "floor_wall": med(FLOOR, 0),
        "checker_wall": med(checker, 0),
        "checker_cpu": med(checker, 1),
        "rubric_wall": med(RUBRIC, 0),
        "rubric_cpu": med(RUBRIC, 1),
        "rubric_rss": med(RUBRIC, 2),
        "diff_wall": paired(0),
        "diff_cpu": paired(1),
        "faster": sum(r[0] < c[0] for r, c in zip(samples[RUBRIC], samples[checker], strict=True)),
        "rounds": len(samples[RUBRIC]),
    }


HEADER = (
    f"{'golden':20} {'floor wall':>10} {'checker wall':>12} {'cpu':>6} {'rubric wall':>11} {'cpu':>6} "
    f"{'RSS':>8} {'rubric-checker wall':>19} {'cpu':>7} {'faster':>7}"
)


def print_row(name: str, r: dict[str, float]) -> None:
    print(
        f"{name:20} {r['floor_wall']:9.3f}s {r['checker_wall']:11.3f}s {r['checker_cpu']:5.3f}s "
        f"{r['rubric_wall']:10.3f}s {r['rubric_cpu']:5.3f}s {r['rubric_rss']:5.1f}MiB "
        f"{r['diff_wall']:+18.3f}s {r['diff_cpu']:+6.3f}s {int(r['faster']):>3}/{int(r['rounds'])}"
    )


def print_totals(rows: list[tuple[str, dict[str, float]]], checker: str) -> None:
    if not rows:
        return
    faster = [name for name, r in rows if r["diff_wall"] < 0]
    median_diff = statistics.median(r["diff_wall"] for _, r in rows)
    print(
        f"measured against: {checker}; rubric faster (median paired wall) on {len(faster)} of {len(rows)} "
        f"goldens, median paired difference {median_diff:+.3f} s wall "
        f"(target: faster on each) -> {'met' if len(faster) == len(rows) else 'NOT met'}"
    )


if __name__ == "__main__":
    sys.exit(main())
