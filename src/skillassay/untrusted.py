"""Reading, copying and recording what an agent or an app under test left behind, in the harness (unsealed,
often as root): its workspace, its private home, its app's copy.

Everything there is hostile input. A name may be a symbolic link to any host path (``/proc/self/environ`` of
the harness, the suite, ``/etc``), a fifo that blocks whoever opens it, a file of any size, a name that is not
UTF-8. The harness follows none of it:
- ``read_regular`` / ``copy_regular`` open a file only if it is a regular file reached without any symbolic
  link (``O_NOFOLLOW`` on every component below the root, ``O_NONBLOCK`` so a fifo never blocks), up to a
  size;
- ``copy_entry`` copies a file or a link AS a link (never what it points to), and skips fifos, sockets and
  devices;
- ``make_dirs`` makes a folder inside a tree the harness owns (a copy), replacing any link or file the agent
  put on the way, so what the harness writes there stays inside the tree;
- ``printable`` makes any text recordable (a file name of invalid UTF-8, a lone surrogate from JSON).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # neither pathlib nor typing at import: the rubric's memo reads trees through here
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class Refused(OSError):
    """The entry is not a regular file reached without links, or is larger than allowed."""


def _open_below(root: Path | str, rel: str, flags: int) -> int:
    """A descriptor for ``root/rel`` opened with ``flags``, following no symbolic link below ``root``."""
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise Refused(errno.EINVAL, "not a path inside the tree", rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)


def _split(path: Path | str, root: Path | str | None) -> tuple[str, str]:
    """(the folder to open from, the path below it): with no root, the file's own folder and its name."""
    text = os.fspath(path)
    if root is None:
        text = text.rstrip(os.sep) or text
        return os.path.dirname(text) or ".", os.path.basename(text)
    base = os.fspath(root)
    if not os.path.isabs(text):
        return base, text
    # lexically, as Path.relative_to: a ".." stays in the path below, where _open_below refuses it
    parts, base_parts = _parts(text), _parts(base)
    if parts[: len(base_parts)] != base_parts:
        raise ValueError(f"{text!r} is not in the subpath of {base!r}")
    return base, "/".join(parts[len(base_parts) :]) or "."


def _parts(path: str) -> list[str]:
    return [p for p in path.replace(os.sep, "/").split("/") if p not in ("", ".")]


def read_regular(path: Path | str, root: Path | str | None = None, limit: int | None = None) -> bytes:
    """The bytes of ``path`` (relative to ``root``, or a path under it; with no root only the last component
    is checked). Raises ``Refused`` (an OSError) for a link, a fifo, a device, a folder, or more than
    ``limit`` bytes."""
    base, rel = _split(path, root)
    try:
        fd = _open_below(base, rel, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(exc.errno, "reached through a symbolic link", str(path)) from exc
        raise
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused(errno.EINVAL, "not a regular file", str(path))
        if limit is not None and info.st_size > limit:
            raise Refused(errno.EFBIG, f"larger than {limit} bytes", str(path))
        data = fh.read() if limit is None else fh.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise Refused(errno.EFBIG, f"larger than {limit} bytes", str(path))
        return data


def copy_regular(
    src: Path | str, dest: Path | str, root: Path | str | None = None, limit: int | None = None
) -> bool:
    """Copy the regular file ``src`` (checked as ``read_regular`` does) to ``dest`` (made anew). True when
    done.
    """
    from pathlib import Path

    data = read_regular(src, root, limit)
    dest = Path(dest)
    remove(dest)
    dest.write_bytes(data)
    return True


def copy_entry(src: Path | str, dest: Path | str) -> bool:
    """Copy one entry of an untrusted tree: a regular file (with its times and mode), or a link as a link.
    Fifos, sockets and devices are not copied (False). ``dest``'s folder must exist and be the harness's
    own."""
    import shutil  # here: shutil imports the compression modules, and the rubric reads trees only
    from pathlib import Path

    src, dest = Path(src), Path(dest)
    info = os.lstat(src)
    remove(dest)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src), dest)
        return True
    if not stat.S_ISREG(info.st_mode):
        return False
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fin, open(dest, "xb") as fout:
        if not stat.S_ISREG(os.fstat(fin.fileno()).st_mode):
            raise Refused(errno.EINVAL, "not a regular file", str(src))
        shutil.copyfileobj(fin, fout, 1 << 20)
    shutil.copystat(src, dest, follow_symlinks=False)
    return True


def make_dirs(root: Path | str, rel: str) -> Path:
    """``root/rel`` as a real folder inside ``root`` (a tree the harness owns: a copy of the agent's). Any
    link or file on the way is removed first, so nothing written there lands outside ``root``."""
    from pathlib import Path

    root = Path(root)
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(errno.EINVAL, "not a path inside the tree", rel)
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
        if not here.exists():
            here.mkdir()
    return here


def remove(path: Path | str) -> None:
    """Remove ``path`` whatever it is, never following a link (``rmtree`` refuses a link to a folder)."""
    from pathlib import Path

    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        import shutil

        shutil.rmtree(path)


def printable(value: Any) -> Any:
    """``value`` (str, or dicts/lists/tuples of them) with every character UTF-8 cannot encode (a file name's
    invalid bytes, a lone surrogate a JSON ``\\udcxx`` escape gave) written as its escape (``\\udcff``), so
    it can be stored."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable(v) for v in value)
    return value
