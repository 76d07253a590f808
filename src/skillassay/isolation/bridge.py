"""The harness's side of a sandbox's network: forwarders from a Unix socket (bind-mounted into the sandbox) to
the one host-side TCP endpoint it stands for.

A sealed process has a private network namespace; the only way out is a Unix socket file, which ignores
network namespaces. Inside, ``launcher.py`` listens on ``127.0.0.1:PORT`` and connects here; here each
connection is carried to the granted ``host:port``. Plain threads: a run has a handful of connections at a
time (model turns, a package download), and the harness is threaded already.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from pathlib import Path

BUFFER = 65536
# connections carried at once per listener: a CLI or a package install uses a few dozen; a sandboxed process
# that opens thousands would otherwise cost the harness two threads each (a denial of service on every run of
# the job)
MAX_CONNECTIONS = 256


def pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends, then end ``dst``'s writing side."""
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def splice(a: socket.socket, b: socket.socket) -> None:
    """Carry bytes both ways between two connected sockets until both directions end; close both."""
    back = threading.Thread(target=pump, args=(b, a), daemon=True)
    back.start()
    pump(a, b)
    back.join()
    a.close()
    b.close()


class Listener:
    """Accepts connections on a listening socket in a daemon thread and hands each to ``handle`` in its own
    thread. At most ``limit`` connections are carried at once; more are closed as they come. ``close()``
    stops accepting and closes the connections still open."""

    def __init__(
        self,
        sock: socket.socket,
        handle: Callable[[socket.socket], None],
        name: str = "listener",
        limit: int = MAX_CONNECTIONS,
    ):
        self.sock = sock
        self._handle = handle
        self.limit = limit
        self.turned_away = 0  # connections closed at once: ``limit`` were open
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=f"skillassay-{name}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                if len(self._open) >= self.limit:
                    self.turned_away += 1
                    conn.close()
                    continue
                self._open.add(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        try:
            self._handle(conn)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            live = list(self._open)
        # shutdown() wakes a thread blocked in accept(); close() alone does not on Linux
        for s in [self.sock, *live]:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        self._thread.join(timeout=2)


def forward_unix_to_tcp(
    path: Path, host: str, port: int, on_connect: Callable[[], None] | None = None
) -> Listener:
    """Listen on the Unix socket ``path``; carry each connection to ``host:port``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    path.chmod(0o666)  # the sandbox's user is not the harness's
    sock.listen(128)

    def handle(conn: socket.socket) -> None:
        if on_connect is not None:
            on_connect()
        try:
            peer = socket.create_connection((host, port), timeout=30)
        except OSError:
            return
        peer.settimeout(None)
        splice(conn, peer)

    return Listener(sock, handle, name=f"bridge-{port}")


def reserve_port(host: str = "127.0.0.1") -> socket.socket:
    """A listening TCP socket on a free port of the host's loopback, held (so nobody takes the port) and
    handed to the sandbox: its connections are accepted inside and carried to the same port there."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(128)
    return sock
