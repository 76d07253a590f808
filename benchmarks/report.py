"""Report build speed and page size on 2,000 stored runs (synthetic records written through the real models).

    .venv/bin/python benchmarks/report.py [--runs 2000] [--keep DIR]

Prints the time to write the runs, index them, build the site, and the largest page. Targets: build under 10
s, no page over 1 MB.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from skillassay import store
from skillassay.report.site import build_site

# the synthetic results builder is test data: it lives beside the tests, not in the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from synthetic_runs import make_job

TARGET_SECONDS = 10.0
TARGET_PAGE_BYTES = 1_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=2000, help="total runs to store (default 2000)")
    ap.add_argument("--keep", type=Path, help="write results/ and site/ here and keep them")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="skillassay-bench-"))
    results, site = work / "results", work / "site"
    shutil.rmtree(results, ignore_errors=True)
    shutil.rmtree(site, ignore_errors=True)

    # 4 jobs x 25 evals x 10 runs x (skill + baseline) = 2,000 runs by default
    evals = tuple(f"eval-{i:02d}" for i in range(25))
    jobs, per_job = 4, args.runs // 4
    runs_per_eval = max(1, per_job // (len(evals) * 2))
    t0 = time.perf_counter()
    created = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
    for j in range(jobs):
        make_job(
            results,
            job_id=f"20261129-2{j}0000-b{j:03d}",
            evals=evals,
            runs=runs_per_eval,
            baseline=True,
            seed=j,
            skill_mean=0.7 + 0.05 * j,
            created_at=created + timedelta(hours=j),
        )
    t_write = time.perf_counter() - t0

    t0 = time.perf_counter()
    with store.open(results) as st:
        n_runs = st.count_runs()
    t_index = time.perf_counter() - t0

    res = build_site(results, site, definitions=[])
    total_bytes = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    page, size = res.largest_page

    print(
        f"runs stored:        {n_runs} ({jobs} jobs x {len(evals)} evals x {runs_per_eval} runs x 2 variants)"
    )
    print(f"write run files:    {t_write:.2f} s")
    print(f"index (rebuild):    {t_index:.2f} s")
    print(f"build site:         {res.seconds:.2f} s  (target < {TARGET_SECONDS:.0f} s)")
    print(f"pages:              {res.pages}, {total_bytes / 1e6:.1f} MB in total")
    print(f"largest page:       {size / 1e3:.0f} KB  {page}  (target < {TARGET_PAGE_BYTES / 1e6:.0f} MB)")
    if args.keep:
        print(f"site:               {site / 'index.html'}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    ok = res.seconds < TARGET_SECONDS and size < TARGET_PAGE_BYTES
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
