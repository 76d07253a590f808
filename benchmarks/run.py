"""The harness's own cost per run: `skillassay run` with the `reference` agent (no model, no network), so what
is measured is skillassay itself: workspace, grading (rubric + sandbox on the emulator), storing.

Prints per-run wall time and the breakdown, serial and with --jobs 2, after one warm-up job (dependency caches
warm).

    .venv/bin/python benchmarks/run.py [--runs 2] [--fixtures express-ts,flask-py]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from skillassay.orchestrator.job import JobOptions, run_job

ROOT = Path(__file__).resolve().parent.parent


def job(results: Path, fixtures: list[str], runs: int, jobs: int) -> tuple[float, list]:
    opts = JobOptions(
        suite=ROOT / "evals", agent="reference", fixtures=fixtures, runs=runs, jobs=jobs, results=results
    )
    t = time.perf_counter()
    res = run_job(opts)
    return time.perf_counter() - t, res.records


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--fixtures", default="express-ts,flask-py")
    args = ap.parse_args()
    fixtures = args.fixtures.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp)
        warm, _ = job(results, fixtures, 1, 1)
        print(f"warm-up job ({len(fixtures)} runs, caches cold or warm): {warm:.1f} s")
        for jobs in (1, 2):
            wall, records = job(results, fixtures, args.runs, jobs)
            n = len(records)
            print(f"\n--jobs {jobs}: {n} runs in {wall:.1f} s wall = {wall / n:.2f} s per run")
            for fx in fixtures:
                rs = [r for r in records if r.eval_id == fx]
                totals = [(r.finished_at - r.started_at).total_seconds() for r in rs]
                keys = sorted({k for r in rs for k in r.timings})
                parts = ", ".join(f"{k} {statistics.mean(r.timings.get(k, 0) for r in rs):.2f}" for k in keys)
                scores = sorted({r.combined for r in rs})
                print(f"  {fx}: {statistics.mean(totals):.2f} s per run ({parts}); combined {scores}")


if __name__ == "__main__":
    main()
