"""Start-up cost of ``skillassay rubric`` as a whole process, beside the floor of any Python checker.

    .venv/bin/python benchmarks/cli_startup.py [--runs 21] [--fixture express-ts]

Three commands run paired (one after another in each round, in turn), on the fixture's golden solution:
- floor: ``python -c "import json, re"``, what any Python checker pays before reading a file;
- regex checker: a stdlib script in the style of the plan's checker (walk the tree, regexes over the sources,
  JSON);
- ``skillassay rubric --plain``: the real grader, through the installed console script.

Prints the median wall time, CPU time (user + system) and peak memory of each, and the rubric's margin over
the floor. Target: the rubric within 0.1 s of the floor (median wall). Byte code is cached as after a first
run (in a temporary folder, so the source tree stays clean); on a loaded machine wall time stretches while CPU
time does not.
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
TARGET_MARGIN_S = 0.1

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


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=21, help="paired rounds (default 21)")
    ap.add_argument(
        "--fixture", default="express-ts", help="fixture under evals/fixtures (default express-ts)"
    )
    args = ap.parse_args()

    fixture = REPO / "evals" / "fixtures" / args.fixture
    python = sys.executable
    script = Path(python).parent / "skillassay"
    rubric = [str(script)] if script.exists() else [python, "-m", "skillassay"]
    rubric += [
        "rubric",
        "--pristine",
        str(fixture / "app"),
        "--modified",
        str(fixture / "test_golden"),
        "--fixture-dir",
        str(fixture),
        "--plain",
    ]
    tmp = Path(tempfile.mkdtemp(prefix="skillassay-startup-"))
    try:
        checker = tmp / "regex_checker.py"
        checker.write_text(REGEX_CHECKER)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's second run finds its byte code cached
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        commands = {
            'floor: python -c "import json, re"': [python, "-c", "import json, re"],
            "regex checker (plan style)": [
                python,
                str(checker),
                str(fixture / "test_golden"),
                str(fixture / "answer_key.json"),
            ],
            "skillassay rubric --plain": rubric,
        }
        for argv in commands.values():  # warm: byte code written, files in the page cache
            measure(argv, env)
        samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                samples[name].append(measure(argv, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"{args.fixture} golden, {args.runs} paired rounds, {python} (Python {sys.version.split()[0]}), "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':34} {'wall (median)':>14} {'cpu (median)':>13} {'peak RSS':>9}")
    medians = {}
    for name, rows in samples.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        rss = statistics.median(r[2] for r in rows)
        medians[name] = (wall, cpu)
        print(f"{name:34} {wall:12.3f} s {cpu:11.3f} s {rss:6.1f} MiB")
    floor_wall, floor_cpu = medians['floor: python -c "import json, re"']
    wall, cpu = medians["skillassay rubric --plain"]
    checker_wall = medians["regex checker (plan style)"][0]
    ok = wall - floor_wall <= TARGET_MARGIN_S
    print(
        f"rubric over the floor: {wall - floor_wall:+.3f} s wall, {cpu - floor_cpu:+.3f} s cpu "
        f"(target: within {TARGET_MARGIN_S:.1f} s wall) -> {'met' if ok else 'NOT met'}; "
        f"vs the regex checker: {wall - checker_wall:+.3f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
