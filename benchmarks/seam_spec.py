"""Request validation against the Seam OpenAPI spec: compiling a route's validator, and validating one
``customers/push_data`` body (5 reservations) with it. Target: under 5 ms per validation on a 2-core machine.

    .venv/bin/python benchmarks/seam_spec.py [--iterations 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--iterations", type=int, default=2000)
    args = ap.parse_args()

    from skillassay.seam.emulator.spec import load_spec

    t = time.perf_counter()
    spec = load_spec()
    loaded = time.perf_counter() - t
    route = spec.route("/customers/push_data")
    body = {
        "customer_key": "c",
        "reservations": [
            {
                "reservation_key": f"r{i}",
                "space_keys": ["s"],
                "starts_at": "2031-01-01T00:00:00Z",
                "ends_at": "2031-01-02T00:00:00Z",
            }
            for i in range(5)
        ],
    }
    t = time.perf_counter()
    assert route.validate(body) == []
    first = time.perf_counter() - t
    samples = []
    for _ in range(args.iterations):
        t = time.perf_counter()
        route.validate(body)
        samples.append(time.perf_counter() - t)
    samples.sort()
    print(f"spec loaded in {loaded * 1000:.1f} ms; first validation (compiles) {first * 1000:.2f} ms")
    print(
        f"validation of one push_data body: median {statistics.median(samples) * 1000:.3f} ms, "
        f"p99 {samples[int(len(samples) * 0.99) - 1] * 1000:.3f} ms over {args.iterations} (target < 5 ms)"
    )


if __name__ == "__main__":
    main()
