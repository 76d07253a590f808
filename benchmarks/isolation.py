"""The cost of sealing a process: start-to-exit time of a trivial command (``/bin/true``), and of a Python start,
open (no isolation) against sealed by bubblewrap, with and without the network forwarder (the launcher, needed when
the phase has an endpoint) and the syscall audit (strace). Target: under 50 ms added per sealed process.

    .venv/bin/python benchmarks/isolation.py [--runs 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from skillassay.isolation import Endpoint, Seal, get_isolation


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


def _time(start, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = start()
        proc.wait()
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed: exit {proc.returncode}")
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    root = Path(tempfile.mkdtemp(prefix="skillassay-bench-"))
    ws = root / "ws"
    ws.mkdir()
    env = {"PATH": "/usr/bin:/bin"}
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    fetch = [python, "-c", f"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/').read()"]
    bubblewrap = get_isolation("bubblewrap")
    problem = bubblewrap.problem()
    if problem:
        raise SystemExit(problem)

    def open_start(argv):
        return lambda: subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, start_new_session=True)

    rows: list[tuple[str, str, list[float]]] = []  # (how, command, times)
    for label, argv in (("/bin/true", ["/bin/true"]), ("python -c (fetch over loopback)", fetch)):
        rows.append(("open", label, _time(open_start(argv), args.runs)))
        for audit in (False, True):
            for endpoint in (False, True):
                if label == "/bin/true" and endpoint:
                    continue
                seal = Seal(phase="command", writable=[ws], audit=audit,
                            endpoints=[Endpoint(name="bench", port=port)] if endpoint else [])
                if not endpoint and argv is fetch:
                    continue  # the fetch needs its endpoint
                with bubblewrap.open(seal, root / f"s-{audit}-{endpoint}") as box:
                    def sealed(box=box, argv=argv):
                        return box.popen(argv, cwd=ws, env=env)
                    what = "+forwarder" if endpoint else ""
                    what += "+audit" if audit else ""
                    rows.append((f"sealed{what}", label, _time(sealed, args.runs)))
    server.shutdown()

    print(f"{'how':24} {'command':34} {'median ms':>10} {'p90 ms':>8}")
    base = {}
    for how, label, times in rows:
        med = statistics.median(times)
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        if how == "open":
            base[label] = med
            extra = ""
        else:
            extra = f"  (+{med - base[label]:.1f} ms)"
        print(f"{how:24} {label:34} {med:10.1f} {p90:8.1f}{extra}")
    print("target: under 50 ms added per sealed process (sealed, no audit)")


if __name__ == "__main__":
    main()
