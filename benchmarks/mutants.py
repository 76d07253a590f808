"""Time of ``skillassay check --mutants`` on the shipped suite, with --jobs.

    .venv/bin/python benchmarks/mutants.py [--jobs 1 4] [--suite evals] [--cold]

Each run is the real command in a subprocess (``skillassay check <suite> --mutants --jobs N``), with the
installed-dependency and build caches as they are (``--cold``: a new, empty ``SKILLASSAY_CACHE_DIR`` for the
first run: every install and every schema build is paid). Printed per run: wall seconds, mutants graded,
seconds per mutant, and the slowest evals (from the mutation.json each run writes), plus whether every mutant
was caught as expected.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(suite: Path, jobs: int, env: dict[str, str]) -> tuple[float, dict, int]:
    with tempfile.TemporaryDirectory(prefix="skillassay-mutants-bench-") as results:
        argv = [
            sys.executable,
            "-m",
            "skillassay",
            "check",
            str(suite),
            "--mutants",
            "--jobs",
            str(jobs),
            "--results",
            results,
        ]
        t0 = time.monotonic()
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - t0
        path = Path(results) / "mutation.json"
        report = json.loads(path.read_text()) if path.exists() else {}
    if done.returncode not in (0, 2):
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
    return seconds, report, done.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--suite", type=Path, default=REPO / "evals")
    ap.add_argument("--cold", action="store_true", help="start from an empty skillassay cache")
    args = ap.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cold_dir = None
    if args.cold:
        cold_dir = tempfile.mkdtemp(prefix="skillassay-cold-cache-")
        env["SKILLASSAY_CACHE_DIR"] = cold_dir
    print(
        f"skillassay check {args.suite} --mutants (machine: {os.cpu_count()} CPUs"
        f"{', cold cache' if cold_dir else ', caches as they are'})"
    )
    print(f"{'jobs':>5}{'seconds':>10}{'mutants':>9}{'s/mutant':>10}{'evals':>7}  result")
    for jobs in args.jobs:
        seconds, report, code = run(args.suite, jobs, env)
        evals = report.get("evals", [])
        mutants = sum(len(e.get("mutants", [])) for e in evals)
        per = seconds / mutants if mutants else float("nan")
        result = "all as expected" if code == 0 else f"exit {code}: not all as expected"
        print(f"{jobs:>5}{seconds:>10.1f}{mutants:>9}{per:>10.2f}{len(evals):>7}  {result}")
        slow = sorted(evals, key=lambda e: -sum(m.get("seconds", 0) for m in e.get("mutants", [])))[:3]
        for e in slow:
            total = sum(m.get("seconds", 0) for m in e.get("mutants", []))
            print(
                f"{'':>5}  {e['eval_id']}: {total:.1f} s of mutant grading ({len(e.get('mutants', []))} "
                "mutants)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
