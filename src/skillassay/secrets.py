"""Keeping secrets out of everything skillassay stores (docs/results.md, "Secrets").

The first defence is that secrets never enter a run: agents get an explicit environment (agents/installed.py),
the app under test and the graders' commands get the harness's environment without secrets
(``without_secrets``), and the model proxy holds the provider keys. This module is the second: before a run
folder, a record or a log is kept, every byte of it is searched for every secret the run could have seen, in
the forms an agent or a tool could have written it, and what matches is replaced (text), refused (binary
files) or renamed (file names), each time recorded (by kind and place, never the value).

What counts as a secret:
- the value of a variable (of the harness's environment, or given with ``--agent-env``) whose name marks it
  secret (``secret_name``: a word of the name is or ends in KEY(S), TOKEN(S), SECRET(S); holds PASSWORD,
  PASSWD, PASSPHRASE, CREDENTIAL(S); starts with AUTH but is not AUTHOR...; is PRIVATE, PASS, or PWD in a
  longer name);
- the password, and ``user:password``, of a URL with credentials in ANY variable's value
  (``DATABASE_URL=postgres://user:pass@host/db``);
- values the caller adds: per-run model tokens, emulator keys;
- strings shaped like well-known keys (``KEY_PATTERNS``), whoever wrote them.
A value shorter than ``MIN_LENGTH`` characters cannot be searched for without destroying ordinary text; such
values are reported by name (``Redactor.too_short``).

The forms looked for (``FORMS``), for each value: as written; base64 (standard and URL-safe alphabets, at any
of the three alignments inside a longer encoded text, and the whole encoded run around a match is removed);
hexadecimal (either case); percent-encoded (as ``quote`` and ``quote_plus`` write it); JSON- and HTML-escaped;
reversed; UTF-16 (either byte order). Not looked for: encryption, compression (other than git's own objects,
which the workspace decompresses), or any transformation an agent invents with a key of its own; no scan can
catch those, which is why secrets are kept out of the agent's reach in the first place.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import ahocorasick_rs
from pydantic import BaseModel, Field

MARK = "[REDACTED]"
NAME_MARK = "REDACTED"  # in a file name
MIN_LENGTH = 6
BINARY_PROBE = 8000  # a NUL in the first bytes makes a file binary (git's rule)

# a word of a variable's name (split on anything not a letter or digit) that marks its value secret
_SECRET_WORD = re.compile(
    r"^(?:.*(?:KEYS?|TOKENS?|SECRETS?)|.*(?:PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?).*|AUTH(?!ORS?$).*|PRIVATE|PASS)$"
)
# kept for callers that match names themselves
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PRIVATE)", re.IGNORECASE)
# scheme://user:password@host (the password may be empty-free percent-encoded text)
URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([^\s/:@]+):([^\s/@]+)@")
# Key shapes worth scrubbing even when no variable names them.
KEY_PATTERNS = [
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\b(?:ghp|gho|ghs|github_pat)_[A-Za-z0-9_]{16,}"),
    # Seam keys (seam_test..._<random>) but not identifiers such as seam_webhook_handler: the random part is
    # long and has no underscore
    re.compile(r"\bseam_[A-Za-z0-9]{3,}_[A-Za-z0-9]{16,}\b"),
]
_KEY_PATTERNS_B = [re.compile(p.pattern.encode()) for p in KEY_PATTERNS]
_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789="
_B64_STD, _B64_URL = frozenset(_ALNUM + b"+/"), frozenset(_ALNUM + b"-_")

Form = Literal["raw", "base64", "hex", "url", "json", "html", "reversed", "utf16", "shape"]
FORMS: tuple[str, ...] = ("raw", "base64", "hex", "url", "json", "html", "reversed", "utf16", "shape")


# ----------------------------------------------------------------------------- which values are secret
def secret_name(name: str) -> bool:
    """Does a variable's name mark its value secret? (``GIT_AUTHOR_NAME``, ``PWD``, ``KEYMAP`` do not.)"""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    if any(_SECRET_WORD.match(w) for w in words):
        return True
    return len(words) > 1 and "PWD" in words


def url_credentials(value: str) -> list[str]:
    """The passwords (as written and percent-decoded) and ``user:password`` pairs of every URL with
    credentials in ``value``."""
    found: list[str] = []
    for m in URL_CREDENTIALS.finditer(value):
        user, password = m.group(1), m.group(2)
        found += [password, urllib.parse.unquote(password), f"{user}:{password}"]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Secret:
    value: str
    source: str  # where it came from, e.g. "env:DATABASE_URL (URL password)"; never the value


def collect(
    env: Mapping[str, str] | None = None,
    *,
    agent_env: Mapping[str, str] | None = None,
    extra: Iterable[str | Secret] = (),
) -> list[Secret]:
    """Every secret of the harness's environment (``os.environ`` by default), of ``--agent-env`` and
    ``extra``.
    """
    env = os.environ if env is None else env
    out: list[Secret] = []
    for label, variables in (("env", env), ("agent-env", agent_env or {})):
        for name, value in variables.items():
            if not value:
                continue
            if secret_name(name):
                out.append(Secret(value, f"{label}:{name}"))
            for cred in url_credentials(value):
                out.append(Secret(cred, f"{label}:{name} (URL credentials)"))
    for item in extra:
        if isinstance(item, Secret):
            out.append(item)
        elif item:
            out.append(Secret(item, "run"))
    return out


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The secret values of ``env`` (default ``os.environ``) and ``extra``, longest first, long enough to
    scrub.
    """
    values = {s.value for s in collect(env, extra=extra) if len(s.value) >= MIN_LENGTH}
    return sorted(values, key=len, reverse=True)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` less every variable whose name marks it secret or whose value holds a URL with credentials: the
    environment for processes that run code the agent wrote (the app, its install, gates and hidden tests)."""
    return {k: v for k, v in env.items() if not secret_name(k) and not URL_CREDENTIALS.search(v)}


# ----------------------------------------------------------------------------- the forms of a value
def _base64_cores(data: bytes) -> list[bytes]:
    """The part of base64 text that encodes only ``data``, for each of the three alignments ``data`` can have
    inside a longer encoded text, in both alphabets."""
    cores = []
    n = len(data)
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data)
        start = -(-8 * offset // 6)  # the first character with no bit of the prefix
        end = 8 * (offset + n) // 6  # the last character with no bit of the padding
        core = encoded[start:end]
        cores += [core, core.replace(b"+", b"-").replace(b"/", b"_")]
    return cores


def forms(value: str) -> list[tuple[str, bytes]]:
    """(form, bytes) for every form of ``value`` that is searched for."""
    raw = value.encode("utf-8", errors="surrogateescape")
    out: list[tuple[str, bytes]] = [("raw", raw), ("reversed", raw[::-1])]
    out += [("base64", core) for core in _base64_cores(raw)]
    out += [("hex", raw.hex().encode()), ("hex", raw.hex().upper().encode())]
    for q in (urllib.parse.quote(value, safe=""), urllib.parse.quote(value), urllib.parse.quote_plus(value)):
        out.append(("url", q.encode()))
    out += [
        ("json", json.dumps(value)[1:-1].encode()),
        ("json", json.dumps(value, ensure_ascii=False)[1:-1].encode()),
    ]
    out.append(("html", html.escape(value).encode()))
    out += [
        ("utf16", value.encode("utf-16-le", errors="surrogatepass")),
        ("utf16", value.encode("utf-16-be", errors="surrogatepass")),
    ]
    seen: set[bytes] = set()
    unique = []
    for form, needle in out:
        if needle not in seen and len(needle) >= MIN_LENGTH:
            seen.add(needle)
            unique.append((form, needle))
    return unique


# ----------------------------------------------------------------------------- what a redaction records
class Redaction(BaseModel):
    """One place where a secret was found before it was stored: where, in which form, from which variable, and
    what was done. Never the value."""

    # relative to the folder scanned (a run folder), as stored after the redaction; "run.json" for a record
    path: str
    where: Literal["content", "name", "link", "git", "record"]
    action: Literal["replaced", "removed", "renamed", "relinked"]
    forms: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    count: int = 1


@dataclass
class Hit:
    start: int
    end: int
    form: str
    source: str


@dataclass
class Redactor:
    """Finds and removes secrets in bytes, text, files and folders."""

    secrets: list[Secret]
    shapes: bool = True  # also the well-known key shapes (KEY_PATTERNS)
    too_short: list[str] = field(default_factory=list)  # sources of values too short to search for
    _needles: list[tuple[bytes, str, str]] = field(default_factory=list, repr=False)
    _matcher: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        seen: dict[bytes, tuple[str, str]] = {}
        for s in self.secrets:
            if len(s.value) < MIN_LENGTH:
                if s.source not in self.too_short:
                    self.too_short.append(s.source)
                continue
            for form, needle in forms(s.value):
                seen.setdefault(needle, (form, s.source))
        self._needles = [(needle, form, source) for needle, (form, source) in seen.items()]
        if self._needles:
            self._matcher = ahocorasick_rs.BytesAhoCorasick([n for n, _, _ in self._needles])

    @classmethod
    def of(cls, values: Iterable[str | Secret], shapes: bool = True) -> Redactor:
        secrets = [v if isinstance(v, Secret) else Secret(v, "value") for v in values if v]
        return cls(secrets, shapes=shapes)

    @property
    def empty(self) -> bool:
        return not self._needles and not self.shapes

    # ------------------------------------------------------------------------- bytes and text
    def find(self, data: bytes | memoryview) -> list[Hit]:
        """Every match, each widened to what must go (a base64 match to its whole encoded run)."""
        hits: list[Hit] = []
        if self._matcher is not None:
            found = self._matcher.find_matches_as_indexes(data, overlapping=True)  # type: ignore[attr-defined]
            for index, start, end in found:
                _, form, source = self._needles[index]
                if form == "base64":
                    # the whole encoded run goes, not only the part that encodes the secret alone
                    chars = (
                        _B64_URL
                        if b"-" in self._needles[index][0] or b"_" in self._needles[index][0]
                        else _B64_STD
                    )
                    while start > 0 and data[start - 1] in chars:
                        start -= 1
                    while end < len(data) and data[end] in chars:
                        end += 1
                hits.append(Hit(start, end, form, source))
        if self.shapes:
            buf = bytes(data) if isinstance(data, memoryview) else data
            for pat in _KEY_PATTERNS_B:
                hits += [Hit(m.start(), m.end(), "shape", "key shape") for m in pat.finditer(buf)]
        return sorted(hits, key=lambda h: (h.start, h.end))

    def redact_bytes(self, data: bytes, mark: bytes = MARK.encode()) -> tuple[bytes, list[Hit]]:
        hits = self.find(data)
        if not hits:
            return data, hits
        out, pos = [], 0
        for h in hits:
            if h.end <= pos:
                continue  # inside a span already replaced
            out.append(data[pos : max(pos, h.start)])
            if h.start >= pos:
                out.append(mark)
            pos = h.end
        out.append(data[pos:])
        return b"".join(out), hits

    def redact(self, text: str) -> str:
        data = text.encode("utf-8", errors="surrogateescape")
        clean, hits = self.redact_bytes(data)
        return clean.decode("utf-8", errors="surrogateescape") if hits else text

    def redact_json(self, text: str) -> tuple[str, list[Hit]]:
        """A record as JSON with its secrets replaced (``MARK`` keeps a JSON string valid)."""
        data = text.encode("utf-8", errors="surrogateescape")
        clean, hits = self.redact_bytes(data)
        return clean.decode("utf-8", errors="surrogateescape"), hits

    # ------------------------------------------------------------------------- files and folders
    def scrub_tree(self, root: Path, *, skip: Callable[[str], bool] = lambda rel: False) -> list[Redaction]:
        """Scrub every file below ``root`` in place: names first (a file or folder named after a secret is
        renamed), then link targets and contents (text is redacted; a binary file holding a secret is
        removed). ``skip(rel)`` leaves a folder (e.g. a workspace's ``.git``, inspected on its own) and
        what is in it untouched."""
        root = Path(root)
        found: list[Redaction] = []
        if not root.is_dir():
            return found
        # names, from the top: a renamed folder is walked under its new name, so no recorded path holds a
        # secret
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            prefix = "" if rel_dir == "." else rel_dir + "/"
            descend = []
            for name in dirnames:
                if skip(prefix + name):
                    continue
                renamed = self._rename(Path(dirpath), name)
                if renamed is not None:
                    name = renamed[0]
                    found.append(_record(prefix + name, "name", "renamed", renamed[1]))
                if not os.path.islink(os.path.join(dirpath, name)):
                    descend.append(name)
            dirnames[:] = descend
            for name in filenames:
                renamed = self._rename(Path(dirpath), name)
                if renamed is not None:
                    found.append(_record(prefix + renamed[0], "name", "renamed", renamed[1]))
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            prefix = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = [d for d in dirnames if not skip(prefix + d)]
            for name in [*filenames, *(d for d in dirnames if os.path.islink(os.path.join(dirpath, d)))]:
                found += self._scrub_file(Path(dirpath) / name, prefix + name)
        return found

    def _rename(self, parent: Path, name: str) -> tuple[str, list[Hit]] | None:
        data = os.fsencode(name)
        clean, hits = self.redact_bytes(data, NAME_MARK.encode())
        if not hits:
            return None
        new = os.fsdecode(clean.replace(b"/", b"_")) or NAME_MARK
        stem, ext = os.path.splitext(new)
        candidate, n = new, 1
        while os.path.lexists(parent / candidate):
            n += 1
            candidate = f"{stem}-{n}{ext}"
        os.rename(parent / name, parent / candidate)
        return candidate, hits

    def _scrub_file(self, path: Path, rel: str) -> list[Redaction]:
        if path.is_symlink():
            target = os.readlink(path)
            clean, hits = self.redact_bytes(os.fsencode(target))
            if not hits:
                return []
            path.unlink()
            os.symlink(os.fsdecode(clean), path)
            return [_record(rel, "link", "relinked", hits)]
        if not path.is_file():
            return []
        try:
            data = path.read_bytes()
        except OSError:
            return []
        clean, hits = self.redact_bytes(data)
        if not hits:
            return []
        if b"\0" in data[:BINARY_PROBE]:
            path.unlink()  # a binary file with a secret in it is not kept: no edit of it could be trusted
            return [_record(rel, "content", "removed", hits)]
        mode = path.stat().st_mode
        path.write_bytes(clean)
        os.chmod(path, mode)
        return [_record(rel, "content", "replaced", hits)]


def _record(path: str, where: str, action: str, hits: list[Hit]) -> Redaction:
    return Redaction(
        path=path,
        where=where,
        action=action,
        forms=sorted({h.form for h in hits}),
        sources=sorted({h.source for h in hits}),
        count=len(hits),
    )


def merge(redactions: Iterable[Redaction]) -> list[Redaction]:
    """One entry per (path, where, action), counts added: what run.json keeps."""
    out: dict[tuple[str, str, str], Redaction] = {}
    for r in redactions:
        key = (r.path, r.where, r.action)
        if key in out:
            cur = out[key]
            cur.forms = sorted(set(cur.forms) | set(r.forms))
            cur.sources = sorted(set(cur.sources) | set(r.sources))
            cur.count += r.count
        else:
            out[key] = r.model_copy()
    return list(out.values())


# ----------------------------------------------------------------------------- the simple calls
@lru_cache(maxsize=32)
def _redactor(values: tuple[str, ...]) -> Redactor:
    return Redactor.of(values)


@lru_cache(maxsize=32)
def _cached(secrets: tuple[Secret, ...]) -> Redactor:
    return Redactor(list(secrets))


def environment_redactor(
    extra: Iterable[str | Secret] = (), agent_env: Mapping[str, str] | None = None
) -> Redactor:
    """The harness's environment's secrets (and ``extra``, ``agent_env``'s); the same secrets give the same,
    already built, redactor."""
    return _cached(tuple(collect(agent_env=agent_env, extra=extra)))


def redact(text: str, values: Iterable[str] = ()) -> str:
    """``text`` with every form of ``values`` (and every key shape) replaced by ``MARK``."""
    return _redactor(tuple(sorted(set(values)))).redact(text)


def redact_tree(root: Path, values: Iterable[str] = ()) -> list[Redaction]:
    """Scrub every file below ``root`` in place (``Redactor.scrub_tree``)."""
    return _redactor(tuple(sorted(set(values)))).scrub_tree(root)
