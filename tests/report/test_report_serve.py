"""`skillassay serve`: the CSP header on every page, and nothing outside the site folder, however the path is
spelled. Requests go over a raw socket: an HTTP client would normalise `..` away before sending it."""

from __future__ import annotations

import os
import socket

import pytest

from skillassay.report.serve import start


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / "runs").mkdir(parents=True)
    (root / "index.html").write_text("<h1>Evals</h1>")
    (root / "runs" / "r.html").write_text("<h1>run</h1>")
    secret = tmp_path / "outside.txt"
    secret.write_text("OUTSIDE-THE-SITE")
    # a hostile run could leave links in what a report copies: they must not lead out either
    os.symlink(secret, root / "runs" / "link.txt")
    os.symlink(tmp_path, root / "up")
    server, thread = start(root, 0)
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def raw_get(port: int, target: str) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def test_pages_carry_the_csp_header(site):
    status, headers, body = raw_get(site, "/index.html")
    assert status == 200 and b"Evals" in body
    assert (
        headers["content-security-policy"] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    )
    assert headers["x-content-type-options"] == "nosniff"


def test_a_page_inside_is_served(site):
    status, _, body = raw_get(site, "/runs/r.html")
    assert status == 200 and b"run" in body


@pytest.mark.parametrize(
    "target",
    [
        "/../../../../../../etc/passwd",
        "/runs/../../../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/%2E%2E%5C%2E%2E%5Cetc%5Cpasswd",
        "//etc/passwd",
        "/runs/link.txt",  # a link inside the site to a file outside it
        "/up/outside.txt",  # a link inside the site to a folder outside it
    ],
)
def test_nothing_outside_the_site_is_served(site, target):
    status, headers, body = raw_get(site, target)
    assert b"root:" not in body and b"OUTSIDE-THE-SITE" not in body
    assert status in (400, 403, 404), (target, status)
    assert headers.get("content-security-policy")  # error pages carry it too
