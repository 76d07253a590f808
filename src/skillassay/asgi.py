"""An ASGI app served by uvicorn in a daemon thread on a socket bound here: how the Seam emulator, the model
proxy and the scripted model server each run inside the harness's process."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (0: a free port); IPv6 when ``host`` is an IPv6 address. OSError as
    is.

    ``IPPROTO_TCP`` matters: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it
    a response written in two parts waits ~40 ms for a delayed ACK."""
    sock = socket.socket(
        socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class ThreadedServer:
    """``start()`` returns once uvicorn accepts connections on ``sock`` (or raises ``error`` with ``what``);
    ``stop()`` asks it to finish and joins the thread."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        *,
        name: str,
        what: str,
        error: type[Exception] = RuntimeError,
        join_timeout: float = 10.0,
        **config: Any,
    ):
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        self._what = what
        self._error = error
        self._join_timeout = join_timeout
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, **config))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=name, daemon=True
        )

    def start(self, timeout: float = 15.0) -> ThreadedServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise self._error(f"{self._what} did not start")
            time.sleep(0.01)
        return self

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; whether the server is still running."""
        self._thread.join(timeout)
        return self._thread.is_alive()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=self._join_timeout)
