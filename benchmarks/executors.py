"""Local executor against Ray on the same cores: the same reference runs (7 evals x 4 runs = 28 by default)
with `--jobs 2` and with `--executor ray` on a local Ray cluster of 2 CPUs. The reference agent needs no
model, so what is measured is skillassay itself: workspace, grading (rubric, sandbox on the emulator,
process graders), storing, and for Ray its scheduling, the inputs' and the run folders' round trips.

Prints per executor: wall time, wall per run per lane, the time a run spends inside the trial (harness time);
for Ray, the overhead per run (from running on a worker to its folder written on the driver, minus the trial's
own time: inputs, archive, transfer, unpacking) and Ray's own scheduling cost per task (an empty task of the
same shape). Target: Ray costs under 0.5 s per run over local. One warm-up job per executor first (dependency
caches, Ray's worker processes). The machine's other load shows in every figure: compare runs taken together.

    .venv/bin/python benchmarks/executors.py [--runs 4] [--cpus 2] [--fixtures a,b]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from skillassay.orchestrator.executors.local import LocalExecutor
from skillassay.orchestrator.executors.ray import RayExecutor
from skillassay.orchestrator.job import JobOptions, run_job

ROOT = Path(__file__).resolve().parent.parent


def job(results: Path, fixtures: list[str], runs: int, executor) -> tuple[float, list]:
    opts = JobOptions(
        suite=ROOT / "evals",
        agent="reference",
        fixtures=fixtures,
        runs=runs,
        results=results,
        jobs=getattr(executor, "jobs", 1),
        executor=executor.name,
    )
    t = time.perf_counter()
    res = run_job(opts, executor=executor)
    return time.perf_counter() - t, res.records


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def report(name: str, wall: float, records: list, lanes: int) -> float:
    n = len(records)
    inside = [(r.finished_at - r.started_at).total_seconds() for r in records]
    bad = [r for r in records if r.outcome != "completed"]
    print(
        f"\n{name}: {n} runs in {wall:.1f} s wall = {wall / n * lanes:.2f} s per run per lane "
        f"({lanes} lanes); harness time inside the trial {statistics.mean(inside):.2f} s per run "
        f"(p90 {pct(inside, 0.9):.2f})" + (f"; NOT COMPLETED: {len(bad)}" if bad else "")
    )
    return wall


def _empty_run():
    yield {"node": "here"}
    yield {"record": "", "archive": b""}


def scheduling(ray, n: int) -> list[float]:
    """Ray's own cost per task, nothing of skillassay in it."""
    task = ray.remote(_empty_run).options(num_cpus=1, num_returns="streaming", max_retries=0)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        for ref in task.remote():
            ray.get(ref)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1, help="alternate local and Ray this many times")
    ap.add_argument("--fixtures", default="", help="eval ids (default: every eval of evals/)")
    args = ap.parse_args()
    from skillassay.definitions import load_suite

    fixtures = args.fixtures.split(",") if args.fixtures else [e.id for e in load_suite(ROOT / "evals")]
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"Ray local cluster ({args.cpus} CPUs) up in {time.perf_counter() - t:.1f} s (not counted below)")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            results = Path(tmp)
            local, remote = LocalExecutor(args.cpus), RayExecutor()
            for executor in (local, remote):
                warm, _ = job(results, fixtures, 1, executor)
                print(f"warm-up {executor.describe()}: {len(fixtures)} runs in {warm:.1f} s")
            remote.stats.clear()
            local_walls, ray_walls = [], []
            for i in range(args.rounds):  # interleaved, so the machine's other load falls on both alike
                tag = f" (round {i + 1})" if args.rounds > 1 else ""
                local_walls.append(
                    report(
                        f"local --jobs {args.cpus}{tag}",
                        *job(results, fixtures, args.runs, local)[:2],
                        lanes=args.cpus,
                    )
                )
                ray_wall, records = job(results, fixtures, args.runs, remote)
                ray_walls.append(report(f"ray ({args.cpus} CPUs){tag}", ray_wall, records, lanes=args.cpus))
            local_wall, ray_wall = statistics.mean(local_walls), statistics.mean(ray_walls)
            overhead = [s["overhead"] for s in remote.stats]
            print(
                f"  overhead per run on Ray (running on a worker -> its folder written on the driver, "
                "minus the "
                f"trial's own time): mean {statistics.mean(overhead):.3f} s, p90 {pct(overhead, 0.9):.3f} s"
            )
            sched = scheduling(ray, len(records))
            print(
                f"  Ray's scheduling per task (an empty task shaped like a run, one CPU, streaming, one at a "
                f"time: submit -> result): mean {statistics.mean(sched):.3f} s, p90 {pct(sched, 0.9):.3f} s"
            )
            n = len(records)
            extra = (ray_wall - local_wall) / n * args.cpus
            print(
                f"\nRay over local (mean of {args.rounds}): {ray_wall - local_wall:+.1f} s wall = "
                f"{extra:+.2f} s per run per lane "
                f"(target: under 0.5 s) -> {'OK' if extra < 0.5 else 'OVER'}"
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
