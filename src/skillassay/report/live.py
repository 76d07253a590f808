"""The live job view of ``skillassay serve --live``: the jobs of a results root as their ``live.json`` files
(``store/live.py``) say they are now, as one small JSON document, and the page that shows it.

The page is one HTML document with one inline script, allowed by its hash alone (``LIVE_CSP``: the report's
policy plus ``script-src 'sha256-...'`` and ``connect-src 'self'``, so nothing a run wrote can run or be
fetched). The script asks for ``state.json`` every ``POLL_MS`` (``cache: no-cache``: an unchanged state is a
304 of headers only, see ``LiveBoard``) and redraws with ``textContent`` only; it never reloads the page.
What is served is scrubbed again with this process's secrets (``Redactor``), however the file was written."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel

from skillassay.report.site import CSP
from skillassay.secrets import environment_redactor
from skillassay.store.live import LIVE_FILE, LiveJob, read_live, staleness

POLL_MS = 2000
ENDED_SHOWN = 5  # jobs that have ended, the newest kept on the page below those running


class LiveJobView(LiveJob):
    """A job as the page gets it: its state, and why it is stale (its owner is gone) if it is."""

    stale: str | None = None


class LiveBoard(BaseModel):
    jobs: list[LiveJobView]


def _page_parts() -> tuple[str, str]:
    template = files("skillassay.report").joinpath("templates", "live.html").read_text(encoding="utf-8")
    script = files("skillassay.report").joinpath("templates", "live.js").read_text(encoding="utf-8")
    script = script.replace("__POLL_MS__", str(POLL_MS))
    return template, script


def _live_page() -> tuple[bytes, str]:
    """(the page, its Content-Security-Policy)."""
    template, script = _page_parts()
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = f"{CSP}; script-src 'sha256-{digest}'; connect-src 'self'"
    page = template.replace("__CSP__", csp).replace("__SCRIPT__", script)
    return page.encode(), csp


LIVE_PAGE, LIVE_CSP = _live_page()


class LiveStates:
    """The live states under a results root, each file parsed again only when it changed (its mtime and
    size): a poll of an unchanged root reads no file."""

    def __init__(self, results_root: Path):
        self.root = Path(results_root)
        self._parsed: dict[Path, tuple[tuple[int, int], LiveJob | None]] = {}
        self._lock = threading.Lock()
        self._body: tuple[object, bytes] | None = None  # (what it was made from, the document)

    def states(self) -> list[LiveJob]:
        return [state for _, state in self._states()]

    def _states(self) -> list[tuple[tuple[int, int], LiveJob]]:
        found: list[tuple[tuple[int, int], LiveJob]] = []
        seen: set[Path] = set()
        try:
            children = list(self.root.iterdir())
        except OSError:
            return []
        for child in children:
            path = child / LIVE_FILE
            try:
                st = path.stat()
            except OSError:
                continue
            seen.add(path)
            stamp = (st.st_mtime_ns, st.st_size)
            with self._lock:
                cached = self._parsed.get(path)
            if cached is None or cached[0] != stamp:
                try:
                    state: LiveJob | None = read_live(path)
                except (OSError, ValueError):  # half a file cannot be (written atomically); a foreign one can
                    state = None
                cached = (stamp, state)
                with self._lock:
                    self._parsed[path] = cached
            if cached[1] is not None:
                found.append((stamp, cached[1]))
        with self._lock:
            for gone in set(self._parsed) - seen:
                del self._parsed[gone]
        return found

    def board(self, now: datetime | None = None) -> LiveBoard:
        return self._board([(s, staleness(s, now or datetime.now(UTC))) for s in self.states()])

    @staticmethod
    def _board(judged: list[tuple[LiveJob, str | None]]) -> LiveBoard:
        views = [LiveJobView.model_validate({**s.model_dump(), "stale": stale}) for s, stale in judged]
        running = [v for v in views if v.status == "running"]
        ended = [v for v in views if v.status != "running"]
        running.sort(key=lambda v: (v.stale is not None, v.started_at), reverse=False)
        ended.sort(key=lambda v: v.heartbeat, reverse=True)
        return LiveBoard(jobs=running + ended[:ENDED_SHOWN])

    def body(self, now: datetime | None = None) -> bytes:
        """The board as served: without the heartbeats (which change every few seconds, so an unchanged job
        stays an unchanged document), scrubbed of every secret this process knows. Made again only when a
        file or a job's staleness changed (most polls find neither)."""
        now = now or datetime.now(UTC)
        found = self._states()
        judged = [(s, staleness(s, now)) for _, s in found]
        key = tuple((s.job_id, stamp, stale) for (stamp, s), (_, stale) in zip(found, judged, strict=True))
        redactor = environment_redactor()
        if self._body is not None and self._body[0] == (key, id(redactor)):
            return self._body[1]
        data = self._board(judged).model_dump(mode="json", exclude={"jobs": {"__all__": {"heartbeat"}}})
        text, _ = redactor.redact_json(json.dumps(data, separators=(",", ":")))
        self._body = ((key, id(redactor)), text.encode())
        return self._body[1]


def etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
