"""Watching a CLI's JSON-lines output while it runs.

Two uses: each line gets the time it appeared (seconds after the CLI started), which is how tool calls get
``at_s`` for either CLI, whatever its format says about time; and a trigger run can end as soon as its
decision is made (the skill was used, or the turn or token budget is spent), so trigger evals stay cheap.
``run_process`` polls the watch every ``interval`` seconds while the CLI runs.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from skillassay.transcripts import Transcript
from skillassay.triggers import SkillTarget, TriggerBudget, stop_reason

POLL_INTERVAL = 0.1
MAX_TAIL_READ = 64 << 20  # bytes read at once: what a CLI writes between two polls is far less


class Tail:
    """The complete lines appended to a file since the last read (the file may not exist yet)."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self._pos = 0
        self._partial = b""

    def read(self, final: bool = False) -> list[str]:
        if self.path is None:
            return []
        try:
            # the file may be the agent's to replace (a session file in its home): never a link followed,
            # never a fifo waited on
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return []
                fh.seek(self._pos)
                data = fh.read(MAX_TAIL_READ)
        except OSError:
            return []
        self._pos += len(data)
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        if final and self._partial:
            lines.append(self._partial)
            self._partial = b""
        return [line.decode("utf-8", errors="replace") for line in lines]


def parse_line(line: str) -> dict | None:
    line = line.strip()
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class StreamWatch:
    """Stamps each line of ``path`` with the seconds since ``start()``; with ``stop``, asks after new lines
    whether the run can end (``stop(watch)`` returns a reason, or None)."""

    interval = POLL_INTERVAL

    def __init__(self, path: Path, stop: Callable[[StreamWatch], str | None] | None = None):
        self._tail = Tail(path)
        self._stop = stop
        self._started = time.monotonic()
        self.line_times: list[float] = []  # per physical line of the file
        self.records: list[dict] = []  # the JSON objects read so far
        self.record_times: list[float] = []
        self.reason: str | None = None
        self.times: list[float | None] = []  # per record, once run_jsonl_cli has re-read the scrubbed output

    def start(self) -> None:
        self._started = time.monotonic()

    def _read(self, final: bool = False) -> bool:
        lines = self._tail.read(final)
        now = round(time.monotonic() - self._started, 3)
        for line in lines:
            self.line_times.append(now)
            rec = parse_line(line)
            if rec is not None:
                self.records.append(rec)
                self.record_times.append(now)
        return bool(lines)

    def poll(self) -> str | None:
        """Called by ``run_process`` while the CLI runs: a reason to stop it now, or None."""
        if self._read() and self._stop is not None and self.reason is None:
            try:
                self.reason = self._stop(self)
            except Exception:  # noqa: BLE001 - a half-written transcript the rule cannot read: let the run go on
                self.reason = None
        return self.reason

    def finish(self) -> None:
        """After the CLI ended: what it wrote last is stamped with the end time."""
        self._read(final=True)

    def times_for(self, numbered: Iterable[tuple[int, dict]]) -> tuple[list[dict], list[float | None]]:
        """Records re-read after the run (as (line number, record)) with the time each line appeared."""
        records, times = [], []
        for lineno, rec in numbered:
            records.append(rec)
            times.append(self.line_times[lineno] if lineno < len(self.line_times) else None)
        return records, times


def read_jsonl_numbered(path: Path) -> Iterable[tuple[int, dict]]:
    """(physical line number, object) for every line of ``path`` that is a JSON object."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh):
            rec = parse_line(line)
            if rec is not None:
                yield lineno, rec


def trigger_stop(
    parse: Callable[[list[dict], list[float | None]], Transcript],
    target: SkillTarget,
    budget: TriggerBudget,
) -> Callable[[StreamWatch], str | None]:
    """A stop rule for ``StreamWatch``: parse what the CLI wrote so far (with the agent's own parser) and
    apply the trigger decision (``skillassay.triggers.stop_reason``)."""

    def check(watch: StreamWatch) -> str | None:
        transcript = parse(watch.records, list(watch.record_times))
        return stop_reason(transcript, target, budget)

    return check
