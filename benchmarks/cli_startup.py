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
- ``skillassay rubric --plain``, twice: the real grader through the installed console script, once as a
  first grade of these files (its memo, ``workspace/output_memo.py``, emptied before each round: the whole
  grade, the memo's key and its save) and once as a grade of files graded before (the memo filled by the
  warm-up round). Each has a cache folder of the benchmark's own.

Prints, per golden, the median wall time and CPU time (user + system) of each command and each rubric's
median paired difference to the checker (rubric minus checker, round by round: negative is faster), then
the medians over all goldens, first grades and grades again apart. Target: the rubric faster than the plan's
checker on each golden. Byte code is cached as after a first run (in a temporary folder, so the source tree
stays clean); on a loaded machine wall time stretches while CPU time does not.
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


def measure(argv: list[str], env: dict[str, str] | None) -> tuple[float, float, float]:
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
FIRST = "skillassay rubric --plain, first grade"
AGAIN = "skillassay rubric --plain, graded before"


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


Command = tuple[list[str], dict[str, str]]


def forget_memo(env: dict[str, str]) -> None:
    """A first grade: the memo of ``env``'s cache folder emptied (not timed)."""
    shutil.rmtree(Path(env["SKILLASSAY_CACHE_DIR"]) / "rubric-memo", ignore_errors=True)


def measure_golden(commands: dict[str, Command], runs: int) -> dict[str, list[tuple[float, float, float]]]:
    for argv, env in commands.values():  # warm: byte code written, files in the page cache, the memo filled
        measure(argv, env)
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, env) in commands.items():
            if name == FIRST:
                forget_memo(env)
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
        env["SKILLASSAY_CACHE_DIR"] = str(tmp / "cache")  # the memo of this benchmark's own grades
        first_env = {**env, "SKILLASSAY_CACHE_DIR": str(tmp / "first-grades")}
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
            commands = {
                FLOOR: ([python, "-c", "import json, re"], env),
                checker_name: (checker, env),
                FIRST: (rubric, first_env),
                AGAIN: (rubric, env),
            }
            samples = measure_golden(commands, args.runs)
            rows.append((fixture.name, summarise(samples, checker_name)))
            print_row(fixture.name, rows[-1][1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_totals(rows, checker_name)
    return 0


def summarise(samples: dict[str, list[tuple[float, float, float]]], checker: str) -> dict[str, float]:
    def med(name: str, i: int) -> float:
        return statistics.median(r[i] for r in samples[name])

    def pairs(name: str) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
        return list(zip(samples[name], samples[checker], strict=True))

    out = {
        "floor_wall": med(FLOOR, 0),
        "checker_wall": med(checker, 0),
        "checker_cpu": med(checker, 1),
        "rounds": len(samples[checker]),
    }
    for tag, name in (("first", FIRST), ("again", AGAIN)):
        out |= {
            f"{tag}_wall": med(name, 0),
            f"{tag}_cpu": med(name, 1),
            f"{tag}_rss": med(name, 2),
            f"{tag}_diff_wall": statistics.median(r[0] - c[0] for r, c in pairs(name)),
            f"{tag}_diff_cpu": statistics.median(r[1] - c[1] for r, c in pairs(name)),
            f"{tag}_faster": sum(r[0] < c[0] for r, c in pairs(name)),
        }
    return out


HEADER = (
    f"{'':20} {'floor':>6} {'checker':>15} | "
    f"{'first grade (memo empty)':^38} | {'graded before (memo)':^38}\n"
    f"{'golden':20} {'wall':>6} {'wall':>7} {'cpu':>7} | "
    + " | ".join([f"{'wall':>6} {'cpu':>6} {'RSS':>7} {'-checker':>8} {'faster':>6}"] * 2)
)


def print_row(name: str, r: dict[str, float]) -> None:
    cells = [
        f"{r[f'{t}_wall']:5.3f}s {r[f'{t}_cpu']:5.3f}s {r[f'{t}_rss']:4.1f}MiB {r[f'{t}_diff_wall']:+7.3f}s "
        f"{int(r[f'{t}_faster']):>3}/{int(r['rounds'])}"
        for t in ("first", "again")
    ]
    print(
        f"{name:20} {r['floor_wall']:5.3f}s {r['checker_wall']:6.3f}s {r['checker_cpu']:6.3f}s | "
        + " | ".join(cells)
    )


def print_totals(rows: list[tuple[str, dict[str, float]]], checker: str) -> None:
    if not rows:
        return
    print(f"measured against: {checker} (-checker: median paired wall difference; negative is faster)")
    for tag, what in (("first", "first grade (memo empty)"), ("again", "graded before (memo)")):
        faster = [name for name, r in rows if r[f"{tag}_diff_wall"] < 0]
        median_diff = statistics.median(r[f"{tag}_diff_wall"] for _, r in rows)
        verdict = "met" if len(faster) == len(rows) else "NOT met"
        print(
            f"{what}: faster on {len(faster)} of {len(rows)} goldens, median paired difference "
            f"{median_diff:+.3f} s wall (target: faster on each) -> {verdict}"
        )


if __name__ == "__main__":
    sys.exit(main())
