"""Sandbox layer timings per fixture: a cold run (empty skillassay cache) and warm repeats, with the
breakdown.

    .venv/bin/python benchmarks/sandbox.py [--fixtures express-ts flask-py] [--warm 3] [--async-delay 1.0]
    [--no-cold]

Cold = a new, empty ``SKILLASSAY_CACHE_DIR`` (dependencies installed, build run); npm's and pip's own download
caches are whatever the machine has, as for a user. Warm = the same inputs again with that cache (nothing
installed, build outputs restored). Each validation drives the fixture's golden solution against one shared
Seam emulator. Targets (warm): express-ts under 10 s, flask-py under 6 s, the Next.js goldens (nextjs-ts,
hotel-nextjs-ts, cowork-nextjs-ts) under 10 s, the FastAPI goldens (fastapi-py, hotel-fastapi-py,
cowork-fastapi-py) under 4 s, the Rails goldens (rails-rb, hotel-rails-rb, cowork-rails-rb) under 6 s, the
Laravel goldens (php-laravel, hotel-php-laravel, cowork-php-laravel) under 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from skillassay.seam.behaviour import validate  # noqa: E402
from skillassay.seam.emulator.emulator import SeamEmulator  # noqa: E402
from skillassay.seam.loader import load_fixture  # noqa: E402

COLUMNS = ("seam_bootstrap", "copy", "install", "build", "start", "create", "update", "cancel", "total")
TARGETS = {
    "express-ts": 10.0,
    "flask-py": 6.0,
    **dict.fromkeys(("nextjs-ts", "hotel-nextjs-ts", "cowork-nextjs-ts"), 10.0),
    **dict.fromkeys(("fastapi-py", "hotel-fastapi-py", "cowork-fastapi-py"), 4.0),
    **dict.fromkeys(("rails-rb", "hotel-rails-rb", "cowork-rails-rb"), 6.0),  # Puma booting Rails: ~3 s
    # PHP's own server: nothing boots before the first request (~0.2 s)
    **dict.fromkeys(("php-laravel", "hotel-php-laravel", "cowork-php-laravel"), 2.0),
}


def row(label: str, timings: dict[str, float], score: int) -> str:
    cells = "".join(f"{timings.get(c, 0.0):>9.2f}" for c in COLUMNS)
    return f"{label:<28}{cells}{score:>7}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    fixtures_dir = REPO / "evals" / "fixtures"
    default = [p.name for p in sorted(fixtures_dir.glob("*")) if (p / "eval_config.json").is_file()]
    ap.add_argument("--fixtures", nargs="*", default=default)
    ap.add_argument("--warm", type=int, default=3, help="warm repeats (median reported)")
    ap.add_argument(
        "--async-delay", type=float, default=1.0, help="the emulator's code programming delay (s)"
    )
    ap.add_argument("--no-cold", action="store_true", help="skip the cold run (use the current cache)")
    ap.add_argument(
        "--no-build-cache",
        action="store_true",
        help="rebuild every time (warm = dependencies cached, build re-run: an agent's changed app)",
    )
    args = ap.parse_args()
    if args.no_build_cache:
        os.environ["SKILLASSAY_NO_BUILD_CACHE"] = "1"

    cache = None if args.no_cold else tempfile.mkdtemp(prefix="skillassay-bench-cache-")
    if cache:
        os.environ["SKILLASSAY_CACHE_DIR"] = cache
    print(
        f"emulator async_delay={args.async_delay}s; "
        f"cache={os.environ.get('SKILLASSAY_CACHE_DIR', '~/.cache/skillassay')}; "
        f"build cache={'off' if args.no_build_cache else 'on'}; cpus={os.cpu_count()}"
    )
    print(f"{'fixture / run':<28}" + "".join(f"{c:>9}" for c in COLUMNS) + f"{'score':>7}")
    failed = False
    summary: list[tuple[str, float, float, str]] = []
    with SeamEmulator(async_delay=args.async_delay) as emu:
        for name in args.fixtures:
            d = load_fixture(fixtures_dir / name)
            runs = ([] if args.no_cold else ["cold"]) + [f"warm{i + 1}" for i in range(args.warm)]
            warm_totals = []
            warm_rows: list[dict[str, float]] = []
            for label in runs:
                with tempfile.TemporaryDirectory() as logs:
                    t0 = time.monotonic()
                    r = validate(d.golden_dir, d, f"bench-{label}", emulator=emu, logs_dir=Path(logs))
                    r.timings["total"] = time.monotonic() - t0
                print(row(f"{name} {label}", r.timings, r.total), flush=True)
                if r.total != 100:
                    failed = True
                    print("   ", {n: c.reason for n, c in r.checks.items() if c.reason})
                if label.startswith("warm"):
                    warm_totals.append(r.timings["total"])
                    warm_rows.append(r.timings)
            if warm_rows:
                med = {c: statistics.median(t.get(c, 0.0) for t in warm_rows) for c in COLUMNS}
                print(row(f"{name} warm median", med, 100))
                target = TARGETS.get(name)
                if target is not None:
                    verdict = "OK" if med["total"] < target else "OVER"
                    print(f"    target warm < {target:.0f} s: {verdict} ({med['total']:.2f} s)")
                    summary.append((name, med["total"], target, verdict))
    if summary:
        print("\nwarm medians against their targets:")
        for name, total, target, verdict in summary:
            print(f"  {name:<22}{total:>7.2f} s  (target < {target:.0f} s)  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
