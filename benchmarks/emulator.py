"""Throughput and latency of the Seam emulator: ``customers/push_data`` and ``access_codes/list``.

The emulator runs in its own process (as for an out-of-process harness); 4 client threads with httpx
send a bounded number of requests over keep-alive connections to 127.0.0.1. Targets on a 2-core machine:
>= 500 requests/s and p99 < 25 ms.

    .venv/bin/python benchmarks/emulator.py [--requests 2000] [--clients 4]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx


def _serve(conn: Any) -> None:
    from skillassay.services.seam.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=0.2).start()
    ws = emu.create_workspace("bench")
    conn.send(
        {
            "base_url": emu.base_url,
            "api_key": ws.api_key,
            "spec_version": emu.spec_version,
            "devices": {d["properties"]["name"]: d["device_id"] for d in ws.devices},
        }
    )
    while conn.recv() == "cpu":  # CPU seconds the server used so far; anything else means stop
        conn.send(time.process_time())
    emu.stop()


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))
    return ordered[index]


def _run(
    name: str,
    clients: int,
    total: int,
    make_request: Callable[[httpx.Client, int], httpx.Response],
    base_url: str,
    api_key: str,
    server: Any,
) -> dict[str, float]:
    server.send("cpu")
    cpu_before = server.recv()
    client_cpu_before = time.process_time()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(total))

    def worker() -> None:
        with httpx.Client(
            base_url=base_url, headers={"authorization": f"Bearer {api_key}"}, trust_env=False, timeout=10
        ) as client:
            local: list[float] = []
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    break
                started = time.perf_counter()
                resp = make_request(client, i)
                local.append(time.perf_counter() - started)
                if resp.status_code != 200:
                    errors.append(f"{resp.status_code} {resp.text[:200]}")
            with lock:
                latencies.extend(local)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu_before
    server.send("cpu")
    server_cpu = server.recv() - cpu_before
    if errors:
        raise SystemExit(f"{name}: {len(errors)} failed requests, e.g. {errors[0]}")
    result = {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": _percentile(latencies, 99) * 1000,
        "server_cpu_ms_per_request": server_cpu / len(latencies) * 1000,
        "client_cpu_ms_per_request": client_cpu / len(latencies) * 1000,
    }
    print(
        f"{name:<22} {result['requests']:>6} requests  {result['rps']:8.0f} req/s  "
        f"p50 {result['p50_ms']:6.2f} ms  p99 {result['p99_ms']:6.2f} ms  "
        f"(CPU per request: server {result['server_cpu_ms_per_request']:.2f} ms, "
        f"clients {result['client_cpu_ms_per_request']:.2f} ms)"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per scenario (bounded)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--reservations", type=int, default=100, help="distinct reservation keys pushed")
    parser.add_argument("--only", choices=["push_data", "access_codes/list"], help="run one scenario")
    args = parser.parse_args()

    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    info = parent.recv()
    base_url, api_key = info["base_url"], info["api_key"]
    front, garage = info["devices"]["FRONT DOOR"], info["devices"]["GARAGE"]
    try:
        with httpx.Client(
            base_url=base_url, headers={"authorization": f"Bearer {api_key}"}, trust_env=False
        ) as c:
            c.post("/spaces/create", json={"name": "Bench unit", "space_key": "bench", "device_ids": [front]})
            for i in range(int(os.environ.get("BENCH_CODES", "20"))):  # a realistic number of codes to list
                c.post("/access_codes/create", json={"device_id": garage, "name": f"code {i}"})

        def push(client: httpx.Client, i: int) -> httpx.Response:
            day = 1 + (i // args.reservations) % 27  # later pushes of the same key move the end date
            return client.post(
                "/customers/push_data",
                json={
                    "customer_key": "bench-customer",
                    "reservations": [
                        {
                            "reservation_key": f"res-{i % args.reservations}",
                            "space_keys": ["bench"],
                            "starts_at": "2031-01-01T15:00:00Z",
                            "ends_at": f"2031-02-{day:02d}T11:00:00Z",
                        }
                    ],
                },
            )

        def list_codes(client: httpx.Client, i: int) -> httpx.Response:
            return client.get("/access_codes/list", params={"device_id": garage, "_strict": "true"})

        print(f"Seam emulator benchmark (spec {info['spec_version']}), {args.clients} clients, 127.0.0.1")
        scenarios = {
            "push_data": ("customers/push_data", push),
            "access_codes/list": ("access_codes/list", list_codes),
        }
        results = {
            key: _run(label, args.clients, args.requests, fn, base_url, api_key, parent)
            for key, (label, fn) in scenarios.items()
            if args.only in (None, key)
        }
        ok = all(r["rps"] >= 500 and r["p99_ms"] < 25 for r in results.values())
        print(
            "targets (>= 500 req/s, p99 < 25 ms):",
            "met" if ok else "NOT met",
            f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)",
        )
    finally:
        parent.send("stop")
        proc.join(10)


if __name__ == "__main__":
    main()
