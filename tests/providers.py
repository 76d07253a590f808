"""A model provider stub for what the scripted model server does not play: the operator's shared rate limit
reached on a side route, and the billed compaction route."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class StubProvider:
    """What the scripted server does not play: it answers the token count with 429 (the operator's shared
    limit reached) and the compaction route with a billed answer; it counts what reached it."""

    def __init__(self):
        self.paths: list[str] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                provider.paths.append(self.path)
                if self.path == "/v1/messages/count_tokens":
                    error = {"type": "rate_limit_error", "message": "slow down"}
                    self._send(429, {"type": "error", "error": error})
                elif self.path == "/v1/responses/compact":
                    self._send(
                        200,
                        {
                            "id": "cmp_1",
                            "object": "response.compaction",
                            "model": "gpt-5.5",
                            "output": [],
                            "usage": {"input_tokens": 1000, "output_tokens": 200},
                        },
                    )
                else:
                    self._send(
                        200,
                        {
                            "id": "msg_1",
                            "type": "message",
                            "model": "claude-opus-5-5",
                            "content": [],
                            "usage": {"input_tokens": 10, "output_tokens": 1},
                        },
                    )

            do_GET = do_POST

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
