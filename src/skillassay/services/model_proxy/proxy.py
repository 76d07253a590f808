"""The job's model proxy: the agent's only model endpoint, holding the real keys, metering every call.

One per job, in a background thread of the harness. Each run attempt gets a grant: a random token that the
proxy swaps for the provider's key on the way up, and refuses once the run is over. Answers stream back
unchanged (the agent sees exactly what the provider said, errors included, so it retries as it would against
the provider); on the way, the proxy reads each answer's usage and errors into the grant's record.

Only the model routes are passed on (Anthropic Messages and its token count, OpenAI Responses and its
compaction, the model lists): a run's token cannot reach the rest of the operator's account through the real
key. Every call passed on is metered. The proxy is bounded per run: a request body is read as it arrives and
refused once it passes ``MAX_BODY`` (or the run's bodies under way ``MAX_RUN_BUFFERED``); a run has at most
``MAX_CONCURRENT`` requests under way; its side routes (token counts, model lists) are rate-limited, so one
run cannot spend the operator's shared rate limit. What the proxy refuses itself never reaches the provider
and is never a provider error.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any, Self

import anyio
import httpx
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from skillassay.asgi import ThreadedServer, bind
from skillassay.errors import InfrastructureError, SkillassayError
from skillassay.secrets import redact
from skillassay.services.model_proxy.grants import (
    ADMIN_PREFIX,
    GrantReport,
    ModelEndpoint,
    ModelProxyClient,
)
from skillassay.services.model_proxy.meter import Meter, error_text
from skillassay.usage import (
    Api,
    ModelCall,
    ModelUsage,
    PriceTable,
    ProviderError,
    classify_answer,
    is_conversation,
    load_prices,
)

DEFAULT_UPSTREAMS: dict[Api, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
}
# The provider keys a harness may hold, in the order they are preferred, and how each is sent upstream.
# None of them is ever given to an agent (agents/installed.py drops every name here from an agent's
# environment).
PROVIDER_KEYS: dict[str, tuple[Api, str]] = {
    "ANTHROPIC_API_KEY": ("anthropic", "x-api-key"),
    "ANTHROPIC_AUTH_TOKEN": ("anthropic", "authorization"),
    "OPENAI_API_KEY": ("openai", "authorization"),
    "CODEX_API_KEY": ("openai", "authorization"),
}
MAX_BODY = 64 * 1024 * 1024  # a request body larger than this is refused (413): no model call is that big
MAX_CONCURRENT = 16  # requests under way per run; a CLI's parallel subagents stay well below it
MAX_RUN_BUFFERED = 2 * MAX_BODY  # request bytes a run's requests under way may hold in the harness at once
SIDE_BURST = 20  # side-route calls (token counts, model lists) a run may make at once...
SIDE_PER_MINUTE = 30  # ...and then per minute
# conversation calls a run may make at once, then per minute: far above what a CLI's turns (and its parallel
# subagents) take, so a run cannot spend the operator's shared rate limit by flooding the conversation route
CONVERSATION_BURST = 30
CONVERSATION_PER_MINUTE = 60
MAX_FIRST_REQUEST = 2 * 1024 * 1024  # of the first model request, kept for its grant's report
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
}
# credentials, and the headers that pick which of the operator's organisations or projects pays: the proxy's
# to set
_NOT_UP = _HOP | {
    "authorization",
    "x-api-key",
    "cookie",
    "accept-encoding",
    "openai-organization",
    "openai-project",
    "anthropic-organization",
    "x-stainless-organization",
}
_NOT_DOWN = _HOP | {"content-encoding", "set-cookie"}


class Upstream(BaseModel):
    """Where one API's calls go, and the key the proxy adds (None: send none, e.g. to the scripted server)."""

    api: Api
    base_url: str
    key: str | None = Field(default=None, repr=False)
    key_header: str = "authorization"  # "x-api-key" or "authorization" (Bearer)
    extra: dict[str, str] = Field(default_factory=dict)  # the operator's organisation/project headers, if any

    def headers(self) -> dict[str, str]:
        out = dict(self.extra)
        if not self.key:
            return out
        if self.key_header == "x-api-key":
            out["x-api-key"] = self.key
        else:
            out["authorization"] = f"Bearer {self.key}"
        return out


def upstreams_from_env(env: Mapping[str, str], override: str | None = None) -> dict[Api, Upstream]:
    """The upstream of each API: ``override`` for both when given (a scripted model server, a gateway), else
    the provider's own base URL variable, else the provider; with the first provider key found in ``env``."""
    out: dict[Api, Upstream] = {}
    for api in ("anthropic", "openai"):
        if override:
            base = override
        elif api == "anthropic":
            base = env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAMS[api]
        else:
            base = env.get("OPENAI_BASE_URL") or DEFAULT_UPSTREAMS[api]
        base = base.rstrip("/")
        base = base.removesuffix("/v1")
        if not base.startswith(("http://", "https://")):
            raise SkillassayError(f"model upstream {base!r}: expected an http:// or https:// URL")
        key, header = None, "authorization"
        for name, (key_api, how) in PROVIDER_KEYS.items():
            if key_api == api and env.get(name):
                key, header = env[name], how
                break
        extra = {}
        if api == "openai":
            extra = {
                h: env[v]
                for h, v in (
                    ("openai-organization", "OPENAI_ORG_ID"),
                    ("openai-project", "OPENAI_PROJECT_ID"),
                )
                if env.get(v)
            }
        out[api] = Upstream(api=api, base_url=base, key=key, key_header=header, extra=extra)
    return out


# The model routes passed on, exactly: a path with anything else (dot segments, percent-escapes, other routes)
# is refused, because the upstream (or httpx) would normalise "/v1/responses/../files" into a route of the
# operator's account that the real key opens.
_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9._:-]{0,199}"
# Stored responses (retrieval, input items, cancel, delete) are not passed on: the CLIs send ``store: false``,
# and a retrieval's answer repeats the usage of a call already counted.
_ROUTES: list[tuple[set[str], re.Pattern[str], Api | None]] = [
    ({"POST"}, re.compile(r"/v1/messages(?:/count_tokens)?"), "anthropic"),
    ({"POST"}, re.compile(r"/v1/responses(?:/compact)?"), "openai"),
    ({"GET"}, re.compile(rf"/v1/models(?:/{_SEGMENT})?"), None),  # either API: told apart by the auth header
]


def _route(method: str, path: str, headers: Mapping[str, str], raw_path: bytes | None = None) -> Api | None:
    """Which API a request is for, or None when the proxy does not pass it on."""
    if raw_path is not None and raw_path.split(b"?", 1)[0] != path.encode():
        return None  # percent-escapes in the path: nothing a model client needs
    if "/../" in path + "/" or "/./" in path + "/" or "//" in path:
        return None
    for methods, pattern, api in _ROUTES:
        if method in methods and pattern.fullmatch(path):
            if api is None:
                return "anthropic" if ("x-api-key" in headers or "anthropic-version" in headers) else "openai"
            return api
    return None


def _error(api: Api | None, status: int, message: str, kind: str = "api_error") -> JSONResponse:
    """An error in the shape the agent's SDK expects from its provider."""
    body: dict[str, Any]
    if api == "openai":
        body = {"error": {"message": message, "type": kind, "code": kind}}
    else:
        body = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(body, status_code=status)


class _Grant:
    def __init__(self, run_id: str):
        self.run_id = run_id
        self.usage = ModelUsage()
        self.calls: list[ModelCall] = []
        self.in_flight = 0
        self.released = False
        self.first_request: str | None = None  # the CLI's first model request, as it was sent
        self.side = _Bucket(SIDE_BURST, SIDE_PER_MINUTE / 60)
        self.conversation = _Bucket(CONVERSATION_BURST, CONVERSATION_PER_MINUTE / 60)
        self.buffered = 0  # bytes of request bodies the proxy holds for this run's requests under way

    def admit(self, path: str) -> str | None:
        """Why the proxy refuses this request of the run itself (its caller holds the lock), or None."""
        if self.in_flight >= MAX_CONCURRENT:
            return f"this run has {self.in_flight} requests under way, the most a run may have"
        if not is_conversation(path) and not self.side.take():
            return (
                f"this run made more than {SIDE_BURST} token-count or model-list calls, then over "
                f"{SIDE_PER_MINUTE} a minute"
            )
        if is_conversation(path) and not self.conversation.take():
            return (
                f"this run made more than {CONVERSATION_BURST} model calls, then over "
                f"{CONVERSATION_PER_MINUTE} a minute"
            )
        return None

    def report(self) -> GrantReport:
        return GrantReport(
            run_id=self.run_id,
            usage=self.usage.model_copy(deep=True),
            calls=list(self.calls),
            first_request=self.first_request,
        )


class _Bucket:
    """A token bucket: ``burst`` at once, refilled at ``rate`` per second."""

    def __init__(self, burst: int, rate: float):
        self.burst, self.rate = burst, rate
        self.level = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level < 1:
            return False
        self.level -= 1
        return True


class ModelProxy:
    """Start it, hand ``grant(run_id)`` to each run attempt, ``release(token)`` when the attempt ends."""

    def __init__(
        self,
        upstreams: Mapping[Api, Upstream],
        prices: PriceTable | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        public_host: str | None = None,
        connect_timeout: float = 30.0,
        read_timeout: float = 600.0,
    ):
        self.upstreams = dict(upstreams)
        self.prices = prices or load_prices()
        self.host = host
        self.public_host = public_host
        self._requested_port = port
        self.port: int | None = None
        self.admin_token = secrets.token_urlsafe(32)
        self._timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=60.0, pool=None)
        self._grants: dict[str, _Grant] = {}
        self._job = ModelUsage()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._client: httpx.AsyncClient | None = None
        self._server: ThreadedServer | None = None
        # the key values, to keep them out of anything the proxy records (an error message may echo a key)
        self._hidden = [u.key for u in self.upstreams.values() if u.key]

    # -- lifecycle -------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The root URL runs are given (``public_host`` when the proxy listens on all interfaces for other
        nodes).
        """
        if self.port is None:
            raise RuntimeError("the model proxy is not running")
        host = self.public_host or (self.host if self.host not in ("0.0.0.0", "::") else socket.gethostname())
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def start(self) -> Self:
        try:
            sock = bind(self.host, self._requested_port)
        except OSError as exc:
            raise InfrastructureError(
                f"the model proxy cannot listen on {self.host}:{self._requested_port}: {exc.strerror or exc}"
            ) from None
        self._server = ThreadedServer(
            self._app(),
            sock,
            name="skillassay-model-proxy",
            what="the model proxy",
            error=InfrastructureError,
            lifespan="on",
            timeout_graceful_shutdown=2,
            timeout_keep_alive=30,
        ).start()
        self.port = self._server.port
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
        self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self) -> ModelProxyClient:
        """The admin side over HTTP, for runs executed elsewhere (another process or node)."""
        return ModelProxyClient(url=self.url, admin_token=self.admin_token)

    # -- grants ----------------------------------------------------------------------------------------------
    def grant(self, run_id: str) -> ModelEndpoint:
        token = "sk-skillassay-run-" + secrets.token_urlsafe(24)
        with self._lock:
            self._grants[token] = _Grant(run_id)
        return ModelEndpoint(base_url=self.url, token=token)

    def report(self, token: str) -> GrantReport:
        with self._lock:
            grant = self._grants.get(token)
            if grant is None:
                raise KeyError("no such grant")
            return grant.report()

    def release(self, token: str, wait: float = 5.0) -> GrantReport:
        """End a grant: its token is refused from now on. Waits (up to ``wait`` s) for calls still streaming,
        so a run killed mid-answer still counts what the provider billed for it."""
        deadline = time.monotonic() + wait
        with self._lock:
            grant = self._grants.get(token)
            if grant is None:
                raise KeyError("no such grant")
            grant.released = True
            while grant.in_flight and time.monotonic() < deadline:
                self._idle.wait(timeout=max(0.0, deadline - time.monotonic()))
            return grant.report()

    def job_usage(self) -> ModelUsage:
        with self._lock:
            return self._job.model_copy(deep=True)

    # -- HTTP ------------------------------------------------------------------------------------------------
    def _app(self) -> Starlette:
        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            # follow_redirects off: a provider redirect is passed to the agent as is, never followed with the
            # key
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False, trust_env=False)
            try:
                yield
            finally:
                await self._client.aclose()

        methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]
        return Starlette(
            routes=[
                Route(ADMIN_PREFIX + "/grants", self._admin_grant, methods=["POST"]),
                Route(ADMIN_PREFIX + "/grants/{token}", self._admin_report, methods=["GET", "DELETE"]),
                Route(ADMIN_PREFIX + "/usage", self._admin_usage, methods=["GET"]),
                Route("/{path:path}", self._handle, methods=methods),
            ],
            lifespan=lifespan,
        )

    def _is_admin(self, request: Request) -> bool:
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.admin_token}".encode())

    async def _admin_grant(self, request: Request) -> Response:
        if not self._is_admin(request):
            return JSONResponse({"error": "forbidden"}, status_code=403)
        try:
            body = await request.json()
            run_id = str(body["run_id"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'expected {"run_id": ...}'}, status_code=400)
        endpoint = self.grant(run_id)
        return JSONResponse({"base_url": endpoint.base_url, "token": endpoint.token})

    async def _admin_report(self, request: Request) -> Response:
        if not self._is_admin(request):
            return JSONResponse({"error": "forbidden"}, status_code=403)
        token = request.path_params["token"]
        try:
            if request.method == "DELETE":
                report = await asyncio.to_thread(self.release, token)
            else:
                report = self.report(token)
        except KeyError:
            return JSONResponse({"error": "no such grant"}, status_code=404)
        return Response(report.model_dump_json(), media_type="application/json")

    async def _admin_usage(self, request: Request) -> Response:
        if not self._is_admin(request):
            return JSONResponse({"error": "forbidden"}, status_code=403)
        return Response(self.job_usage().model_dump_json(), media_type="application/json")

    @staticmethod
    def _token(request: Request) -> str | None:
        key = request.headers.get("x-api-key")
        if key:
            return key.strip()
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return None

    async def _handle(self, request: Request) -> Response:
        path = "/" + request.path_params.get("path", "")
        if path == "/" and request.method in ("GET", "HEAD"):
            return Response(status_code=200)  # Claude Code's warm-up: nothing to pass on
        api = _route(request.method, request.url.path, request.headers, request.scope.get("raw_path"))
        path = request.url.path
        if api is None:
            return JSONResponse(
                {
                    "error": {
                        "message": f"skillassay's model proxy does not pass on {request.method} {path}",
                        "type": "not_found_error",
                    }
                },
                status_code=404,
            )
        token = self._token(request)
        refused = None
        with self._lock:
            grant = self._grants.get(token or "")
            if grant is None or grant.released:
                grant = None
            else:
                refused = grant.admit(path)
                if refused is None:
                    grant.in_flight += 1
                else:
                    grant.usage.refused_requests += 1
        if grant is None:
            return _error(
                api,
                401,
                "skillassay model proxy: this run's token is unknown or its run is over",
                "authentication_error",
            )
        if refused is not None:
            # answered here, never sent upstream: the agent's own doing (never a provider error)
            response = _error(api, 429, f"skillassay model proxy: {refused}", "rate_limit_error")
            response.headers["retry-after"] = "1"
            return response
        try:
            return await self._forward(request, api, path, grant)
        except BaseException:
            self._done(grant)
            raise

    def _done(self, grant: _Grant, call: ModelCall | None = None) -> None:
        with self._lock:
            if call is not None:
                grant.calls.append(call)
                grant.usage.add_call(call)
                self._job.add_call(call)
            grant.in_flight -= 1
            self._idle.notify_all()

    def _call(
        self,
        api: Api,
        path: str,
        started: float,
        at: datetime,
        meter: Meter | None,
        status: int | None,
        requested_model: str | None,
        error: ProviderError | None,
    ) -> ModelCall:
        model = (meter.model if meter else None) or requested_model
        tokens = meter.tokens if meter else None
        call = ModelCall(
            at=at,
            api=api,
            path=path,
            model=model,
            status=status,
            duration_s=round(time.monotonic() - started, 3),
            stream=bool(meter and meter.streaming),
            error=error,
        )
        if tokens is not None:
            call.tokens = tokens
            call.cost_usd = self.prices.cost(model, tokens)
        return call

    def _provider_error(
        self, api: Api, kind, status: int | None, message: str, model: str | None
    ) -> ProviderError:
        return ProviderError(
            api=api, kind=kind, http_status=status, message=redact(message, self._hidden)[:500], model=model
        )

    async def _forward(self, request: Request, api: Api, path: str, grant: _Grant) -> Response:
        body = await self._read_body(request, grant)
        if body is None:
            self._done(grant)
            refusal = _error(
                api,
                413,
                f"skillassay model proxy: request body over {MAX_BODY // 2**20} MiB, or "
                f"this run's bodies under way over {MAX_RUN_BUFFERED // 2**20} MiB",
                "request_too_large",
            )
            refusal.headers["connection"] = "close"  # the rest of the body is never read, not even to drop it
            return refusal
        try:
            return await self._send(request, api, path, grant, body)
        finally:  # sent (or not): the body is no longer the proxy's to hold
            self._hold(grant, -len(body))

    def _hold(self, grant: _Grant, size: int) -> bool:
        """Count ``size`` more bytes held for the run (negative: released); False when that would pass
        ``MAX_RUN_BUFFERED``."""
        with self._lock:
            if size > 0 and grant.buffered + size > MAX_RUN_BUFFERED:
                return False
            grant.buffered += size
            return True

    async def _read_body(self, request: Request, grant: _Grant) -> bytes | None:
        """The request's body, read as it arrives; None once it passes ``MAX_BODY`` or the run's bodies under
        way pass ``MAX_RUN_BUFFERED`` (the rest is never read)."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            return None
        body = bytearray()
        try:
            async for chunk in request.stream():
                if len(body) + len(chunk) > MAX_BODY or not self._hold(grant, len(chunk)):
                    self._hold(grant, -len(body))
                    return None
                body += chunk
        except BaseException:
            self._hold(grant, -len(body))
            raise
        return bytes(body)

    async def _send(self, request: Request, api: Api, path: str, grant: _Grant, body: bytes) -> Response:
        upstream = self.upstreams[api]
        requested_model = _requested_model(body, request.headers.get("content-encoding"))
        if grant.first_request is None and path in ("/v1/messages", "/v1/responses"):
            # what the CLI told the model before any command of the agent's could run (its skills, for the arm
            # check): a record nothing inside the sandbox can rewrite afterwards, unlike the CLI's session
            # files
            grant.first_request = body[:MAX_FIRST_REQUEST].decode("utf-8", "replace")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_UP}
        headers.update(upstream.headers())
        headers["accept-encoding"] = "identity"  # the proxy reads the answer as it passes
        url = upstream.base_url + path + (f"?{request.url.query}" if request.url.query else "")
        at, started = datetime.now(UTC), time.monotonic()
        assert self._client is not None
        try:
            upstream_request = self._client.build_request(request.method, url, headers=headers, content=body)
            resp = await self._client.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            error = self._provider_error(
                api, "connection", None, f"upstream unreachable: {message}", requested_model
            )
            self._done(grant, self._call(api, path, started, at, None, None, requested_model, error))
            return _error(
                api, 502, f"skillassay model proxy: the provider did not answer ({type(exc).__name__})"
            )

        out_headers = {k: v for k, v in resp.headers.items() if k.lower() not in _NOT_DOWN}
        if resp.status_code >= 400:
            # an error answer is small: read it whole, classify it, pass it on as it was
            try:
                raw = await resp.aread()
            except httpx.HTTPError:
                raw = b""
            finally:
                await resp.aclose()
            try:
                text = error_text(json.loads(raw))
            except ValueError:
                text = raw.decode("utf-8", errors="replace")[:500]
            kind = classify_answer(resp.status_code, raw) or "bad_request"
            error = self._provider_error(api, kind, resp.status_code, text, requested_model)
            self._done(
                grant, self._call(api, path, started, at, None, resp.status_code, requested_model, error)
            )
            return Response(raw, status_code=resp.status_code, headers=out_headers)

        streaming = "text/event-stream" in resp.headers.get("content-type", "")
        meter = Meter(api, streaming)  # every route: a side route's answer carries no usage, costs nothing
        state: dict[str, ProviderError | bool | None] = {"error": None, "closed": False}

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_bytes():
                    meter.feed(chunk)
                    yield chunk
            except httpx.HTTPError as exc:
                state["error"] = self._provider_error(
                    api,
                    "connection",
                    None,
                    f"the answer stream broke: {type(exc).__name__}",
                    meter.model or requested_model,
                )
                return
            meter.finish()
            if meter.error_kind:
                state["error"] = self._provider_error(
                    api, meter.error_kind, None, meter.error_message, meter.model or requested_model
                )
            elif streaming and not meter.completed:
                state["error"] = self._provider_error(
                    api, "connection", None, "the answer stream ended early", meter.model or requested_model
                )

        async def close() -> None:
            # reached however the answer ends, also when the agent hangs up mid-answer (it was killed): what
            # the provider billed still counts
            if state["closed"]:
                return
            state["closed"] = True
            await resp.aclose()
            error = state["error"] if isinstance(state["error"], ProviderError) else None
            self._done(
                grant, self._call(api, path, started, at, meter, resp.status_code, requested_model, error)
            )

        return _Relay(relay(), close, status_code=resp.status_code, headers=out_headers)


class _Relay(StreamingResponse):
    """A streamed answer that always runs ``on_close``, even when the client goes away before the first
    byte.
    """

    def __init__(self, content, on_close, **kwargs):
        super().__init__(content, **kwargs)
        self._on_close = on_close

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self._on_close()


def _requested_model(body: bytes, encoding: str | None) -> str | None:
    """The model the request names (bodies the proxy cannot read, e.g. compressed, name none)."""
    if encoding or not body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return str(model) if model else None
