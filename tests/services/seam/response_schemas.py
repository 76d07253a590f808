"""The emulator's answers checked against the OpenAPI document's response schemas (test-only: the emulator
itself never validates what it sends).

``ResponseRecorder`` wraps the emulator's ASGI app and keeps every answer to a Seam route; ``violations``
checks the successful ones against the 200 schema of their route (Draft 4 after the ``nullable`` rewrite, as
for requests). Seam's error answers have no schema in the document; their shape is asserted by the tests
themselves.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft4Validator

from skillassay.seam.emulator.spec import SeamSpec, rewrite_nullable


@dataclass
class Answer:
    method: str
    path: str
    status: int
    body: bytes


class ResponseRecorder:
    """ASGI middleware: records (method, path, status, body) of every answer outside ``/_emulator``."""

    MAX_BODY = 4_000_000

    def __init__(self, app: Any):
        self.app = app
        self.answers: list[Answer] = []
        self._lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].startswith("/_emulator"):
            await self.app(scope, receive, send)
            return
        status = 0
        chunks: list[bytes] = []

        async def recording_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, recording_send)
        body = b"".join(chunks)
        if len(body) <= self.MAX_BODY:
            with self._lock:
                self.answers.append(Answer(scope["method"], "/" + scope["path"].strip("/"), status, body))

    def since(self, index: int) -> list[Answer]:
        with self._lock:
            return list(self.answers[index:])


class ResponseSchemas:
    """One compiled validator per route's 200 answer."""

    def __init__(self, spec: SeamSpec):
        self.spec = spec
        self._components = rewrite_nullable(spec.document.get("components", {}))
        self._validators: dict[str, Draft4Validator | None] = {}

    def validator(self, path: str) -> Draft4Validator | None:
        if path not in self._validators:
            ops = self.spec.document["paths"].get(path) or {}
            op = ops.get("post") or next(iter(ops.values()), {})
            schema = (
                op.get("responses", {})
                .get("200", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema")
            )
            if schema is None:
                self._validators[path] = None
            else:
                schema = rewrite_nullable(copy.deepcopy(schema))
                schema["components"] = self._components
                self._validators[path] = Draft4Validator(schema)
        return self._validators[path]

    def violations(self, answers: list[Answer]) -> list[str]:
        found: list[str] = []
        for answer in answers:
            if answer.status != 200:
                continue
            validator = self.validator(answer.path)
            if validator is None:
                continue
            body = json.loads(answer.body)
            for error in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))[:5]:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                found.append(f"{answer.method} {answer.path}: {where}: {error.message[:300]}")
        return found

    def checked_routes(self, answers: list[Answer]) -> set[str]:
        return {a.path for a in answers if a.status == 200 and self.validator(a.path) is not None}
