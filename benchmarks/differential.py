"""Differential fidelity against Seam's own fake (npm ``@seamapi/fake-seam-connect``): the time to start the
fake, to run the scripted SDK sequences against each server, and the counts of the comparison (routes both
serve and those driven, differences found, the table's settlements).

    .venv/bin/python benchmarks/differential.py
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "services" / "seam"))
from differential import audit, compare, dedupe, load_table, run_scenarios, seam_emulator  # noqa: E402
from seam_fake import fake_routes, seam_fake  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.parse_args()
    from skillassay.seam.emulator.handlers import HANDLERS

    t0 = time.perf_counter()
    with seam_fake() as fake:
        started = time.perf_counter() - t0
        t = time.perf_counter()
        from_fake = run_scenarios(fake)
        fake_run = time.perf_counter() - t
    t = time.perf_counter()
    with seam_emulator() as emu:
        from_emulator = run_scenarios(emu)
    emulator_run = time.perf_counter() - t
    t = time.perf_counter()
    found = dedupe(compare(from_fake, from_emulator))
    compared = time.perf_counter() - t
    table = load_table()
    problems = audit(found, table)

    shared = fake_routes() & set(HANDLERS)
    driven = {a.route for a in from_fake + from_emulator}
    kinds = Counter("shape" if " shape: " in d.id else d.id.rsplit(": ", 1)[1] for d in found)
    print(f"fake started (node, seeded)      {started * 1000:8.0f} ms")
    print(f"scenarios against the fake       {fake_run * 1000:8.0f} ms  ({len(from_fake)} calls)")
    print(f"scenarios against the emulator   {emulator_run * 1000:8.0f} ms  (start included)")
    print(f"comparison                       {compared * 1000:8.1f} ms")
    print(f"routes the fake serves           {len(fake_routes()):5d}")
    print(f"routes both serve / driven       {len(shared):5d} / {len(shared & driven)}")
    print(
        f"differences found                {len(found):5d}  "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    )
    print(f"table rows                       {len(table):5d}")
    print(
        "  settled by                     "
        + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r.follows for r in table).items()))
    )
    print(
        "  emulator now                   "
        + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r.emulator_now for r in table).items()))
    )
    print(f"unsettled or stale               {len(problems):5d}")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
