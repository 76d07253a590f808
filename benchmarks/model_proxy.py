"""What the model proxy adds to a model call: the time to the first byte and to the end of a streamed answer,
and the time of a small non-streamed call, straight to the scripted model server against through the proxy
(which meters and prices it on the way). Each call is a fresh connection, as a CLI's retries and parallel
runs make them.

    .venv/bin/python benchmarks/model_proxy.py [--calls 200] [--text-kb 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

import httpx

from skillassay.services.model_proxy.proxy import ModelProxy, upstreams_from_env
from skillassay.testing import ModelServer, parse_scripts


def body(stream: bool) -> dict:
    return {
        "model": "claude-opus-5-5",
        "stream": stream,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "Write", "input_schema": {}}],
    }


def timed(url: str, headers: dict, stream: bool) -> tuple[float, float]:
    started = time.perf_counter()
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url + "/v1/messages", json=body(stream), headers=headers) as resp,
    ):
        first = None
        for _ in resp.iter_raw():
            first = first or time.perf_counter()
        end = time.perf_counter()
    assert resp.status_code == 200
    return (first or end) - started, end - started


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--text-kb", type=int, default=20, help="size of the streamed answer's text")
    args = parser.parse_args()
    (script,) = parse_scripts({"id": "bench", "final_text": "x" * (args.text_kb * 1024)})
    with (
        ModelServer([script]) as server,
        ModelProxy(upstreams_from_env({}, server.base_url("bench"))) as proxy,
    ):
        grant = proxy.grant("bench")
        direct, through = server.base_url("bench"), grant.base_url
        auth = {"x-api-key": grant.token}
        for url in (direct, through):  # warm both paths
            timed(url, auth, True)
        rows = []
        for label, stream in (("streamed", True), ("non-streamed", False)):
            d = [timed(direct, auth, stream) for _ in range(args.calls)]
            p = [timed(through, auth, stream) for _ in range(args.calls)]
            for what, i in (("first byte", 0), ("whole answer", 1)):
                if not stream and i == 0:
                    continue
                md, mp = statistics.median(x[i] for x in d), statistics.median(x[i] for x in p)
                rows.append((f"{label}, {what}", md, mp))
        report = proxy.release(grant.token)
    print(f"{args.calls} calls each way, {args.text_kb} KB answers; median milliseconds")
    print(f"{'':28} {'direct':>8} {'proxy':>8} {'added':>8}")
    for name, md, mp in rows:
        print(f"{name:28} {md * 1000:8.2f} {mp * 1000:8.2f} {(mp - md) * 1000:8.2f}")
    print(
        f"metered: {report.usage.requests} calls, {report.usage.input_tokens} input tokens, "
        f"${report.usage.cost_usd:.4f}"
    )


if __name__ == "__main__":
    main()
