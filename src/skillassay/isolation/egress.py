"""The allow-listing HTTP(S) proxy a sealed phase reaches the package registries through.

A sealed process has no route out; its ``HTTPS_PROXY``/``HTTP_PROXY`` point at this proxy (bridged into the
sandbox like any endpoint). It tunnels ``CONNECT host:port`` and forwards absolute-form ``http://`` requests
only for hosts on the phase's allow-list (a stack's registries by default: PyPI for Python, npm for
TypeScript), to ports 443 and 80 unless the entry names a port. TLS stays end to end: the proxy sees host
names, never content. Everything else is answered ``403`` and recorded: a refused connection is evidence of
what the agent or the app reached for.

Loopback and link-local addresses (cloud metadata) are refused whatever the name resolves to. When the harness
itself sits behind a proxy (``HTTPS_PROXY`` in its environment), allowed tunnels go through it.
"""

from __future__ import annotations

import contextlib
import fnmatch
import ipaddress
import os
import socket
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

from pydantic import BaseModel

from skillassay.isolation.bridge import Listener, splice

DEFAULT_PORTS = (443, 80)
MAX_HEAD = 64 * 1024


class Refusal(BaseModel):
    """One refused request: what was asked for and why it was refused."""

    host: str
    port: int | None = None
    method: str
    reason: str
    count: int = 1
    first_at: float  # seconds since the proxy started


def host_allowed(host: str, port: int, allow: list[str]) -> bool:
    """``host`` matches an entry (a name or a glob like ``*.npmjs.org``, optionally ``:port``)."""
    host = host.lower().rstrip(".")
    for entry in allow:
        name, sep, entry_port = entry.lower().rpartition(":")
        if sep and entry_port.isdigit():
            ports: tuple[int, ...] = (int(entry_port),)
        else:
            name, ports = entry.lower(), DEFAULT_PORTS
        if port in ports and fnmatch.fnmatchcase(host, name):
            return True
    return False


def _forbidden_address(ip: str) -> bool:
    addr = ipaddress.ip_address(ip)
    return addr.is_loopback or addr.is_link_local or addr.is_unspecified or addr.is_multicast


def _upstream_proxy() -> tuple[str, int] | None:
    """The harness's own proxy, if it has one."""
    url = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    return (parts.hostname or "", parts.port or 80) if parts.hostname else None


def _no_proxy(host: str) -> bool:
    names = (os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or "").split(",")
    host = host.lower()
    return any(
        n and (host == n.strip().lower().lstrip(".") or host.endswith("." + n.strip().lower().lstrip(".")))
        for n in names
    )


class EgressProxy:
    """One proxy per sealed phase (so what it refused belongs to one run). ``start()`` returns the port on the
    host's loopback; ``close()`` stops it."""

    # distinct refusals kept; more are counted in the last one (a scan must not fill memory)
    MAX_REFUSALS = 200

    def __init__(self, allow: list[str], *, connect_timeout: float = 30.0):
        self.allow = list(allow)
        self.connect_timeout = connect_timeout
        self.allowed: Counter[str] = Counter()  # "host:port" -> tunnels opened
        self._refused: dict[tuple[str, int | None, str], Refusal] = {}
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._started = time.monotonic()
        self.port: int | None = None

    @property
    def refused(self) -> list[Refusal]:
        with self._lock:
            return list(self._refused.values())

    def start(self) -> int:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        self._started = time.monotonic()
        self._listener = Listener(sock, self._handle, name="egress")
        return self.port

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    # ------------------------------------------------------------------ requests
    def _refuse(self, conn: socket.socket, host: str, port: int | None, method: str, reason: str) -> None:
        key = (host[:200], port, reason)
        with self._lock:
            if key not in self._refused and len(self._refused) >= self.MAX_REFUSALS:
                key = ("(others)", None, "more refused requests than are listed")
            if key in self._refused:
                self._refused[key].count += 1
            else:
                self._refused[key] = Refusal(
                    host=key[0],
                    port=key[1],
                    method=method[:20],
                    reason=key[2],
                    first_at=round(time.monotonic() - self._started, 3),
                )
        body = f"skillassay: {host}{f':{port}' if port else ''} refused ({reason})\n".encode()
        with contextlib.suppress(OSError):
            conn.sendall(
                b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(8192)
            if not chunk:
                return
            head += chunk
            if len(head) > MAX_HEAD:
                self._refuse(conn, "?", None, "?", "request head too large")
                return
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            self._refuse(conn, "?", None, "?", "not an HTTP request")
            return
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            host = host.strip("[]")
            if not host or not port_text.isdigit():
                self._refuse(conn, target, None, method, "bad CONNECT target")
                return
            self._tunnel(conn, host, int(port_text), method, rest)
            return
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            self._refuse(
                conn, target[:200], None, method, "only CONNECT and absolute http:// requests are proxied"
            )
            return
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        # the Host the request names is the host allowed, whatever header came with it: a CDN in front of a
        # registry routes by Host, so another Host would reach any site the CDN serves (domain fronting)
        netloc = parts.netloc.rpartition("@")[2]
        headers = [h for h in lines[1:] if h and not h.lower().startswith(("proxy-", "connection:", "host:"))]
        request = "\r\n".join(
            [f"{method} {path} {version}", f"Host: {netloc}", *headers, "Connection: close", "", ""]
        ).encode()
        self._tunnel(conn, parts.hostname, parts.port or 80, method, request + rest, plain=True)

    def _tunnel(
        self, conn: socket.socket, host: str, port: int, method: str, first: bytes, plain: bool = False
    ) -> None:
        if not host_allowed(host, port, self.allow):
            self._refuse(conn, host, port, method, "not on the allow-list")
            return
        try:
            upstream = self._connect(host, port)
        except PermissionError as exc:
            self._refuse(conn, host, port, method, str(exc))
            return
        except OSError as exc:
            with contextlib.suppress(OSError):
                conn.sendall(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}\n".encode())
            return
        with self._lock:
            self.allowed[f"{host}:{port}"] += 1
        conn.settimeout(None)
        if not plain:
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        if first:
            upstream.sendall(first)
        splice(conn, upstream)

    def _connect(self, host: str, port: int) -> socket.socket:
        parent = _upstream_proxy()
        if parent and not _no_proxy(host):
            sock = socket.create_connection(parent, timeout=self.connect_timeout)
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            reply = b""
            while b"\r\n\r\n" not in reply:
                chunk = sock.recv(4096)
                if not chunk:
                    raise OSError("the harness's proxy closed the connection")
                reply += chunk
            status = reply.split(b"\r\n", 1)[0].decode("latin-1")
            if " 200" not in status:
                raise OSError(f"the harness's proxy refused: {status}")
            sock.settimeout(None)
            return sock
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        last: OSError = OSError(f"{host} has no address")
        for family, kind, proto, _, address in infos:
            if _forbidden_address(str(address[0])):
                raise PermissionError(f"{host} resolves to {address[0]}, a local address")
            sock = socket.socket(family, kind, proto)
            sock.settimeout(self.connect_timeout)
            try:
                sock.connect(address)  # the address checked above, not a second lookup
            except OSError as exc:
                sock.close()
                last = exc
                continue
            sock.settimeout(None)
            return sock
        raise last
