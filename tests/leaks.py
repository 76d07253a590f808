"""Looking for a secret everywhere a results folder (or a report) could keep it, in every form an attacker
would write it: contents, file and folder names, link targets, and git objects decompressed (a byte scan of
.git misses them). Written independently of ``skillassay.secrets`` so the tests do not check the scrubber
with itself."""

from __future__ import annotations

import base64
import contextlib
import os
import sqlite3
import subprocess
import urllib.parse
import zlib
from pathlib import Path


def encodings(secret: str) -> dict[bytes, str]:
    """Needle -> form, for the forms the tests' attackers write."""
    raw = secret.encode()
    out = {raw: "raw", raw[::-1]: "reversed", raw.hex().encode(): "hex", raw.hex().upper().encode(): "HEX"}
    # base64 of the secret inside a longer text, at each of the three alignments
    for prefix in (b"", b"k", b"k="):
        text = base64.b64encode(prefix + raw)
        skip = {0: 0, 1: 2, 2: 3}[len(prefix)]
        out[text[skip : skip + len(raw) * 4 // 3 - 3]] = f"base64+{len(prefix)}"
    quoted = urllib.parse.quote(secret, safe="").encode()
    if quoted != raw:
        out[quoted] = "url"
    return out


def _git_objects(git_dir: Path) -> bytes:
    """Every object git can read in the repository, decompressed, plus every loose object file inflated by
    hand.
    """
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch"], capture_output=True
    ).stdout
    for path in (git_dir / "objects").rglob("*"):
        if path.is_file() and len(path.parent.name) == 2:
            with contextlib.suppress(zlib.error):
                out += zlib.decompress(path.read_bytes())
    return out


def find_leaks(root: Path, secrets: list[str]) -> list[str]:
    """Where any form of any of ``secrets`` is found under ``root`` ("<place>: <form>"); empty when nothing
    is.
    """
    needles: dict[bytes, str] = {}
    for s in secrets:
        needles.update(encodings(s))
    found: list[str] = []

    def check(data: bytes, where: str) -> None:
        for needle, form in needles.items():
            if needle in data:
                found.append(f"{where}: {form}")

    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root)
            check(os.fsencode(name), f"name {rel}")
            if path.is_symlink():
                check(os.fsencode(os.readlink(path)), f"link {rel}")
            elif path.is_file():
                check(path.read_bytes(), str(rel))
                if name.endswith(".db"):
                    with sqlite3.connect(path) as con:  # what the index holds, WAL pages included
                        dump = "\n".join(con.iterdump()).encode()
                    check(dump, f"{rel} (rows)")
        if Path(dirpath).name == ".git":
            check(_git_objects(Path(dirpath)), f"git objects {Path(dirpath).relative_to(root)}")
    return found
