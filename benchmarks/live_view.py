"""The live view's cost (`skillassay serve --live`) on a job of 50 runs: 8 under way, 42 finished (synthetic
records written through the real models, kept by the job's own ``LiveRecorder``), beside 20 older jobs.

    .venv/bin/python benchmarks/live_view.py [--polls 300]

`serve` runs in its own process; its CPU time (user + system, from /proc) is read before and after each batch
of polls, so the figures are the server's alone. Prints, per poll: the server's CPU and the bytes on the
wire, for a state that changed since the last poll (a 200 with the document) and for one that did not (a 304
of headers only, what most polls are); the page's size; and the job's cost of writing its live.json. Targets:
under 5 ms of server CPU per poll, under 32 KB per changed refresh, under 1 KB per unchanged one.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillassay.orchestrator.live import LiveRecorder
from skillassay.phases import RunKey
from skillassay.secrets import environment_redactor

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from synthetic_runs import make_job

TARGET_CPU_MS = 5.0
TARGET_CHANGED_BYTES = 32_000
TARGET_UNCHANGED_BYTES = 1_000
JOB = "20261202-120000-live"


def get(port: int, path: str, etag: str | None = None) -> tuple[bytes, str | None]:
    """(the whole response as sent, its ETag)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        extra = f"If-None-Match: {etag}\r\n" if etag else ""
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    found = re.search(rb"\r\nETag: (\S+)\r\n", data)
    return data, found.group(1).decode() if found else None


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--polls", type=int, default=300, help="polls per measurement (default 300)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skillassay-bench-live-"))
    results = work / "results"
    for j in range(20):
        make_job(results, job_id=f"20261201-{j:02d}0000-old", evals=("flask-py",), runs=1, artifacts=False)
    _, records = make_job(
        results,
        job_id=JOB,
        evals=tuple(f"eval-{i}" for i in range(5)),
        runs=5,
        baseline=True,
        artifacts=False,
    )
    assert len(records) == 50
    live = LiveRecorder(
        results,
        JOB,
        planned=50,
        executor="local",
        max_cost=25.0,
        spent=lambda: 3.2,
        redactor=environment_redactor(),
        heartbeat_s=3600,
    ).start()
    for r in records[:42]:
        live.came_back((r.eval_id, r.variant, r.run_index), r)
    for r in records[42:]:
        live.phase(RunKey(JOB, r.eval_id, r.variant, r.run_index), "agent")
    t0 = time.perf_counter()
    writes = 200
    for n in range(writes):
        r = records[42 + n % 8]
        live.phase(RunKey(JOB, r.eval_id, r.variant, r.run_index), "grading" if n % 2 else "agent")
    write_ms = (time.perf_counter() - t0) / writes * 1000
    file_bytes = (results / JOB / "live.json").stat().st_size

    server = subprocess.Popen(
        [sys.executable, "-m", "skillassay", "serve", "--live", "--results", str(results), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", line).group(1))  # type: ignore[union-attr]
        page, _ = get(port, "/live/")
        _, etag = get(port, "/live/state.json")

        def batch(changing: bool) -> tuple[float, float]:
            nonlocal etag
            sizes, before = 0, cpu_seconds(server.pid)
            for n in range(args.polls):
                if changing:  # the job moved on since the last poll
                    r = records[42 + n % 8]
                    live.phase(RunKey(JOB, r.eval_id, r.variant, r.run_index), f"phase-{n}")
                data, tag = get(port, "/live/state.json", etag)
                sizes += len(data)
                etag = tag or etag
            # the whole batch's CPU (the kernel counts it in ticks of 10 ms: one poll alone would read 0)
            return (cpu_seconds(server.pid) - before) / args.polls * 1000, sizes / args.polls

        batch(False)  # warm: the file parsed once
        changed_cpu, changed_bytes = batch(True)
        unchanged_cpu, unchanged_bytes = batch(False)
    finally:
        live.close("finished")
        server.terminate()
        server.wait(10)
        shutil.rmtree(work, ignore_errors=True)

    print("job: 50 runs (8 under way, 42 finished), beside 20 older jobs in the results root")
    print(f"live.json written by the job:  {file_bytes / 1e3:.1f} KB, {write_ms:.2f} ms per write")
    print(f"page (once):                   {len(page) / 1e3:.1f} KB")
    print(
        f"poll, state changed (200):     {changed_cpu:.2f} ms server CPU, {changed_bytes / 1e3:.1f} KB sent"
    )
    print(f"poll, unchanged (304):         {unchanged_cpu:.2f} ms server CPU, {unchanged_bytes:.0f} bytes")
    print(f"polls per measurement:         {args.polls} (the page polls every 2 s)")
    ok = (
        max(changed_cpu, unchanged_cpu) < TARGET_CPU_MS
        and changed_bytes < TARGET_CHANGED_BYTES
        and unchanged_bytes < TARGET_UNCHANGED_BYTES
    )
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
