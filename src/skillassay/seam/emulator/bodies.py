"""Request bodies held to limits: size (413), time to arrive (408), JSON nesting and numbers (400).

Every request body the emulator reads goes through ``read_body`` (on the event loop: it only waits) and
``parse_json`` (in a worker thread, with the rest of the request's CPU work). The answers are in Seam's error
shape; none is a 500.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope

from skillassay.seam.emulator.errors import SeamApiError, invalid_input


@dataclass(frozen=True)
class Limits:
    """What one request may cost. Seam publishes no limits of its own; these are the emulator's, generous for
    any integration (a push of thousands of reservations fits in 1 MiB)."""

    max_body_bytes: int = 1 << 20
    body_timeout: float = 30.0  # seconds for a whole body to arrive
    max_json_depth: int = 32  # nesting of arrays and objects
    max_number_digits: int = 100  # digits of one JSON number
    max_reported_errors: int = 20  # validation errors named in one 400 answer
    # fairness between workspaces (fairness.py): requests of one workspace in work at once, and its CPU budget
    max_concurrent_per_workspace: int = 2
    cpu_share: float = 0.1  # CPU seconds per second a workspace may use, sustained (~200 ordinary requests/s)
    cpu_burst: float = 1.0  # CPU seconds a workspace may use at once before it waits


class ClientGone(Exception):
    """The client disconnected before its body arrived: nothing to answer."""


def too_large(limits: Limits) -> SeamApiError:
    return SeamApiError(
        413, "payload_too_large", f"Request body is larger than the limit of {limits.max_body_bytes} bytes"
    )


async def read_body(scope: Scope, receive: Receive, limits: Limits) -> bytes:
    """The whole body, refused as soon as it is known to exceed the limit (from Content-Length, or while it
    streams).
    """
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            if not value.strip().isdigit():
                raise invalid_input("Invalid Content-Length header")
            if int(value) > limits.max_body_bytes:
                raise too_large(limits)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limits.max_body_bytes:
                    raise too_large(limits)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
    except TimeoutError:
        raise SeamApiError(
            408, "request_timeout", f"Request body did not arrive within {limits.body_timeout:g} s"
        ) from None
    return b"".join(chunks)


class _BadNumber(ValueError):
    pass


def parse_json(raw: bytes, limits: Limits) -> Any:
    """JSON with finite numbers of bounded size and bounded nesting, or a 400 ``invalid_input``."""

    def number(text: str) -> float | int:
        if len(text) > limits.max_number_digits:
            raise _BadNumber(f"Number too long in request body: {text[:20]}... ({len(text)} characters)")
        value = float(text)
        if not math.isfinite(value):
            raise _BadNumber(f"Number out of range in request body: {text}")
        return value

    def integer(text: str) -> int:
        if len(text) > limits.max_number_digits:
            raise _BadNumber(f"Number too long in request body: {text[:20]}... ({len(text)} characters)")
        return int(text)

    def constant(name: str) -> Any:
        raise _BadNumber(f"{name} is not a JSON number")

    try:
        data = json.loads(raw, parse_float=number, parse_int=integer, parse_constant=constant)
    except RecursionError:
        raise invalid_input(
            f"Request body is nested too deep (more than {limits.max_json_depth} levels)"
        ) from None
    except _BadNumber as exc:
        raise invalid_input(str(exc)) from None
    except (ValueError, UnicodeDecodeError):
        raise invalid_input("Request body is not valid JSON") from None
    # a container n levels deep takes n opening brackets: a body with no more than the limit needs no walk
    brackets = raw.count(b"[") + raw.count(b"{")
    if brackets > limits.max_json_depth and _depth_exceeds(data, limits.max_json_depth):
        raise invalid_input(f"Request body is nested too deep (more than {limits.max_json_depth} levels)")
    return data


def _depth_exceeds(data: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
