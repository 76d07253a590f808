"""Keeping secrets out of everything skillassay stores.

Values of secret-looking environment variables (and any extra values a caller names) are replaced by a marker in
text before it is written to disk: logs, transcripts, reports. Emulator keys are scrubbed too, so a stored run never
teaches anyone what a key looks like in a place it should not be.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
# Key shapes worth scrubbing even when no variable names them.
KEY_PATTERNS = [
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\b(?:ghp|gho|ghs|github_pat)_[A-Za-z0-9_]{16,}"),
    # Seam keys (seam_test..._<random>) but not identifiers such as seam_webhook_handler: the random part is long
    # and has no underscore
    re.compile(r"\bseam_[A-Za-z0-9]{3,}_[A-Za-z0-9]{16,}\b"),
]
MARK = "[REDACTED]"


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if SECRET_NAME.search(k) and v and len(v) >= 6}
    values.update(v for v in extra if v and len(v) >= 6)
    return sorted(values, key=len, reverse=True)  # longest first, so a prefix never leaves a tail behind


def redact(text: str, values: Iterable[str] = ()) -> str:
    for v in values:
        text = text.replace(v, MARK)
    for pat in KEY_PATTERNS:
        text = pat.sub(MARK, text)
    return text


def redact_tree(root: Path, values: Iterable[str] = ()) -> None:
    """Scrub every text file below ``root`` in place (binary files are left alone)."""
    values = list(values)
    for path in Path(root).rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="surrogateescape")
        clean = redact(text, values)
        if clean != text:
            path.write_bytes(clean.encode("utf-8", errors="surrogateescape"))
