"""A command's output, kept under the bytes of everything it read: the same inputs again print the same
output without doing the work (``skillassay rubric`` graded twice on one tree: the golden canary, a CI loop,
``check --controls``).

The key is a BLAKE2b digest over the command's arguments and the *content* of its inputs: named files, and
app trees walked with the one skip-list (``skiplist.py``) that every grader's walk uses, so no file a grader
can read is left out of it. Each regular file's bytes go in, a symbolic link's target text (a grader never
follows one), any other entry's type; modification times never do (an agent sets them back with
``touch -d``). A tree over ``MAX_ENTRIES`` entries or ``MAX_BYTES`` bytes is not memoized: hashing it would
cost more than the work it saves.

An entry also lists the code that produced it: every module file the process had loaded and the files of
the ``data`` folders of skillassay's package and the distributions installed (their folders and
``entry_points.txt``: which language plug-ins a grade finds), each with its size and modification time (the
rule Python applies to its own byte code). A changed module, a new grammar or plug-in, another Python: the
entry is not used. Only a command that succeeded is kept; errors are always found afresh.

Entries are sealed: each carries a BLAKE2b MAC keyed by a 32-byte secret of the owner's (``secret``, mode
0600, made on first use). An entry written by anyone without that secret, or moved from another key, is
ignored, never unpacked, so a forged entry cannot put a score in front of a reader. A secret that is not a
private regular file of this user's turns the memo off. The folder lies in skillassay's cache, which no run's
sandbox can see (``isolation/run_policy.py``).

This module imports nothing beyond ``os``, ``stat``, ``marshal`` and the hashing builtin, and reads trees
through ``untrusted.read_regular`` as the graders do: a hit costs a walk and a hash, not the imports of the
work it replaces.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys

from skillassay.untrusted import read_regular
from skillassay.workspace.skiplist import skipped_dir, skipped_file

TYPE_CHECKING = False  # typing is not imported: see above
if TYPE_CHECKING:
    from collections.abc import Sequence

try:  # the hash alone: hashlib's import also loads OpenSSL (about 2 ms)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import blake2b

FORMAT = 1
MAX_ENTRIES = 5000
MAX_BYTES = 32 << 20
MAX_KEPT = 2000  # entries a folder keeps; past it the oldest half goes
SECRET_BYTES = 32
DIGEST_BYTES = 32
SUFFIX = ".memo"


class OutputMemo:
    """The outputs kept in ``folder`` (created private on first save)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def key(self, parts: Sequence[str], files: Sequence[str], trees: Sequence[str]) -> bytes | None:
        """The digest of ``parts`` (the arguments), the bytes of ``files`` (missing ones as missing) and the
        walked ``trees``; None when a tree is missing, too large or unreadable (then nothing is memoized)."""
        h = blake2b(digest_size=DIGEST_BYTES, person=b"skillassay-memo")
        _frame(h, b"format", str(FORMAT).encode(), sys.version.encode())
        for part in parts:
            _frame(h, b"part", part.encode("utf-8", "surrogateescape"))
        for path in files:
            _frame(h, b"file", os.fsencode(path), *_named(path))
        budget = [MAX_ENTRIES, MAX_BYTES]
        for root in trees:
            _frame(h, b"tree", os.fsencode(root))
            if not _feed_tree(h, root, budget):
                return None
        return h.digest()

    def load(self, key: bytes) -> bytes | None:
        """The output kept under ``key``, if its seal holds and the code that made it is the code here."""
        secret = self._secret(create=False)
        if secret is None:
            return None
        try:
            sealed = read_regular(self._entry(key))
        except OSError:
            return None
        if len(sealed) <= DIGEST_BYTES:
            return None
        mac, payload = sealed[:DIGEST_BYTES], sealed[DIGEST_BYTES:]
        if _mac(secret, key, payload) != mac:
            return None  # forged, damaged, or moved from another key: never unpacked
        try:
            fmt, code, output = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        if fmt != FORMAT or not _same_code(code):
            return None
        return output if isinstance(output, bytes) else None

    def save(self, key: bytes, output: bytes) -> None:
        """Keep ``output`` under ``key`` with the code this process loaded; a failure to write is no error."""
        secret = self._secret(create=True)
        if secret is None:
            return
        payload = marshal.dumps((FORMAT, code_signature(), output))
        try:
            _write_atomic(self._entry(key), _mac(secret, key, payload) + payload)
            self._prune()
        except OSError:
            pass

    def _entry(self, key: bytes) -> str:
        return os.path.join(self.folder, key.hex() + SUFFIX)

    def _secret(self, create: bool) -> bytes | None:
        from contextlib import suppress  # on the way to a save only: a hit never loads contextlib

        path = os.path.join(self.folder, "secret")
        secret = _private_bytes(path)
        if secret is not None or not create:
            return secret
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(SECRET_BYTES))
            with suppress(FileExistsError):  # atomic and never over another's: two first runs agree on one
                os.link(tmp, path)
            os.unlink(tmp)
        except OSError:
            return None
        return _private_bytes(path)

    def _prune(self) -> None:
        from contextlib import suppress

        entries = [e for e in os.scandir(self.folder) if e.name.endswith(SUFFIX)]
        if len(entries) <= MAX_KEPT:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for e in entries[: len(entries) - MAX_KEPT // 2]:
            with suppress(OSError):
                os.unlink(e.path)


def code_signature() -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of every module file this process loaded, every file in a ``data`` folder of
    skillassay's package and the installed plug-ins (``_installed_plugins``): what an entry was made by."""
    import skillassay

    paths = {f for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)}
    package = os.path.dirname(os.path.abspath(skillassay.__file__))
    # a data folder holds what code reads at run time (the rubric's route and SDK lists); starter/ is the
    # suite `init` copies, never read by a command
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "starter")]
        if os.path.basename(dirpath) == "data":
            paths.update(os.path.join(dirpath, n) for n in filenames)
    paths.update(_installed_plugins())
    out = []
    for path in sorted(paths):
        try:
            info = os.stat(path)
        except OSError:
            continue
        out.append((path, info.st_size, info.st_mtime_ns))
    return out


def _installed_plugins() -> list[str]:
    """Every folder on ``sys.path`` holding distributions, and their ``entry_points.txt``: which language
    parsers and stacks a grade finds (``entry_point_text.py``). A distribution installed or removed changes
    its folder's modification time."""
    found = []
    for entry in sys.path:
        folder = os.path.abspath(entry or ".")
        try:
            dists = [n for n in os.listdir(folder) if n.endswith(".dist-info")]
        except OSError:
            continue
        if dists:
            found.append(folder)
            found += [os.path.join(folder, n, "entry_points.txt") for n in dists]
    return found


def _same_code(code: object) -> bool:
    if not isinstance(code, list) or not code:
        return False
    for item in code:
        try:
            path, size, mtime = item
            info = os.stat(path)
        except (OSError, TypeError, ValueError):
            return False
        if (info.st_size, info.st_mtime_ns) != (size, mtime):
            return False
    return True


def _frame(h: blake2b, tag: bytes, *fields: bytes) -> None:
    """Each field with its length, so no two different inputs feed the same bytes."""
    h.update(tag)
    for f in fields:
        h.update(len(f).to_bytes(8, "little"))
        h.update(f)


def _feed_tree(h: blake2b, root: str, budget: list[int]) -> bool:
    if not os.path.isdir(root):
        return False
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel = os.path.relpath(dirpath, root)
        top = rel == "."
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                _frame(h, b"link", os.fsencode(os.path.join(rel, d)), os.fsencode(os.readlink(full)))
            elif skipped_dir(d, top):
                _frame(h, b"skipped", os.fsencode(os.path.join(rel, d)))  # its presence, not its content
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if skipped_file(name):
                continue
            budget[0] -= 1
            if budget[0] < 0 or not _feed_entry(h, root, os.path.join(rel, name), budget):
                return False
    return True


def _feed_entry(h: blake2b, root: str, rel: str, budget: list[int]) -> bool:
    full = os.path.join(root, rel)
    try:
        info = os.lstat(full)
        if stat.S_ISLNK(info.st_mode):
            _frame(h, b"link", os.fsencode(rel), os.fsencode(os.readlink(full)))
            return True
        if not stat.S_ISREG(info.st_mode):
            _frame(h, b"other", os.fsencode(rel), str(stat.S_IFMT(info.st_mode)).encode())
            return True
        budget[1] -= info.st_size
        if budget[1] < 0:
            return False
        # as every grader reads the tree: no link on the way below the root, a fifo never waited on
        data = read_regular(rel, root=root, limit=info.st_size + budget[1])
    except OSError:
        return False
    _frame(h, b"regular", os.fsencode(rel), data)
    return True


def _named(path: str) -> tuple[bytes, ...]:
    """A named input as the grader reads it (through links, as ``open`` does): its bytes, or what it is."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return (b"special",)
        with open(path, "rb") as f:
            return (b"regular", f.read())
    except OSError:
        return (b"missing",)


def _private_bytes(path: str) -> bytes | None:
    """The secret: a regular file of this user's that no one else may read or write, of the right size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size != SECRET_BYTES
        ):
            return None
        data = os.read(fd, SECRET_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == SECRET_BYTES else None


def _mac(secret: bytes, key: bytes, payload: bytes) -> bytes:
    return blake2b(key + payload, digest_size=DIGEST_BYTES, key=secret).digest()


def _write_atomic(path: str, data: bytes) -> None:
    from contextlib import suppress

    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with suppress(OSError):
            os.unlink(tmp)
        raise
