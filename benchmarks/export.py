"""Inspect export speed and size for one job of 2,000 runs (synthetic records, written through the models).

    .venv/bin/python benchmarks/export.py [--runs 2000] [--keep DIR]

Prints the time to write and index the runs, to export the job as Inspect logs (`export --format inspect`:
read every run's transcript, build the logs, write them, scrub them), to read every log back with inspect-ai,
and the bytes written. Needs the inspect extra.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from skillassay import store
from skillassay.report.inspect_log import export_inspect

# the synthetic results builder is test data: it lives beside the tests, not in the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from synthetic_runs import make_job

JOB = "20261202-120000-bexp"


def main() -> int:
    from inspect_ai.log import read_eval_log

    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=2000, help="runs in the job (default 2000)")
    ap.add_argument("--keep", type=Path, help="write results/ and out/ here and keep them")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="skillassay-bench-"))
    results, out = work / "results", work / "out"
    shutil.rmtree(results, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)

    # 50 evals x (skill + baseline) x runs/100 = --runs runs
    evals = tuple(f"eval-{i:02d}" for i in range(50))
    per_eval = max(1, args.runs // (len(evals) * 2))
    t0 = time.perf_counter()
    make_job(results, job_id=JOB, evals=evals, runs=per_eval, baseline=True, failures_as="provider_error")
    t_write = time.perf_counter() - t0

    t0 = time.perf_counter()
    with store.open(results) as st:
        job, runs = st.job(JOB), st.runs(job_id=JOB)
        t_index = time.perf_counter() - t0
        assert job is not None
        t0 = time.perf_counter()
        files = export_inspect(st.root, job, runs, out)
        t_export = time.perf_counter() - t0

    t0 = time.perf_counter()
    samples = sum(len(read_eval_log(str(f)).samples or []) for f in files)
    t_read = time.perf_counter() - t0
    size = sum(f.stat().st_size for f in files)

    print(f"runs: {len(runs)} in {len(files)} logs ({samples} samples read back)")
    print(f"write runs: {t_write:.2f} s   index: {t_index:.2f} s")
    print(f"export: {t_export:.2f} s ({1000 * t_export / max(1, len(runs)):.2f} ms a run)")
    print(f"read back: {t_read:.2f} s   bytes written: {size / 1e6:.1f} MB")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if samples == len(runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
