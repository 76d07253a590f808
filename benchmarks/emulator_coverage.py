"""How much of Seam's public API the emulator answers: every public route of the pinned spec called once
(``seam/emulator/coverage.py``: parameters from the request schema, ids from earlier answers), over HTTP with
a workspace's key, and each 200 answer checked against the route's response schema (the tests' validator).

Printed per family (``acs``, ``devices``, ...): routes in the spec, hand-written, generic (approximate),
answered 200 and schema-valid, 501; then the totals, the CPU per request over HTTP (client and server share
the process), and each handler's own CPU called directly (the generic engine walks schemas on every request,
unlike the hand-written hot routes measured by ``benchmarks/emulator.py``).

    .venv/bin/python benchmarks/emulator_coverage.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "services" / "seam"))
from response_schemas import Answer, ResponseSchemas

from skillassay.seam.emulator.coverage import Send, exercise, table
from skillassay.seam.emulator.emulator import SeamEmulator
from skillassay.seam.emulator.errors import SeamApiError
from skillassay.seam.emulator.handlers import HANDLERS, Ctx
from skillassay.seam.emulator.store import Workspace

COLUMNS = ("routes", "handwritten", "generic", "valid_200", "not_implemented")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="times to call every route (a fresh workspace each time)"
    )
    args = parser.parse_args()
    emu = SeamEmulator(async_delay=0.05).start()
    schemas = ResponseSchemas(emu.spec)
    try:
        cpu_total, requests = 0.0, 0
        answers = []
        for _ in range(args.rounds):
            ws = emu.create_workspace(name="coverage")
            with httpx.Client(
                base_url=emu.base_url, headers={"authorization": f"Bearer {ws.api_key}"}, timeout=30
            ) as client:

                def send(path: str, body: dict) -> tuple[int, bytes]:
                    response = client.post(path, json=body)
                    return response.status_code, response.content

                started = time.process_time()
                answers = exercise(emu.spec, send, HANDLERS)
                cpu_total += time.process_time() - started  # client and server share this process
                requests += len(answers)
        rows = table(answers, lambda a: not schemas.violations([Answer("POST", a.path, 200, a.body)]))
    finally:
        emu.stop()
    print(f"Seam emulator coverage (spec @seamapi/types {emu.spec_version}, public routes)")
    print(f"{'family':<20}" + "".join(f"{c:>16}" for c in COLUMNS))
    totals = dict.fromkeys(COLUMNS, 0)
    for row in rows:
        print(f"{row['family']:<20}" + "".join(f"{row.get(c, 0):>16}" for c in COLUMNS))
        for c in COLUMNS:
            totals[c] += row.get(c, 0)
    print(f"{'total':<20}" + "".join(f"{totals[c]:>16}" for c in COLUMNS))
    print(
        f"answered 200 and schema-valid: {totals['valid_200']}/{totals['routes']} "
        f"({totals['handwritten']} hand-written, {totals['generic']} generic/approximate)"
    )
    print(
        f"CPU (client + server, one process) per request over all routes: "
        f"{cpu_total / max(requests, 1) * 1000:.2f} ms ({requests} requests)"
    )
    costs = handler_costs(args.rounds)
    generic = sorted(((c, p) for p, c in costs.items() if p not in HANDLERS), reverse=True)
    mean = sum(c for c, _ in generic) / max(len(generic), 1)
    print(
        f"generic engine alone (validated parameters -> answer, under the workspace lock): "
        f"mean {mean * 1000:.3f} ms CPU per answer over {len(generic)} routes; slowest: "
        + ", ".join(f"{p} {c * 1000:.2f} ms" for c, p in generic[:3])
    )


def handler_costs(rounds: int) -> dict[str, float]:
    """Each route's handler called directly (no HTTP, no JSON parsing), its CPU (thread time) per call,
    averaged over ``rounds`` fresh workspaces: what a request to it costs the server beyond parsing and
    validation. A workspace's first generic request also seeds its generic records."""
    emu = SeamEmulator(async_delay=0.05).start()
    totals: dict[str, float] = {}
    try:
        for _ in range(rounds):
            handle = emu.create_workspace(name="costs")
            exercise(emu.spec, direct_sender(emu, emu.store.get(handle.workspace_id), totals), HANDLERS)
    finally:
        emu.stop()
    return {path: total / rounds for path, total in totals.items()}


def direct_sender(emu: SeamEmulator, ws: Workspace, totals: dict[str, float]) -> Send:
    def send(path: str, body: dict) -> tuple[int, bytes]:
        if emu.spec.routes[path].validate(body):
            return 400, b"{}"
        handler = emu.routes[path]
        ctx = Ctx(ws=ws, engine=emu.engine, base_url=emu.base_url, path=path)
        started = time.thread_time()
        try:
            with ws.lock:
                answer = json.dumps({**handler(ctx, body), "ok": True}).encode()
        except SeamApiError as err:
            return err.status, json.dumps(err.body("benchmark")).encode()
        finally:
            totals[path] = totals.get(path, 0.0) + time.thread_time() - started
        return 200, answer

    return send


if __name__ == "__main__":
    main()
