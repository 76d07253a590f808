"""The cost of sealing a process: start-to-exit time of a trivial command (``/bin/true``), and of a Python
start, open (a bare start) against ``--isolation none`` (its subreaper launcher) and sealed by bubblewrap,
with and without the network forwarder (the launcher, needed when the phase has an endpoint) and the
syscall audit (strace). Target: under 50 ms added per sealed process.

With ``--cli``, also a whole scripted Claude Code session (three model turns: a Read, a Bash command, a Write)
run open, sealed, and sealed with the audit: what sealing costs an agent run.

    .venv/bin/python benchmarks/isolation.py [--runs 30] [--cli 5]
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
    def do_GET(self) -> None:
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
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--cli", type=int, default=0, help="also time N scripted Claude Code sessions per mode"
    )
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
        return lambda: subprocess.Popen(
            argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, start_new_session=True
        )

    rows: list[tuple[str, str, list[float]]] = []  # (how, command, times)
    for label, argv in (("/bin/true", ["/bin/true"]), ("python -c (fetch over loopback)", fetch)):
        rows.append(("open", label, _time(open_start(argv), args.runs)))
        with get_isolation("none").open(Seal(phase="command", writable=[ws]), root / f"n-{len(rows)}") as box:

            def unsealed(box=box, argv=argv):
                return box.popen(argv, cwd=ws, env=env)

            rows.append(("none (subreaper)", label, _time(unsealed, args.runs)))
        for audit in (False, True):
            for endpoint in (False, True):
                if label == "/bin/true" and endpoint:
                    continue
                seal = Seal(
                    phase="command",
                    writable=[ws],
                    audit=audit,
                    endpoints=[Endpoint(name="bench", port=port)] if endpoint else [],
                )
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
    if args.cli:
        _cli(args.cli, root)


def _cli(runs: int, root: Path) -> None:
    import shutil as sh

    from skillassay.agents import AgentContext, get_agent
    from skillassay.isolation import Policy
    from skillassay.orchestrator.agent_seal import agent_seal
    from skillassay.services.model_proxy import ModelEndpoint
    from skillassay.testing import ModelServer, Script

    agent = get_agent("claude-code")
    turns = [
        [{"tool_use": {"name": "Read", "input": {"file_path": "{workspace}/app.txt"}}}],
        [
            {
                "tool_use": {
                    "name": "Bash",
                    "input": {"command": "ls -la && cat app.txt", "description": "look"},
                }
            }
        ],
        [{"tool_use": {"name": "Write", "input": {"file_path": "{workspace}/out.txt", "content": "hi\n"}}}],
    ]
    rows = []
    with ModelServer() as server:
        for mode in ("open", "sealed", "sealed+audit"):
            times = []
            for i in range(runs):
                base = root / f"cli-{mode}-{i}"
                ws, home = base / "workspace", base / "home"
                ws.mkdir(parents=True)
                home.mkdir()
                (ws / "app.txt").write_text("hello\n")
                subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
                sid = server.add_script(
                    Script.model_validate(
                        {"id": f"b{mode}{i}".replace("+", ""), "turns": turns, "final_text": "Done."}
                    )
                )
                ctx = AgentContext(
                    workspace=ws,
                    prompt="Write out.txt.",
                    output_dir=base / "out",
                    home=home,
                    timeout=120,
                    model_endpoint=ModelEndpoint(base_url=server.base_url(sid), token="sk-bench"),
                )
                t = time.perf_counter()
                if mode == "open":
                    result = agent.run(ctx)
                else:
                    seal = agent_seal(Policy(), agent, ctx).model_copy(
                        update={"audit": mode == "sealed+audit"}
                    )
                    with Policy().open(seal, base / "seal") as box:
                        ctx.sandbox = box
                        result = agent.run(ctx)
                times.append(time.perf_counter() - t)
                if result.status != "completed" or not (ws / "out.txt").exists():
                    raise SystemExit(f"the {mode} session failed: {result.status} {result.error}")
                sh.rmtree(base, ignore_errors=True)
            rows.append((mode, times))
    print(f"\n{'Claude Code session (3 turns)':34} {'median s':>9} {'min s':>7}")
    for mode, times in rows:
        print(f"{mode:34} {statistics.median(times):9.2f} {min(times):7.2f}")


if __name__ == "__main__":
    main()
