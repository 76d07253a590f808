"""Reading usage and errors out of the provider's answers as they pass through, without changing a byte.

Anthropic Messages streams report input and cache tokens in ``message_start`` and the final output count in
``message_delta``; an error can arrive inside a 200 stream as ``event: error``. OpenAI Responses streams
report everything in the final ``response.completed`` (or ``response.incomplete`` / ``response.failed``); an
``error`` event can end a stream too. Non-streamed answers carry the same ``usage`` object in their JSON body.
"""

from __future__ import annotations

import json
from typing import Any

from skillassay.usage import Api, ProviderErrorKind, TokenCounts, classify


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def anthropic_tokens(usage: dict, into: TokenCounts) -> None:
    """Anthropic's usage object (message_start, message_delta or a whole message): counts present override."""
    if "input_tokens" in usage:
        into.input_tokens = _int(usage["input_tokens"])
    if "output_tokens" in usage:
        into.output_tokens = _int(usage["output_tokens"])
    if "cache_read_input_tokens" in usage:
        into.cache_read_input_tokens = _int(usage["cache_read_input_tokens"])
    if "cache_creation_input_tokens" in usage:
        into.cache_creation_input_tokens = _int(usage["cache_creation_input_tokens"])


def openai_tokens(usage: dict) -> TokenCounts:
    """OpenAI Responses usage: ``input_tokens`` include the cached ones, which are billed apart."""
    details = usage.get("input_tokens_details") or {}
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    out_details = usage.get("output_tokens_details") or {}
    return TokenCounts(
        input_tokens=max(0, _int(usage.get("input_tokens")) - cached),
        output_tokens=_int(usage.get("output_tokens")),
        cache_read_input_tokens=cached,
        reasoning_tokens=_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0,
    )


def error_text(body: Any) -> str:
    """The type/code and message of a provider error body, as one short line."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            parts = [str(err.get(k)) for k in ("type", "code", "message") if err.get(k)]
            return ": ".join(parts)[:500]
        return str(err)[:500]
    return str(body or "")[:500]


class Meter:
    """Fed the answer's bytes as they pass; afterwards holds the model, the tokens and any error in the
    answer.
    """

    def __init__(self, api: Api, streaming: bool):
        self.api = api
        self.streaming = streaming
        self.model: str | None = None
        self.tokens = TokenCounts()
        self.error_kind: ProviderErrorKind | None = None
        self.error_message = ""
        self.completed = False  # the answer's end was seen (message_stop / response.completed / a JSON body)
        self._buffer = b""
        self._body = bytearray()

    # -- feeding ---------------------------------------------------------------------------------------------
    def feed(self, chunk: bytes) -> None:
        if not self.streaming:
            if len(self._body) < 64 * 1024 * 1024:
                self._body += chunk
            return
        self._buffer += chunk
        while True:
            # SSE events end with a blank line; providers use \n, the spec allows \r\n too
            cut = min(
                (i for i in (self._buffer.find(b"\n\n"), self._buffer.find(b"\r\n\r\n")) if i >= 0),
                default=-1,
            )
            if cut < 0:
                return
            sep = 4 if self._buffer[cut : cut + 4] == b"\r\n\r\n" else 2
            raw, self._buffer = self._buffer[:cut], self._buffer[cut + sep :]
            self._event(raw)

    def finish(self) -> None:
        if self.streaming:
            if self._buffer.strip():
                self._event(self._buffer)
            self._buffer = b""
            return
        try:
            body = json.loads(bytes(self._body))
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        self.completed = True
        self.model = body.get("model") or self.model
        usage = body.get("usage")
        if isinstance(usage, dict):
            if self.api == "anthropic":
                anthropic_tokens(usage, self.tokens)
            else:
                self.tokens = openai_tokens(usage)

    # -- events ----------------------------------------------------------------------------------------------
    def _event(self, raw: bytes) -> None:
        name, data_lines = None, []
        for line in raw.decode("utf-8", errors="replace").splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].lstrip(" "))
        if not data_lines:
            return
        try:
            data = json.loads("\n".join(data_lines))
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        kind = name or data.get("type")
        if self.api == "anthropic":
            self._anthropic(kind, data)
        else:
            self._openai(kind, data)

    def _anthropic(self, kind: str | None, data: dict) -> None:
        if kind == "message_start":
            message = data.get("message") or {}
            self.model = message.get("model") or self.model
            if isinstance(message.get("usage"), dict):
                anthropic_tokens(message["usage"], self.tokens)
        elif kind == "message_delta":
            if isinstance(data.get("usage"), dict):
                anthropic_tokens(data["usage"], self.tokens)
        elif kind == "message_stop":
            self.completed = True
        elif kind == "error":
            self._error(error_text(data))

    def _openai(self, kind: str | None, data: dict) -> None:
        raw = data.get("response")
        response: dict = raw if isinstance(raw, dict) else {}
        if response.get("model"):
            self.model = response["model"]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self.completed = True
            if isinstance(response.get("usage"), dict):
                self.tokens = openai_tokens(response["usage"])
            if kind == "response.failed":
                self._error(error_text(response.get("error") or {"message": "response.failed"}))
        elif kind == "error":
            self._error(error_text(data))

    def _error(self, text: str) -> None:
        self.error_kind = classify(200, text) or "server_error"
        self.error_message = text
