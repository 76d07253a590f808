"""A local HTTP server that plays the model for Claude Code (Anthropic Messages) and Codex (OpenAI Responses).

It replays a ``Script`` (see ``skillassay.testing.script``). It is stateless about the conversation: the reply
is chosen by counting the assistant turns already in the request, so a retried or concurrent request gets the
same answer. Several scripts are served at once, each under its own URL prefix ``/s/<script-id>`` (or chosen
with the ``x-skillassay-script`` header; a bare ``/v1/...`` uses the only script, or the one called
``default``).

In-process use::

    with ModelServer([script]) as server:
        # http://127.0.0.1:PORT/s/<id>: `run --model-upstream`, or a ModelProxy's
        upstream = server.base_url(script.id)
        ...
        server.requests(script.id)  # every request body received, in order

Standalone: ``python -m skillassay.testing.model_server script.yaml [--port N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from skillassay.asgi import ThreadedServer, bind
from skillassay.testing.script import (
    ExecAction,
    FunctionCallAction,
    PatchAction,
    Script,
    ScriptUsage,
    TextAction,
    ToolUseAction,
    Turn,
    load_scripts,
)

SCRIPT_HEADER = "x-skillassay-script"


class RecordedRequest(BaseModel):
    """One request the server received, as the CLI sent it."""

    script_id: str | None
    method: str
    path: str
    api: str | None = None  # "anthropic" | "openai" | None (anything else)
    body: Any = None  # the parsed JSON body (or the raw text when it was not JSON)
    turn: int | None = None  # which script turn it was answered with; None for side calls and other requests
    side_call: bool = False
    status: int = 200
    headers: dict[str, str] = Field(default_factory=dict)  # as received (lower-case names)
    received_at: float = Field(default_factory=time.time)

    def text(self) -> str:
        """The whole body as text, for asserting that something (a skill, a system prompt) was sent."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)


class ModelServer:
    """The scripted model, on 127.0.0.1 and a free port, in a background thread."""

    def __init__(self, scripts: Iterable[Script] = (), host: str = "127.0.0.1", port: int = 0):
        self._scripts: dict[str, Script] = {}
        self._variables: dict[str, dict[str, str]] = {}
        self._log: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self.host = host
        self._requested_port = port
        self.port: int | None = None
        self._server: ThreadedServer | None = None
        for script in scripts:
            self.add_script(script)

    # -- scripts ---------------------------------------------------------------------------------------------
    def add_script(self, script: Script, variables: dict[str, str] | None = None) -> str:
        """Serve ``script`` under ``/s/<script.id>``. ``variables`` fill ``{name}`` placeholders in its
        strings.
        """
        if not re.fullmatch(r"[A-Za-z0-9._-]+", script.id):
            raise ValueError(f"script id {script.id!r}: use letters, digits, '.', '_' and '-' only")
        with self._lock:
            self._scripts[script.id] = script
            self._variables[script.id] = dict(variables or {})
        return script.id

    def base_url(self, script_id: str | None = None) -> str:
        """The base URL a CLI is given: Claude appends ``/v1/messages``; Codex's provider takes it plus
        ``/v1``.
        """
        if self.port is None:
            raise RuntimeError("the model server is not running")
        root = f"http://{self.host}:{self.port}"
        return f"{root}/s/{script_id}" if script_id else root

    def requests(self, script_id: str | None = None, api: str | None = None) -> list[RecordedRequest]:
        with self._lock:
            return [
                r
                for r in self._log
                if (script_id is None or r.script_id == script_id) and (api is None or r.api == api)
            ]

    def conversation_requests(self, script_id: str | None = None) -> list[RecordedRequest]:
        """The requests that were part of the conversation (model turns), without side calls."""
        return [r for r in self.requests(script_id) if r.api and not r.side_call]

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> Self:
        self._server = ThreadedServer(
            self._app(),
            bind(self.host, self._requested_port),
            name="skillassay-model-server",
            what="the model server",
            join_timeout=5,
            lifespan="off",
            timeout_graceful_shutdown=1,
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

    # -- HTTP ------------------------------------------------------------------------------------------------
    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(
                    "/{path:path}", self._handle, methods=["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]
                ),
            ]
        )

    async def _handle(self, request: Request) -> Response:
        path = "/" + request.path_params.get("path", "")
        script_id = request.headers.get(SCRIPT_HEADER)
        match = re.match(r"^/s/([^/]+)(/.*)?$", path)
        if match:
            script_id, path = match.group(1), match.group(2) or "/"
        raw = await request.body()
        body = _decode_body(raw, request.headers.get("content-encoding"))
        record = RecordedRequest(
            script_id=script_id,
            method=request.method,
            path=path,
            body=body,
            headers={k.lower(): v for k, v in request.headers.items()},
        )

        api = None
        if request.method == "POST" and path.rstrip("/").endswith("/messages"):
            api = "anthropic"
        elif request.method == "POST" and path.rstrip("/").endswith("/responses"):
            api = "openai"
        record.api = api
        if api is None or not isinstance(body, dict):
            # warm-ups and anything else: harmless answers, logged for tests to look at
            reply: Response = Response(status_code=200 if request.method in ("GET", "HEAD") else 404)
            if path.rstrip("/").endswith("/models"):
                reply = JSONResponse({"object": "list", "data": []})
            elif path.rstrip("/").endswith("/messages/count_tokens"):
                reply = JSONResponse({"input_tokens": 100})
            record.status = reply.status_code
            self._record(record)
            return reply

        script = self._script(script_id, body)
        if script is None:
            record.status = 404
            self._record(record)
            return _error_response(api, 404, f"no script {script_id!r} on this server")
        record.script_id = script.id
        if script.models is not None and str(body.get("model")) not in script.models:
            record.status = 404
            self._record(record)
            return _no_such_model(api, str(body.get("model")))

        if _is_side_call(api, body):
            record.side_call = True
            self._record(record)
            turn = Turn(actions=[TextAction(text=script.side_text)])
            return self._reply(api, body, script, turn, turn_index=-1)

        index = _count_assistant_turns(api, body)
        record.turn = index
        turn = (
            script.turns[index]
            if index < len(script.turns)
            else Turn(actions=[TextAction(text=script.final_text)])
        )
        failing = turn.error is not None
        with self._lock:
            if failing and turn.fail_times is not None:
                earlier = sum(1 for r in self._log if r.script_id == script.id and r.turn == index)
                failing = earlier < turn.fail_times
            record.status = turn.error if failing and turn.error is not None else 200
            self._log.append(record)
        if turn.hang:
            await asyncio.sleep(turn.hang)
        if failing and turn.error is not None:
            return _error_response(api, turn.error, f"scripted error at turn {index}")
        if turn.stream_error is not None and body.get("stream") is not False:
            return _sse(
                _stream_error_events(api, turn.stream_error, str(body.get("model") or "scripted-model"))
            )
        variables = dict(self._variables.get(script.id, {}))
        cwd = _find_cwd(api, body)
        if cwd:
            variables.setdefault("workspace", cwd)
        elif "{workspace}" in turn.model_dump_json() and "workspace" not in variables:
            # never guess: an empty workspace would turn "{workspace}/x" into "/x", outside every sandbox
            return _error_response(
                api, 500, "the script uses {workspace} but the request names no working directory"
            )
        turn = _fill(turn, variables)
        return self._reply(api, body, script, turn, turn_index=index)

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._log.append(record)

    def _script(self, script_id: str | None, body: Any = None) -> Script | None:
        with self._lock:
            if script_id is not None:
                return self._scripts.get(script_id)
            text = _user_text(body)
            matched = [s for s in self._scripts.values() if s.match and s.match in text]
            if len(matched) == 1:
                return matched[0]
            if len(self._scripts) == 1:
                return next(iter(self._scripts.values()))
            return self._scripts.get("default")

    def _reply(self, api: str, body: dict, script: Script, turn: Turn, turn_index: int) -> Response:
        usage = turn.usage or script.usage
        model = str(body.get("model") or "scripted-model")
        seed = f"{script.id}:{turn_index}"
        if api == "anthropic":
            message = _anthropic_message(turn, usage, model, seed)
            if not body.get("stream"):
                return JSONResponse(message)
            return _sse(_anthropic_events(message))
        response = _openai_response(turn, usage, model, seed)
        if body.get("stream") is False:
            return JSONResponse(response)
        return _sse(_openai_events(response))


# -- request inspection --------------------------------------------------------------------------------------


def _decode_body(raw: bytes, encoding: str | None) -> Any:
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    elif encoding == "zstd":
        try:
            import zstandard  # optional: only if a CLI compresses its requests

            raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        except ImportError:
            return "<zstd-compressed body>"
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _is_side_call(api: str, body: dict) -> bool:
    """A request outside the conversation (e.g. Claude titling the session): it offers the model no tools."""
    return not body.get("tools")


_ASSISTANT_ITEM_TYPES = {
    "function_call",
    "custom_tool_call",
    "reasoning",
    "local_shell_call",
    "web_search_call",
}


def _count_assistant_turns(api: str, body: dict) -> int:
    """How many model turns the conversation already holds: runs of assistant content between other
    content.
    """
    if api == "anthropic":
        flags = [m.get("role") == "assistant" for m in body.get("messages") or [] if isinstance(m, dict)]
    else:
        items = body.get("input") or []
        if isinstance(items, str):
            items = []
        flags = [
            isinstance(i, dict) and (i.get("role") == "assistant" or i.get("type") in _ASSISTANT_ITEM_TYPES)
            for i in items
        ]
    turns, previous = 0, False
    for flag in flags:
        if flag and not previous:
            turns += 1
        previous = flag
    return turns


_CWD_PATTERNS = [
    re.compile(r"<cwd>([^<\n]+)</cwd>"),
    re.compile(r"(?:Primary working directory|Working directory):\s*(\S+)"),
]


def _user_text(body: Any) -> str:
    """The text of the request's user messages (where the task is), for choosing a script by ``match``."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    for msg in body.get("messages") or body.get("input") or []:
        if isinstance(msg, dict) and msg.get("role") == "user":
            parts.extend(_strings(msg.get("content")))
    return "\n".join(parts)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _find_cwd(api: str, body: dict) -> str | None:
    """The agent's working directory, as the CLI told the model (Claude: system prompt; Codex: <cwd>)."""
    # Claude Code puts its environment section in the system prompt or, in newer versions, in a system message
    sources = [body.get("system"), body.get("messages")] if api == "anthropic" else [body.get("input")]
    for text in (t for src in sources for t in _strings(src)):
        for pattern in _CWD_PATTERNS:
            found = pattern.search(text)
            if found:
                return found.group(1).strip()
    return None


def _fill(turn: Turn, variables: dict[str, str]) -> Turn:
    """Replace ``{name}`` in every string of the turn's actions (unknown names are left alone)."""

    def sub(value: Any) -> Any:
        if isinstance(value, str):
            for key, replacement in variables.items():
                value = value.replace("{" + key + "}", replacement)
            return value
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [sub(v) for v in value]
        return value

    return Turn.model_validate(sub(turn.model_dump()))


def _ident(prefix: str, seed: str, n: int) -> str:
    return f"{prefix}{hashlib.sha256(f'{seed}:{n}'.encode()).hexdigest()[:24]}"


# -- Anthropic Messages --------------------------------------------------------------------------------------


def _anthropic_message(turn: Turn, usage: ScriptUsage, model: str, seed: str) -> dict:
    content: list[dict] = []
    for n, action in enumerate(turn.actions):
        if isinstance(action, TextAction):
            content.append({"type": "text", "text": action.text})
        elif isinstance(action, ToolUseAction):
            content.append(
                {
                    "type": "tool_use",
                    "id": action.id or _ident("toolu_", seed, n),
                    "name": action.name,
                    "input": action.input,
                }
            )
        # OpenAI-only actions are skipped: a script may hold both kinds to drive either CLI
    if not content:
        content.append({"type": "text", "text": "OK"})
    stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
    return {
        "id": _ident("msg_", seed, 0),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        },
    }


def _anthropic_events(message: dict) -> Iterable[tuple[str, dict]]:
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                },
            )
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                },
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


# -- OpenAI Responses ----------------------------------------------------------------------------------------


def _openai_response(turn: Turn, usage: ScriptUsage, model: str, seed: str) -> dict:
    output: list[dict] = []
    for n, action in enumerate(turn.actions):
        call_id = _ident("call_", seed, n)
        if isinstance(action, TextAction):
            output.append(
                {
                    "type": "message",
                    "id": _ident("msg_", seed, n),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": action.text, "annotations": []}],
                }
            )
        elif isinstance(action, ExecAction):
            exec_arguments = {"cmd": action.cmd} | ({"workdir": action.workdir} if action.workdir else {})
            output.append(
                {
                    "type": "function_call",
                    "id": _ident("fc_", seed, n),
                    "call_id": call_id,
                    "name": "exec_command",
                    "arguments": json.dumps(exec_arguments),
                    "status": "completed",
                }
            )
        elif isinstance(action, FunctionCallAction):
            arguments = (
                action.arguments if isinstance(action.arguments, str) else json.dumps(action.arguments)
            )
            output.append(
                {
                    "type": "function_call",
                    "id": _ident("fc_", seed, n),
                    "call_id": call_id,
                    "name": action.name,
                    "arguments": arguments,
                    "status": "completed",
                }
            )
        elif isinstance(action, PatchAction):
            output.append(
                {
                    "type": "custom_tool_call",
                    "id": _ident("ctc_", seed, n),
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": action.text,
                    "status": "completed",
                }
            )
    if not output:
        output.append(
            {
                "type": "message",
                "id": _ident("msg_", seed, 0),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "OK", "annotations": []}],
            }
        )
    return {
        "id": _ident("resp_", seed, 0),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    }


def _openai_events(response: dict) -> Iterable[tuple[str, dict]]:
    seq = iter(range(1_000_000))
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield "response.created", {"type": "response.created", "sequence_number": next(seq), "response": pending}
    yield (
        "response.in_progress",
        {"type": "response.in_progress", "sequence_number": next(seq), "response": pending},
    )
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
        elif item["type"] == "function_call":
            added = {**item, "status": "in_progress", "arguments": ""}
        else:
            added = {**item, "status": "in_progress", "input": ""}
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": index,
                "item": added,
            },
        )
        if item["type"] == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            yield (
                "response.content_part.added",
                {
                    "type": "response.content_part.added",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": part,
                },
            )
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                },
            )
            yield (
                "response.output_text.done",
                {
                    "type": "response.output_text.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "text": text,
                },
            )
            yield (
                "response.content_part.done",
                {
                    "type": "response.content_part.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": {**part, "text": text},
                },
            )
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": index,
                "item": item,
            },
        )
    yield (
        "response.completed",
        {"type": "response.completed", "sequence_number": next(seq), "response": response},
    )


# -- shared --------------------------------------------------------------------------------------------------


def _sse(events: Iterable[tuple[str, dict]]) -> StreamingResponse:
    async def stream() -> AsyncIterator[bytes]:
        for name, data in events:
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"cache-control": "no-cache"})


_ERROR_TYPES = {
    # status -> (Anthropic error type, OpenAI error code), as the providers name them
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    529: ("overloaded_error", "server_is_overloaded"),
}


def _error_response(api: str, status: int, message: str) -> JSONResponse:
    anthropic_type, openai_code = _ERROR_TYPES.get(status, ("api_error", "server_error"))
    if api == "anthropic":
        body = {"type": "error", "error": {"type": anthropic_type, "message": message}}
    else:
        body = {"error": {"type": openai_code, "code": openai_code, "message": message}}
    return JSONResponse(body, status_code=status)


def _no_such_model(api: str, model: str) -> JSONResponse:
    """The providers' answer to a model name they do not know: it repeats the name."""
    if api == "anthropic":
        body = {"type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"}}
    else:
        body = {
            "error": {
                "message": f"The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        }
    return JSONResponse(body, status_code=404)


def _stream_error_events(api: str, error_type: str, model: str) -> Iterable[tuple[str, dict]]:
    """A stream that starts (HTTP 200) and then fails: how providers report overload or errors mid-answer."""
    message = f"scripted {error_type} during the answer"
    if api == "anthropic":
        start: dict[str, Any] = {
            "id": "msg_stream_error",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        yield "message_start", {"type": "message_start", "message": start}
        yield "error", {"type": "error", "error": {"type": error_type, "message": message}}
    else:
        pending: dict[str, Any] = {
            "id": "resp_stream_error",
            "object": "response",
            "status": "in_progress",
            "model": model,
            "output": [],
            "usage": None,
        }
        yield "response.created", {"type": "response.created", "sequence_number": 0, "response": pending}
        failed = {**pending, "status": "failed", "error": {"code": error_type, "message": message}}
        yield "response.failed", {"type": "response.failed", "sequence_number": 1, "response": failed}


def serve_scripts(paths: list[Path], port: int = 0, log: Path | None = None) -> None:
    """Serve the scripts until interrupted, printing each script's base URL; optionally log every request."""
    scripts = [s for path in paths for s in load_scripts(path)]
    server = ModelServer(scripts, port=port).start()
    for script in scripts:
        print(f"{script.id}: {server.base_url(script.id)}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        if log:
            with log.open("w", encoding="utf-8") as fh:
                for record in server.requests():
                    # the log is a file: keep credentials' presence, never their values
                    record.headers = {
                        k: ("[present]" if k in ("authorization", "x-api-key") else v)
                        for k, v in record.headers.items()
                    }
                    fh.write(record.model_dump_json() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m skillassay.testing.model_server",
        description="Serve scripted model replies (Anthropic Messages and OpenAI Responses) on 127.0.0.1.",
    )
    parser.add_argument("scripts", nargs="+", type=Path, help="YAML or JSON script files")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, help="write every request received to this JSONL file on exit")
    args = parser.parse_args(argv)
    serve_scripts(args.scripts, args.port, args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
