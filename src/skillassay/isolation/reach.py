"""Whether the registries a sealed phase may reach can be reached from this machine, probed by the harness.

The probe takes the path a sealed install takes: a ``CONNECT`` through an allow-listing egress proxy of its
own (so through the harness's own proxy when it has one), to each declared registry's host and port. Only the
harness probes, and only the eval's declared registries: nothing an agent or an app does decides the answer.
Answers are kept for a few minutes (one job's installs ask once).

What it decides (apps/deps.py): an install failing while a declared registry cannot be reached is
the machine's (``RegistryUnreachable``, a harness error naming the host); one that fails while every declared
registry answers is the app's (its change names a package, or a host, that nobody can fetch).
"""

from __future__ import annotations

import socket
import threading
import time

from skillassay.errors import InfrastructureError
from skillassay.isolation.egress import EgressProxy, _upstream_proxy

PROBE_TIMEOUT = 5.0  # seconds to connect, per registry
KEPT_FOR = 300.0  # seconds an answer is kept


class RegistryUnreachable(InfrastructureError):
    """A registry the eval declares cannot be reached from this machine: nothing needing it is measured."""

    def __init__(self, down: dict[str, str], doing: str = ""):
        self.down = dict(down)
        hosts = "; ".join(f"{host} ({why})" for host, why in down.items())
        super().__init__(
            f"{doing + ': ' if doing else ''}cannot reach the registry {hosts} from this "
            "machine: the eval cannot be measured here"
        )


_answers: dict[tuple[str, tuple[str, int] | None], tuple[float, str | None]] = {}
_lock = threading.Lock()


def target(entry: str) -> tuple[str, int] | None:
    """(host, port) a registry entry names; None for a pattern (``*.npmjs.org``), which names no one host."""
    name, sep, port = entry.rpartition(":")
    host, number = (name, int(port)) if sep and port.isdigit() else (entry, 443)
    return None if any(c in host for c in "*?[") or not host else (host.strip("[]"), number)


def unreachable(registries: list[str], *, fresh: bool = False) -> dict[str, str]:
    """The declared registries that cannot be reached now, each with why (empty: all answer). ``fresh``: probe
    again rather than use a kept answer (after an install failed)."""
    down: dict[str, str] = {}
    for entry in dict.fromkeys(registries):
        where = target(entry)
        if where is None:
            continue
        key = f"{where[0]}:{where[1]}"
        route = (key, _upstream_proxy())  # the same registry behind another proxy is another question
        with _lock:
            kept = _answers.get(route)
        if fresh or kept is None or time.monotonic() - kept[0] > KEPT_FOR:
            kept = (time.monotonic(), probe(*where))
            with _lock:
                _answers[route] = kept
        if kept[1] is not None:
            down[key] = kept[1]
    return down


def probe(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why ``host:port`` cannot be reached through the egress proxy a sealed install uses (None: it can)."""
    proxy = EgressProxy([f"{host}:{port}"], connect_timeout=timeout)
    proxy_port = proxy.start()
    try:
        with socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout + 5) as sock:
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            reply = _read_reply(sock)
    except OSError as exc:
        return f"the probe failed: {exc}"
    finally:
        proxy.close()
    status, _, body = reply.partition(b"\r\n")
    if status.split(b" ")[1:2] == [b"200"]:
        return None
    why = body.partition(b"\r\n\r\n")[2].decode("utf-8", "replace").strip() or status.decode("latin-1")
    return why.removeprefix("skillassay: ")[:300]


def _read_reply(sock: socket.socket) -> bytes:
    """The proxy's answer: its head when it tunnels (200), all of it when it refuses (it then closes)."""
    reply = b""
    while len(reply) < 4096:
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
        if reply.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in reply:
            break
    return reply


def forget() -> None:
    """Drop every kept answer (tests change what is reachable)."""
    with _lock:
        _answers.clear()
