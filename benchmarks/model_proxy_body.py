"""What an oversized request body costs the harness: a sealed agent sends the model proxy a huge chunked body
(1.5 GiB by default); this prints the harness's resident memory before, at its peak and after, and how long
the 413 took. The proxy reads bodies as they arrive and refuses one once it passes its limit (64 MiB), so the
peak should stay near the limit, whatever the agent offers.

    .venv/bin/python benchmarks/model_proxy_body.py [--gib 1.5]
"""

from __future__ import annotations

import argparse
import socket
import threading
import time

from skillassay.services.model_proxy.proxy import ModelProxy, upstreams_from_env
from skillassay.testing import ModelServer


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("no /proc/self/status")


def offer(port: int, token: str, size: int) -> tuple[int, bytes]:
    """Send up to ``size`` bytes as a chunked body; return what was taken and the start of the answer."""
    chunk = b"x" * (1 << 20)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"transfer-encoding: chunked\r\nx-api-key: " + token.encode() + b"\r\n\r\n"
    )
    sent = 0
    try:
        while sent < size:
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
        sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    try:
        answer = sock.recv(200)
    except OSError:
        answer = b""
    sock.close()
    return sent, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--gib", type=float, default=1.5)
    args = parser.parse_args()
    with ModelServer() as server, ModelProxy(upstreams_from_env({}, server.base_url("none"))) as proxy:
        run = proxy.grant("bench")
        before, peak, done = rss(), [0], threading.Event()

        def watch() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss())
                time.sleep(0.01)

        threading.Thread(target=watch, daemon=True).start()
        t = time.perf_counter()
        sent, answer = offer(proxy.port, run.token, int(args.gib * 2**30))
        took = time.perf_counter() - t
        time.sleep(0.2)
        done.set()
        after = rss()
    mib = 2**20
    status = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "(connection closed)"
    print(
        f"offered {args.gib:g} GiB, taken {sent / mib:.0f} MiB before the proxy stopped reading; "
        f"answer: {status}; {took:.2f} s"
    )
    print(
        f"harness RSS: before {before / mib:.0f} MiB, peak {peak[0] / mib:.0f} MiB "
        f"(+{(peak[0] - before) / mib:.0f} MiB), after {after / mib:.0f} MiB"
    )


if __name__ == "__main__":
    main()
