"""Throughput and latency of the Seam emulator: ``customers/push_data`` and ``access_codes/list``, alone and
while an abusive client sends 1 MB bodies.

The emulator runs in its own process (as for an out-of-process harness); 4 client threads with httpx, each
with its own workspace (as each run has), send a bounded number of requests over keep-alive connections to
127.0.0.1. Targets on a 2-core machine: >= 500 requests/s and p99 < 25 ms. ``push_data`` runs again with
raw-socket keep-alive clients (far cheaper than httpx, so the figures are the server's): targets < 0.5 ms of
server CPU per request, >= 2,000 requests/s at p99 < 5 ms.

The abuse scenario: while the 4 clients list access codes in their workspace, an abusive client (its own
workspace, 2 connections) sends, in turn, a valid 0.95 MB ``devices/list`` body (25,000 device ids, every one
validated), an invalid 1 MB one (70,000 bad ids) and a 1.5 MB one (over the 1 MiB limit: 413). Printed: the
other clients' p50/p99 with and without the abuse, what the abuser got, and the server's peak memory.

``--rounds N`` runs the raw-socket scenario N times and prints the median (the machine is shared: one round
says little); ``--server-cpu K`` pins the server process to CPU K and the clients to the others ("on one
core").

    .venv/bin/python benchmarks/emulator.py [--requests 2000] [--clients 4] [--only abuse] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import json as _json
import multiprocessing as mp
import os
import resource
import socket
import statistics
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any, Self

import httpx


def _serve(conn: Any, clients: int, cpu_share: float | None, cpu: int | None = None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    from skillassay.seam.emulator import Limits
    from skillassay.seam.emulator.emulator import SeamEmulator

    limits = Limits() if cpu_share is None else Limits(cpu_share=cpu_share)
    emu = SeamEmulator(async_delay=0.2, limits=limits).start()
    # one workspace per client, as per run
    runs = [emu.create_workspace(f"bench-{n}") for n in range(clients)]
    abuser = emu.create_workspace("abuser")
    conn.send(
        {
            "base_url": emu.base_url,
            "workspaces": [
                {
                    "api_key": ws.api_key,
                    "devices": {d["properties"]["name"]: d["device_id"] for d in ws.devices},
                }
                for ws in runs
            ],
            "abuser_key": abuser.api_key,
            "spec_version": emu.spec_version,
        }
    )
    while True:  # "cpu": CPU seconds used so far; "rss": peak resident MB; anything else means stop
        command = conn.recv()
        if command == "cpu":
            conn.send(time.process_time())
        elif command == "rss":
            conn.send(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        else:
            break
    emu.stop()


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))
    return ordered[index]


class _Answer:
    def __init__(self, status_code: int, text: str):
        self.status_code = status_code
        self.text = text


class _RawClient:
    """HTTP/1.1 keep-alive over a plain socket, ``post(path, json=...)`` as httpx has it: a client that costs
    far less CPU than httpx, so the figures are the server's."""

    def __init__(self, base_url: str, headers: dict[str, str], **_: Any):
        host, port = base_url.split("//")[1].rsplit(":", 1)
        self._sock = socket.create_connection((host.strip("[]"), int(port)))
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = self._sock.makefile("rb")
        self._head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.timeout = httpx.Timeout(10)

    def post(self, path: str, json: Any) -> _Answer:
        body = _json.dumps(json).encode()
        self._sock.sendall(
            f"POST {path} HTTP/1.1\r\nhost: bench\r\n{self._head}content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        status = int(self._reader.readline().split()[1])
        length = 0
        while (line := self._reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return _Answer(status, self._reader.read(length).decode())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self._reader.close()
        self._sock.close()


def _run(
    name: str,
    clients: int,
    total: int,
    make_request: Callable[[httpx.Client, int, dict[str, Any]], httpx.Response],
    base_url: str,
    workspaces: list[dict[str, Any]],
    server: Any,
    client_type: Callable[..., Any] = httpx.Client,
) -> dict[str, float]:
    server.send("cpu")
    cpu_before = server.recv()
    client_cpu_before = time.process_time()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(total))

    def worker(ws: dict[str, Any]) -> None:
        with client_type(
            base_url=base_url,
            headers={"authorization": f"Bearer {ws['api_key']}"},
            trust_env=False,
            timeout=10,
        ) as client:
            local: list[float] = []
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    break
                started = time.perf_counter()
                try:
                    resp = make_request(client, i, ws)
                except httpx.TimeoutException:
                    errors.append(f"no answer within {client.timeout.read} s")
                else:
                    if resp.status_code != 200:
                        errors.append(f"{resp.status_code} {resp.text[:200]}")
                local.append(time.perf_counter() - started)
            with lock:
                latencies.extend(local)

    threads = [
        threading.Thread(target=worker, args=(workspaces[n % len(workspaces)],)) for n in range(clients)
    ]
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
        print(f"{name}: {len(errors)} of {len(latencies)} requests failed, e.g. {errors[0]}")
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


def _abuse(base_url: str, api_key: str, stop: threading.Event, connections: int = 2) -> Counter:
    """Send 1 MB bodies until ``stop``: valid (all validated), invalid, and over the limit. Returns
    statuses seen.
    """
    valid = json.dumps({"device_ids": [str(uuid.uuid4()) for _ in range(25_000)]}).encode()
    invalid = json.dumps({"device_ids": ["not-a-uuid"] * 70_000}).encode()
    oversize = json.dumps({"search": "x" * 1_500_000}).encode()
    bodies = [valid, invalid, oversize]
    statuses: Counter = Counter()
    lock = threading.Lock()

    def worker(offset: int) -> None:
        headers = {"authorization": f"Bearer {api_key}", "content-type": "application/json"}
        with httpx.Client(base_url=base_url, headers=headers, trust_env=False, timeout=120) as client:
            i = offset
            while not stop.is_set():
                body = bodies[i % len(bodies)]
                i += 1
                try:
                    status: int | str = client.post("/devices/list", content=body).status_code
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                with lock:
                    statuses[f"{len(body) / 1e6:.2f} MB -> {status}"] += 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join()
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--requests", type=int, default=2000, help="requests per scenario (bounded)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--reservations", type=int, default=100, help="distinct reservation keys pushed")
    parser.add_argument(
        "--only", choices=["push_data", "access_codes/list", "abuse"], help="run one scenario"
    )
    parser.add_argument(
        "--cpu-share", type=float, help="Limits.cpu_share of each workspace (default: the emulator's)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="raw-socket push_data rounds (median printed)")
    parser.add_argument("--server-cpu", type=int, help="pin the server to this CPU, the clients to the rest")
    args = parser.parse_args()
    if args.server_cpu is not None:
        os.sched_setaffinity(0, set(os.sched_getaffinity(0)) - {args.server_cpu} or {args.server_cpu})

    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(
        target=_serve, args=(child, args.clients, args.cpu_share, args.server_cpu), daemon=True
    )
    proc.start()
    if not parent.poll(120):  # the server process died or hangs: say so rather than wait for good
        raise SystemExit(f"the emulator process did not start (exit code {proc.exitcode})")
    info = parent.recv()
    base_url, workspaces = info["base_url"], info["workspaces"]
    try:
        for ws in workspaces:
            front, garage = ws["devices"]["FRONT DOOR"], ws["devices"]["GARAGE"]
            with httpx.Client(
                base_url=base_url, headers={"authorization": f"Bearer {ws['api_key']}"}, trust_env=False
            ) as c:
                c.post(
                    "/spaces/create", json={"name": "Bench unit", "space_key": "bench", "device_ids": [front]}
                )
                # a realistic number of codes to list
                for i in range(int(os.environ.get("BENCH_CODES", "20"))):
                    c.post("/access_codes/create", json={"device_id": garage, "name": f"code {i}"})

        def push(client: httpx.Client, i: int, ws: dict[str, Any]) -> httpx.Response:
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

        def list_codes(client: httpx.Client, i: int, ws: dict[str, Any]) -> httpx.Response:
            garage = ws["devices"]["GARAGE"]
            return client.get("/access_codes/list", params={"device_id": garage, "_strict": "true"})

        print(
            f"Seam emulator benchmark (spec {info['spec_version']}), {args.clients} clients (one workspace "
            "each, "
            "as runs have), 127.0.0.1"
        )
        scenarios = {
            "push_data": ("customers/push_data", push),
            "access_codes/list": ("access_codes/list", list_codes),
        }
        results = {
            key: _run(label, args.clients, args.requests, fn, base_url, workspaces, parent)
            for key, (label, fn) in scenarios.items()
            if args.only in (None, key)
        }
        if results:
            ok = all(r["rps"] >= 500 and r["p99_ms"] < 25 for r in results.values())
            print(
                "targets (>= 500 req/s, p99 < 25 ms):",
                "met" if ok else "NOT met",
                f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)",
            )
        if args.only in (None, "push_data"):  # the server's own cost, with a client that costs little
            rounds = [
                _run(
                    "push_data, raw socket",
                    args.clients,
                    args.requests,
                    push,
                    base_url,
                    workspaces,
                    parent,
                    _RawClient,
                )
                for _ in range(max(1, args.rounds))
            ]
            raw = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            if len(rounds) > 1:
                print(
                    f"median of {len(rounds)} rounds: {raw['rps']:.0f} req/s, p99 {raw['p99_ms']:.2f} ms, "
                    f"server CPU {raw['server_cpu_ms_per_request']:.2f} ms per request"
                )
            print(
                "server targets (< 0.5 ms CPU per request, >= 2,000 req/s, p99 < 5 ms):",
                f"CPU {'met' if raw['server_cpu_ms_per_request'] < 0.5 else 'NOT met'},",
                f"rate {'met' if raw['rps'] >= 2000 and raw['p99_ms'] < 5 else 'NOT met'}",
                f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; the clients share them)",
            )
        if args.only in (None, "abuse"):
            quiet = _run(
                "list, no abuse", args.clients, args.requests, list_codes, base_url, workspaces, parent
            )
            stop = threading.Event()
            got: dict[str, Counter] = {}
            abuser = threading.Thread(target=lambda: got.update(s=_abuse(base_url, info["abuser_key"], stop)))
            abuser.start()
            time.sleep(1.0)  # the abuse is under way
            try:
                loud = _run(
                    "list, under abuse", args.clients, args.requests, list_codes, base_url, workspaces, parent
                )
            finally:
                stop.set()
                abuser.join()
            parent.send("rss")
            rss = parent.recv()
            print("abusive client (own workspace, 2 connections):", dict(sorted(got["s"].items())))
            print(
                f"other clients' p99 under abuse: {loud['p99_ms']:.1f} ms (without: {quiet['p99_ms']:.1f} "
                "ms); "
                f"p50 {loud['p50_ms']:.1f} ms (without: {quiet['p50_ms']:.1f} ms); server peak memory "
                f"{rss:.0f} MB"
            )
    finally:
        parent.send("stop")
        proc.join(10)


if __name__ == "__main__":
    main()
