"""The job's model proxy, in front of the scripted model server: it meters, prices, swaps keys and passes
answers through unchanged; it refuses what is not a model call and tokens that are not (or no longer) a
run's."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from providers import StubProvider

from skillassay.services.model_proxy.proxy import ModelProxy, Upstream, upstreams_from_env
from skillassay.testing import ModelServer, parse_scripts
from skillassay.usage import load_prices

# built at run time, so no key-shaped literal is committed
REAL_ANTHROPIC = "sk-ant-" + "api03-operator-real-key-0123456789"
REAL_OPENAI = "sk-" + "proj-operator-real-key-0123456789abcdef"

USAGE = {
    "input_tokens": 1234,
    "output_tokens": 56,
    "cache_read_input_tokens": 789,
    "cache_creation_input_tokens": 321,
}


def anthropic_body(model="claude-opus-5-5", stream=True, assistant_turns=0):
    messages = [{"role": "user", "content": "hi"}]
    for _ in range(assistant_turns):
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    return {
        "model": model,
        "stream": stream,
        "max_tokens": 100,
        "messages": messages,
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
    }


def openai_body(model="gpt-5.5", stream=True):
    return {
        "model": model,
        "stream": stream,
        "input": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "name": "exec_command", "parameters": {}}],
    }


@pytest.fixture
def server():
    with ModelServer() as srv:
        yield srv


@pytest.fixture
def proxy_for(server):
    started = []

    def make(script: dict, **kwargs):
        (s,) = parse_scripts(script)
        server.add_script(s)
        env = {"ANTHROPIC_API_KEY": REAL_ANTHROPIC, "OPENAI_API_KEY": REAL_OPENAI, **kwargs.pop("env", {})}
        proxy = ModelProxy(upstreams_from_env(env, server.base_url(s.id)), **kwargs).start()
        started.append(proxy)
        return proxy

    yield make
    for p in started:
        p.stop()


def post(endpoint, path, body, header="x-api-key", **kw):
    auth = (
        {"x-api-key": endpoint.token}
        if header == "x-api-key"
        else {"authorization": f"Bearer {endpoint.token}"}
    )
    return httpx.post(
        endpoint.base_url + path,
        json=body,
        headers={**auth, "anthropic-version": "2023-06-01"},
        timeout=30,
        **kw,
    )


def test_recorded_cost_is_the_scripted_usage_times_the_price_table(proxy_for):
    proxy = proxy_for(
        {
            "id": "cost",
            "turns": [
                {"actions": [{"text": "a"}], "usage": USAGE},
                {"actions": [{"text": "b"}], "usage": USAGE},
            ],
        }
    )
    run = proxy.grant("run-1")
    assert post(run, "/v1/messages", anthropic_body()).status_code == 200
    assert post(run, "/v1/messages", anthropic_body(stream=False, assistant_turns=1)).status_code == 200
    assert post(run, "/v1/responses", openai_body(), header="bearer").status_code == 200
    report = proxy.release(run.token)

    # claude-opus-5-5 in prices.toml: $4 in, $20 out, $0.20 cache read, $5 cache write, per million tokens
    claude = (1234 * 4 + 56 * 20 + 789 * 0.2 + 321 * 5) / 1e6
    # gpt-5.5: $5 in, $0.50 cached, $30 out; OpenAI's input_tokens include the cached ones (the scripted
    # server sends input_tokens=1234 of which cached_tokens=789)
    gpt = ((1234 - 789) * 5 + 789 * 0.5 + 56 * 30) / 1e6
    u = report.usage
    assert u.requests == 3 and u.failed_requests == 0 and not u.unpriced_models
    assert u.cost_usd == pytest.approx(2 * claude + gpt, rel=1e-9)
    assert u.by_model["claude-opus-5-5"].cost_usd == pytest.approx(2 * claude)
    assert u.by_model["gpt-5.5"].cost_usd == pytest.approx(gpt)
    assert (u.input_tokens, u.output_tokens) == (2 * 1234 + 445, 3 * 56)
    assert (u.cache_read_input_tokens, u.cache_creation_input_tokens) == (3 * 789, 2 * 321)
    assert [c.stream for c in report.calls] == [True, False, True]
    assert proxy.job_usage().cost_usd == pytest.approx(u.cost_usd)


def test_an_override_file_reprices_and_an_unknown_model_is_unpriced_not_guessed(proxy_for, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."claude-opus-5-5"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.5\ncache_write = 1.5\n'
    )
    proxy = proxy_for(
        {"id": "override", "turns": [{"actions": [{"text": "a"}], "usage": USAGE}]},
        prices=load_prices(prices),
    )
    run = proxy.grant("r")
    post(run, "/v1/messages", anthropic_body())
    post(run, "/v1/messages", anthropic_body(model="claude-nobody-knows-9"))
    u = proxy.release(run.token).usage
    assert u.by_model["claude-opus-5-5"].cost_usd == pytest.approx(
        (1234 + 56 * 2 + 789 * 0.5 + 321 * 1.5) / 1e6
    )
    assert (
        u.unpriced_models == ["claude-nobody-knows-9"]
        and u.by_model["claude-nobody-knows-9"].cost_usd is None
    )
    assert u.cost_usd == pytest.approx(u.by_model["claude-opus-5-5"].cost_usd)


def test_streams_pass_through_unchanged(proxy_for, server):
    proxy = proxy_for(
        {"id": "same", "turns": [[{"text": "hello"}, {"tool_use": {"name": "Write", "input": {"a": 1}}}]]}
    )
    run = proxy.grant("r")
    through = post(run, "/v1/messages", anthropic_body())
    direct = httpx.post(server.base_url("same") + "/v1/messages", json=anthropic_body(), timeout=30)
    assert through.headers["content-type"].startswith("text/event-stream")
    assert through.content == direct.content and b"input_json_delta" in through.content


def test_the_real_key_goes_upstream_and_the_run_token_does_not(proxy_for, server):
    proxy = proxy_for({"id": "keys", "turns": []}, env={"OPENAI_PROJECT_ID": "proj_operator"})
    run = proxy.grant("r")
    post(run, "/v1/messages", anthropic_body())
    # the agent cannot pick which of the operator's projects pays, nor slip in a cookie
    httpx.post(
        run.base_url + "/v1/responses",
        json=openai_body(),
        timeout=30,
        headers={
            "authorization": f"Bearer {run.token}",
            "openai-project": "proj_other",
            "openai-organization": "org_x",
            "cookie": "session=stolen",
        },
    )
    claude, codex = server.requests("keys")
    assert codex.headers["openai-project"] == "proj_operator" and "openai-organization" not in codex.headers
    assert "cookie" not in codex.headers
    assert claude.headers["x-api-key"] == REAL_ANTHROPIC and "authorization" not in claude.headers
    assert codex.headers["authorization"] == f"Bearer {REAL_OPENAI}" and "x-api-key" not in codex.headers
    for r in (claude, codex):
        assert run.token not in json.dumps(r.headers)


def test_tokens_that_are_not_a_live_runs_are_refused(proxy_for, server):
    proxy = proxy_for({"id": "tok", "turns": []})
    run = proxy.grant("r")
    forged = run.model_copy(update={"token": run.token[:-2] + "xx"})
    assert post(forged, "/v1/messages", anthropic_body()).status_code == 401
    assert httpx.post(run.base_url + "/v1/messages", json=anthropic_body(), timeout=10).status_code == 401
    assert post(run, "/v1/messages", anthropic_body()).status_code == 200
    proxy.release(run.token)
    after = post(run, "/v1/messages", anthropic_body())
    assert after.status_code == 401 and after.json()["error"]["type"] == "authentication_error"
    assert len(server.requests("tok")) == 1  # only the live token's call reached the provider


def test_only_model_routes_are_passed_on(proxy_for, server):
    proxy = proxy_for({"id": "routes", "turns": []})
    run = proxy.grant("r")
    for method, path in [
        ("POST", "/v1/files"),
        ("GET", "/v1/organizations/me"),
        ("POST", "/v1/batches"),
        ("DELETE", "/v1/messages"),
        ("POST", "/v1/fine_tuning/jobs"),
        ("GET", "/_emulator/x"),
    ]:
        resp = httpx.request(method, run.base_url + path, headers={"x-api-key": run.token}, timeout=10)
        assert resp.status_code == 404, (method, path)
    # paths an upstream would normalise into another route of the operator's account, sent as-is (http.client
    # does not normalise them, as httpx and curl would)
    import http.client

    host, port = run.netloc.split(":")
    for method, path in [
        ("POST", "/v1/responses/../files"),
        ("GET", "/v1/models/../../v1/files"),
        ("POST", "/v1/responses/%2e%2e/files"),
        ("POST", "/v1/responses/..%2ffiles"),
        ("POST", "/v1/messages/"),
        ("POST", "//v1/messages"),
        ("POST", "/v1/responses/./x/../../files"),
        ("GET", "/v1/models/%2e%2e"),
    ]:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request(
            method, path, body=b"{}", headers={"x-api-key": run.token, "content-type": "application/json"}
        )
        assert conn.getresponse().status == 404, (method, path)
        conn.close()
    assert server.requests("routes") == []
    assert httpx.head(run.base_url + "/", timeout=10).status_code == 200  # Claude's warm-up, answered locally


@pytest.mark.parametrize(
    ("status", "kind", "api"),
    [
        (429, "rate_limited", "anthropic"),
        (529, "overloaded", "anthropic"),
        (500, "server_error", "anthropic"),
        (429, "rate_limited", "openai"),
        (503, "server_error", "openai"),
    ],
)
def test_provider_errors_are_passed_on_and_recorded(proxy_for, status, kind, api):
    proxy = proxy_for(
        {
            "id": f"err{status}{api}",
            "turns": [{"error": status, "fail_times": 2, "actions": [{"text": "ok"}]}],
        }
    )
    run = proxy.grant("r")
    path, body, header = (
        ("/v1/messages", anthropic_body(), "x-api-key")
        if api == "anthropic"
        else ("/v1/responses", openai_body(), "bearer")
    )
    answers = [post(run, path, body, header=header).status_code for _ in range(3)]
    assert answers == [status, status, 200]  # the agent sees what the provider said, and may retry
    u = proxy.release(run.token).usage
    assert u.requests == 3 and u.failed_requests == 2 and u.provider_error_count == 2
    assert [(e.kind, e.http_status, e.api) for e in u.provider_errors] == [(kind, status, api)] * 2
    assert all(e.retryable for e in u.provider_errors)
    assert REAL_ANTHROPIC not in u.model_dump_json() and REAL_OPENAI not in u.model_dump_json()


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_an_error_inside_a_stream_is_recorded(proxy_for, api):
    proxy = proxy_for({"id": f"mid{api}", "turns": [{"stream_error": "overloaded_error"}]})
    run = proxy.grant("r")
    if api == "anthropic":
        resp = post(run, "/v1/messages", anthropic_body())
    else:
        resp = post(run, "/v1/responses", openai_body(), header="bearer")
    assert resp.status_code == 200 and b"overloaded_error" in resp.content
    (err,) = proxy.release(run.token).usage.provider_errors
    assert err.kind == "overloaded" and err.http_status is None


def test_an_unreachable_provider_is_a_connection_error(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    ups = {api: Upstream(api=api, base_url=f"http://127.0.0.1:{port}") for api in ("anthropic", "openai")}
    with ModelProxy(ups) as proxy:
        run = proxy.grant("r")
        resp = post(run, "/v1/messages", anthropic_body())
        assert resp.status_code == 502 and resp.json()["type"] == "error"
        (err,) = proxy.release(run.token).usage.provider_errors
    assert err.kind == "connection" and err.http_status is None


def test_a_call_cut_off_by_the_agent_still_counts(proxy_for):
    proxy = proxy_for({"id": "cut", "turns": [{"actions": [{"text": "x" * 200_000}], "usage": USAGE}]})
    run = proxy.grant("r")
    with httpx.stream(
        "POST",
        run.base_url + "/v1/messages",
        json=anthropic_body(),
        headers={"x-api-key": run.token},
        timeout=30,
    ) as resp:
        next(resp.iter_raw())  # the agent is killed after the first bytes
    report = proxy.release(run.token, wait=10)
    (call,) = report.calls
    assert call.tokens.input_tokens == 1234  # message_start was read before the hang-up
    assert report.usage.cost_usd > 0


def test_the_admin_side_over_http(proxy_for):
    proxy = proxy_for({"id": "admin", "turns": [{"actions": [{"text": "a"}], "usage": USAGE}]})
    client = proxy.client()
    run = client.grant("remote-run")
    assert run.base_url == proxy.url and run.netloc == f"127.0.0.1:{proxy.port}"
    post(run, "/v1/messages", anthropic_body())
    assert client.report(run.token).usage.requests == 1
    released = client.release(run.token)
    assert released.run_id == "remote-run" and released.usage.input_tokens == 1234
    assert client.job_usage().requests == 1
    # a run's token (or none) opens no admin route
    for headers in ({"authorization": f"Bearer {run.token}"}, {}):
        assert (
            httpx.post(proxy.url + "/_skillassay/grants", json={"run_id": "x"}, headers=headers).status_code
            == 403
        )
        assert httpx.get(proxy.url + "/_skillassay/usage", headers=headers).status_code == 403
    assert "admin_token" not in repr(client) or client.admin_token not in repr(client)


def test_upstreams_from_the_environment():
    ups = upstreams_from_env(
        {
            "ANTHROPIC_AUTH_TOKEN": "tok-123456",
            "OPENAI_BASE_URL": "https://gw.example/v1",
            "OPENAI_API_KEY": "k-123456",
        }
    )
    assert ups["anthropic"].base_url == "https://api.anthropic.com"
    assert ups["anthropic"].headers() == {"authorization": "Bearer tok-123456"}
    assert ups["openai"].base_url == "https://gw.example" and ups["openai"].headers() == {
        "authorization": "Bearer k-123456"
    }
    assert upstreams_from_env({})["openai"].headers() == {}
    assert "k-123456" not in repr(ups["openai"])


# -- the proxy is bounded per run ----------------------------------------------------------------------------


@pytest.fixture
def provider():
    with StubProvider() as p:
        yield p


def _proxy_to(provider):
    env = {"ANTHROPIC_API_KEY": REAL_ANTHROPIC, "OPENAI_API_KEY": REAL_OPENAI}
    return ModelProxy(upstreams_from_env(env, provider.url))


def test_every_route_passed_on_is_metered_and_stored_responses_are_not_passed_on(provider):
    """/v1/responses/compact went upstream and was recorded as 0 tokens, outside --max-cost; GET and POST of
    /v1/responses/<id>[/<seg>] were passed on too."""
    with _proxy_to(provider) as proxy:
        run = proxy.grant("r")
        compact = post(run, "/v1/responses/compact", {"model": "gpt-5.5", "input": []}, header="bearer")
        assert compact.status_code == 200
        for method, path in [
            ("GET", "/v1/responses/resp_1"),
            ("POST", "/v1/responses/resp_1/cancel"),
            ("GET", "/v1/responses/resp_1/input_items"),
            ("POST", "/v1/responses/x"),
        ]:
            resp = httpx.request(
                method, run.base_url + path, headers={"authorization": "Bearer " + run.token}
            )
            assert resp.status_code == 404, (method, path)
        report = proxy.release(run.token)
    assert provider.paths == ["/v1/responses/compact"]
    (call,) = report.calls
    assert call.conversation and call.tokens.input_tokens == 1000 and call.tokens.output_tokens == 200
    assert report.usage.cost_usd == pytest.approx((1000 * 5 + 200 * 30) / 1e6)  # gpt-5.5: $5 in, $30 out
    assert proxy.job_usage().cost_usd == report.usage.cost_usd  # what --max-cost reads


def test_a_burst_of_side_calls_is_refused_by_the_proxy_not_sent_on(provider):
    """An agent bursting /v1/messages/count_tokens spent the operator's shared rate limit, 429 after 429;
    now the run's side routes are rate-limited by the proxy, which answers itself."""
    import time

    from skillassay.services.model_proxy.proxy import SIDE_BURST, SIDE_PER_MINUTE

    with _proxy_to(provider) as proxy:
        run = proxy.grant("r")
        started = time.monotonic()
        with httpx.Client(headers={"x-api-key": run.token}, timeout=30) as client:  # one client: fast calls
            count = run.base_url + "/v1/messages/count_tokens"
            answers = [client.post(count, json=anthropic_body()).status_code for _ in range(SIDE_BURST + 10)]
        refilled = (time.monotonic() - started) * SIDE_PER_MINUTE / 60
        # the conversation goes on
        assert post(run, "/v1/messages", anthropic_body(stream=False)).status_code == 200
        report = proxy.release(run.token)
    assert answers == [429] * (SIDE_BURST + 10)  # the provider's, then the proxy's own
    reached = provider.paths.count("/v1/messages/count_tokens")
    assert SIDE_BURST <= reached <= SIDE_BURST + refilled + 1
    assert report.usage.refused_requests == SIDE_BURST + 10 - reached
    assert len(report.calls) == report.usage.requests == len(provider.paths)  # a refusal is no provider call


def test_a_flood_of_model_calls_is_refused_by_the_proxy_not_sent_on(provider):
    """An agent flooding the conversation route itself (tiny /v1/messages calls until the shared limit gives
    429) reaches the provider at most CONVERSATION_BURST times (plus the refill); the rest the proxy
    refuses itself, which is the agent's doing (never a provider error)."""
    import time

    from skillassay.services.model_proxy.proxy import CONVERSATION_BURST, CONVERSATION_PER_MINUTE

    with _proxy_to(provider) as proxy:
        run = proxy.grant("r")
        started = time.monotonic()
        with httpx.Client(headers={"x-api-key": run.token}, timeout=30) as client:
            answers = [
                client.post(run.base_url + "/v1/messages", json=anthropic_body(stream=False)).status_code
                for _ in range(CONVERSATION_BURST + 15)
            ]
        refilled = (time.monotonic() - started) * CONVERSATION_PER_MINUTE / 60
        report = proxy.release(run.token)
    reached = provider.paths.count("/v1/messages")
    assert CONVERSATION_BURST <= reached <= CONVERSATION_BURST + refilled + 1
    assert answers.count(429) == CONVERSATION_BURST + 15 - reached == report.usage.refused_requests


def test_a_run_has_a_bounded_number_of_requests_under_way(proxy_for, server):
    from concurrent.futures import ThreadPoolExecutor

    from skillassay.services.model_proxy.proxy import MAX_CONCURRENT

    proxy = proxy_for({"id": "slow", "turns": [{"hang": 3, "actions": [{"text": "a"}]}]})
    run, other = proxy.grant("r"), proxy.grant("other")
    limits = httpx.Limits(max_connections=MAX_CONCURRENT + 8)
    with ThreadPoolExecutor(MAX_CONCURRENT + 8) as pool, httpx.Client(limits=limits, timeout=30) as client:
        futures = [
            pool.submit(
                client.post,
                run.base_url + "/v1/messages",
                json=anthropic_body(stream=False),
                headers={"x-api-key": run.token},
            )
            for _ in range(MAX_CONCURRENT + 8)
        ]
        answers = sorted(f.result().status_code for f in futures)
        # another run has a cap of its own
        assert post(other, "/v1/messages", anthropic_body(stream=False)).status_code == 200
    assert answers == [200] * MAX_CONCURRENT + [429] * 8
    usage = proxy.release(run.token).usage
    assert usage.requests == MAX_CONCURRENT and usage.refused_requests == 8
    assert usage.provider_error_count == 0
    assert len(server.requests("slow")) == MAX_CONCURRENT + 1


def _rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_huge_chunked_body_is_refused_while_it_is_read(proxy_for):
    """A 1.5 GiB chunked body got its 413 only after the harness grew by a gigabyte: the size is now checked
    as the body arrives, and what the harness holds stays near the limit."""
    import threading
    import time

    from skillassay.services.model_proxy.proxy import MAX_BODY

    proxy = proxy_for({"id": "big", "turns": []})
    run = proxy.grant("r")
    peak, done = [_rss()], threading.Event()
    before = peak[0]

    def watch():
        while not done.is_set():
            peak.append(_rss())
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
    chunk = b"x" * (1 << 20)
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"transfer-encoding: chunked\r\nx-api-key: " + run.token.encode() + b"\r\n\r\n"
    )
    sent = 0
    try:
        while sent < 4 * MAX_BODY:  # 256 MiB offered
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
    except OSError:
        pass  # the proxy stopped reading (a full window, a reset): the rest was never taken
    try:
        answer = sock.recv(65536)
    except OSError:
        answer = b""
    sock.close()
    done.set()
    grown = max(peak) - before
    # the proxy answered 413 and hung up: the rest was never read (the answer may be lost to the reset)
    assert sent < 2 * MAX_BODY and (answer == b"" or answer.startswith(b"HTTP/1.1 413")), (sent, answer[:100])
    assert grown < MAX_BODY + 48 * 2**20, f"the harness grew by {grown / 2**20:.0f} MiB"
    assert proxy.release(run.token).usage.requests == 0


def test_a_runs_bodies_under_way_are_bounded_together(proxy_for):
    """Each under the limit, many bodies at once would still hold MAX_CONCURRENT times it: a run's bodies
    under way share one budget, and the one that passes it is refused."""
    from skillassay.services.model_proxy.proxy import MAX_BODY, MAX_RUN_BUFFERED

    proxy = proxy_for({"id": "many", "turns": []})
    run = proxy.grant("r")
    part = b"x" * (1 << 20)
    socks, refused = [], []
    for _ in range(MAX_RUN_BUFFERED // (MAX_BODY - 8 * 2**20) + 1):  # 56 MiB each: the third passes 128 MiB
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nx-api-key: "
            + run.token.encode()
            + b"\r\n\r\n"
        )
        try:
            for _ in range(56):
                sock.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
        except OSError:
            refused.append(sock)
        socks.append(sock)
    import time

    time.sleep(0.5)  # the proxy has read what was sent
    answers = []
    for sock in socks:
        sock.settimeout(0.5)
        try:
            answers.append(sock.recv(100)[:12])
        except OSError:
            answers.append(b"")
        sock.close()
    assert answers[:2] == [b"", b""]  # still being read, under way
    assert answers[2] in (b"HTTP/1.1 413", b"") and (answers[2] or socks[2] in refused), answers
    assert proxy.release(run.token, wait=5).usage.requests == 0
    assert proxy._grants[run.token].buffered == 0  # every byte held was given back
