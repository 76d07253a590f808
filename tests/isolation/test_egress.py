"""The egress proxy's allow-list, without leaving the machine (the registries are reached in
test_bubblewrap).
"""

import socket

import pytest

from skillassay.isolation.egress import EgressProxy, host_allowed


@pytest.mark.parametrize(
    ("host", "port", "allowed"),
    [
        ("pypi.org", 443, True),
        ("PyPI.org.", 443, True),
        ("files.pythonhosted.org", 443, True),
        ("pypi.org", 22, False),
        ("evil-pypi.org", 443, False),
        ("registry.npmjs.org", 443, True),
        ("npmjs.org", 443, False),
        ("mirror.internal", 8443, True),
        ("mirror.internal", 443, False),
    ],
)
def test_host_allowed(host, port, allowed):
    allow = ["pypi.org", "files.pythonhosted.org", "*.npmjs.org", "mirror.internal:8443"]
    assert host_allowed(host, port, allow) is allowed


def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        out = b""
        while chunk := s.recv(4096):
            out += chunk
        return out


def test_refuses_and_records_what_is_not_allowed():
    proxy = EgressProxy(["localhost", "pypi.org"])
    port = proxy.start()
    try:
        # on the list, but a loopback address: never (nothing else on the machine is reachable through it)
        local = _ask(port, b"CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n")
        other = _ask(port, b"CONNECT example.invalid:443 HTTP/1.1\r\n\r\n")
        again = _ask(port, b"CONNECT example.invalid:443 HTTP/1.1\r\n\r\n")
        plain = _ask(port, b"GET http://127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        garbage = _ask(port, b"HELLO\r\n\r\n")
    finally:
        proxy.close()
    for reply in (local, other, again, plain, garbage):
        assert reply.startswith(b"HTTP/1.1 403 "), reply
    refused = {(r.host, r.reason): r.count for r in proxy.refused}
    assert refused[("localhost", "localhost resolves to 127.0.0.1, a local address")] == 1
    assert refused[("example.invalid", "not on the allow-list")] == 2
    assert refused[("127.0.0.1", "not on the allow-list")] == 1
    assert not proxy.allowed
