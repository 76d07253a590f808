"""The four checks, driven through the app's HTTP API and judged by the access codes that appear in Seam.

All three Seam paths (reservation automations, access grants, access codes) end in access codes on the devices
of the reservation's space, so one set of checks serves them all. "This run's codes" are the codes on those
devices that did not exist before the create request (the workspace is this run's alone on the emulator).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from skillassay.apps.windows import WindowClock
from skillassay.seam.behaviour.result import CheckResult, HttpExchange
from skillassay.seam.behaviour.session import SeamRequestsFailed, SeamSession, SeamSettled, request_text
from skillassay.seam.config import Endpoint, SandboxTimeouts, TestEndpoints

# an app may round or re-format the times; a minute is still "the same"
TIME_TOLERANCE = timedelta(seconds=60)
GONE_STATUSES = {"removing", "removed", "deleted"}
_TEMPLATE = re.compile(r"\{\{\s*([A-Z_]+)\s*\}\}")


# ----------------------------------------------------------------------------- templates and paths
def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def time_templates(now: datetime | None = None) -> dict[str, str]:
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    return {
        "STARTS_AT": iso(now + timedelta(hours=1)),
        "ENDS_AT": iso(now + timedelta(hours=25)),
        "NEW_ENDS_AT": iso(now + timedelta(hours=49)),
    }


def render(value: Any, variables: Mapping[str, str]) -> Any:
    """Replace ``{{NAME}}`` in every string of ``value`` (dicts and lists walked). Unknown names stay as
    written.
    """
    if isinstance(value, str):
        return _TEMPLATE.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, Mapping):
        return {k: render(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, variables) for v in value]
    return value


_MISSING = object()


def dot_get(obj: Any, path: str) -> Any:
    """``reservation.id``, ``data.items.0.id``: keys of objects, indexes of lists. Returns _MISSING when
    absent.
    """
    cur = obj
    for part in path.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and re.fullmatch(r"-?\d+", part) and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))  # noqa: FURB162 - replaces a Z anywhere, as before
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def same_time(found: Any, expected: str) -> bool:
    a, b = parse_time(found), parse_time(expected)
    return a is not None and b is not None and abs(a - b) <= TIME_TOLERANCE


# ----------------------------------------------------------------------------- talking to the app
def _truncate(text: str, n: int = 2000) -> str:
    return text if len(text) <= n else text[:n] + f"... ({len(text)} chars)"


def send(
    client: httpx.Client, base_url: str, endpoint: Endpoint, variables: Mapping[str, str]
) -> tuple[HttpExchange, Any]:
    """Send one rendered endpoint request. Returns (exchange, parsed JSON or _MISSING)."""
    path = render(endpoint.path, variables)
    body = render(endpoint.payload, variables) if endpoint.payload is not None else None
    headers = render(endpoint.headers or {}, variables)
    ex = HttpExchange(method=endpoint.method.upper(), url=base_url + path, request_body=body)
    t0 = time.monotonic()
    try:
        r = client.request(ex.method, ex.url, json=body, headers=headers)
    except httpx.ConnectError as e:
        ex.error = f"connection refused: {e}"
        return ex, _MISSING
    except httpx.TimeoutException as e:
        ex.error = f"the app did not answer within {client.timeout.read} s: {type(e).__name__}"
        return ex, _MISSING
    except httpx.HTTPError as e:
        ex.error = f"{type(e).__name__}: {e}"
        return ex, _MISSING
    finally:
        ex.elapsed_s = round(time.monotonic() - t0, 3)
    ex.status = r.status_code
    try:
        parsed = r.json()
        ex.response_body = parsed
    except (ValueError, json.JSONDecodeError):
        parsed = _MISSING
        ex.response_body = _truncate(r.text)
    return ex, parsed


def http_problem(ex: HttpExchange, parsed: Any) -> str | None:
    """Why an answer is not a success, or None."""
    if ex.error:
        return ex.error
    assert ex.status is not None
    if ex.status >= 400:
        body = ex.response_body if isinstance(ex.response_body, str) else json.dumps(ex.response_body)
        return f"HTTP {ex.status} from {ex.method} {ex.url}: {_truncate(body, 500)}"
    return None


# ----------------------------------------------------------------------------- the checks
class Checker:
    """Runs create, update and cancel against a started app and a bootstrapped Seam session."""

    def __init__(
        self,
        *,
        client: httpx.Client,
        base_url: str,
        seam: SeamSession,
        device_ids: list[str],
        endpoints: TestEndpoints,
        variables: dict[str, str],
        timeouts: SandboxTimeouts,
        update_check: str,
        quiet_after: float | None,
        fail_grace: float | None = None,
        clock: WindowClock | None = None,
    ):
        self.client = client
        self.base_url = base_url
        self.seam = seam
        self.device_ids = device_ids
        self.endpoints = endpoints
        self.variables = variables
        self.timeouts = timeouts
        self.update_check = update_check
        self.quiet_after = quiet_after
        self.fail_grace = fail_grace
        self.clock = clock or WindowClock()  # each step's window, for the run's Seam trace
        # the app's failed Seam requests of the step that stopped early
        self.failed: list[dict[str, Any]] = []
        self.baseline: set[str] = set()
        self.run_code_ids: set[str] = set()  # every code of this run seen so far
        self.reservation_id: str | None = None

    def _ours(self, codes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [c for c in codes if c.get("access_code_id") not in self.baseline]

    def _active(self, codes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [c for c in self._ours(codes) if c.get("status") not in GONE_STATUSES]

    def _remember(self, codes: list[dict[str, Any]]) -> None:
        ids = {c["access_code_id"] for c in codes if c.get("access_code_id")}
        self.run_code_ids |= ids
        self.seam.claimed_code_ids |= ids

    def _note_requests(self, check: CheckResult, since: Any) -> None:
        """The step's Seam requests: those that arrived inside its window (the trace's attribution)."""
        until = self.clock.origin + self.clock.windows[-1].end_s if self.clock.windows else None
        sent = self.seam.app_requests(since, until) if since is not None else None
        if sent is not None:
            check.seam["app_seam_requests"] = sent[:50]
            if len(sent) > 50:
                check.seam["app_seam_requests_omitted"] = len(sent) - 50
        grants = self.seam.grants()
        if grants:
            check.seam["grants"] = grants[:20]

    def _found(self, codes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.seam.annotate(codes)

    def _wait(self, predicate, timeout: float, since: Any) -> tuple[Any, str | None]:
        """(result, None) or (None, 'timeout'|'quiet'|'failed'|'settled')."""
        self.failed = []
        try:
            got = self.seam.wait(
                self.device_ids,
                predicate,
                timeout,
                quiet_after=self.quiet_after,
                since=since,
                fail_grace=self.fail_grace,
            )
        except TimeoutError:
            return None, "timeout"
        except SeamRequestsFailed as e:
            self.failed = e.requests
            return None, "failed"
        except SeamSettled as e:
            self.failed = e.requests
            return None, "settled"
        return (got, None) if got else (None, "quiet")

    def _early(self, why: str | None, step: str, waited: float) -> str:
        """Why the wait for ``step`` ended without the wanted state: the words that end a reason."""
        if why == "quiet":
            return f"the app sent Seam no request within {self.quiet_after:.0f} s of the {step} request"
        if why == "failed":
            shown = "; ".join(request_text(r) for r in self.failed[-3:])
            more = f" (and {len(self.failed) - 3} more)" if len(self.failed) > 3 else ""
            return (
                f"every Seam request the app sent for the {step} request failed: {shown}{more} "
                f"(stopped {self.fail_grace:g} s after the last answer)"
            )
        if why == "settled":
            shown = "; ".join(request_text(r) for r in self.failed[-3:])
            return (
                f"Seam answered every request the app sent for the {step} request ({shown}) and had "
                "nothing left "
                f"to do; the app sent nothing more for {self.quiet_after:g} s"
            )
        return f"waited {waited:.0f} s"

    # -- create ---------------------------------------------------------------------------------------------
    def create(self, check: CheckResult, id_path: str | None) -> None:
        t0 = time.monotonic()
        since = None
        try:
            before = self.seam.codes(self.device_ids)
            self.baseline = {c["access_code_id"] for c in before}
            check.seam["baseline_codes"] = self._found(before)
            since = self.seam.marker()
            self.clock.open("create")
            ex, parsed = send(self.client, self.base_url, self.endpoints.create, self.variables)
            check.requests.append(ex)
            problem = http_problem(ex, parsed)
            # the id, wherever the answer allows it: update and cancel need it even when create fails
            if problem is None and parsed is _MISSING:
                problem = (
                    f"non-JSON answer (HTTP {ex.status}) to {ex.method} {ex.url}: "
                    f"{_truncate(str(ex.response_body), 300)}"
                )
            id_note = None
            if parsed is not _MISSING and id_path:
                rid = dot_get(parsed, id_path)
                if rid is _MISSING or rid in (None, ""):
                    id_note = f"no reservation id at `{id_path}` in the create response"
                else:
                    self.reservation_id = str(rid)
                    self.seam.reservation_ids.add(self.reservation_id)
                    self.variables["RESERVATION_ID"] = self.reservation_id
            elif not id_path:
                id_note = "the eval config names no response_id_path"
            check.seam["reservation_id"] = self.reservation_id
            expected = {"starts_at": self.variables["STARTS_AT"], "ends_at": self.variables["ENDS_AT"]}
            check.seam["expected"] = expected
            if problem is not None:
                check.seam["found"] = self._found(self._ours(self.seam.codes(self.device_ids)))
                check.fail(problem)
                return

            def matching(codes: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
                active = self._active(codes)
                return active or None

            found, why = self._wait(matching, self.timeouts.create, since)
            if found is None:
                now = self.seam.codes(self.device_ids)
                check.seam["found"] = self._found(self._ours(now))
                if why in ("quiet", "failed", "settled"):
                    check.fail(f"no access code: {self._early(why, 'create', self.timeouts.create)}")
                else:
                    check.fail(
                        f"no access code appeared on device(s) {', '.join(self.device_ids)} within "
                        f"{self.timeouts.create:.0f} s"
                    )
                if id_note:
                    assert check.reason is not None  # set by fail() above
                    check.reason += f"; {id_note}"
                return
            self._remember(found)
            check.seam["found"] = self._found(found)
            times_ok = any(
                same_time(c.get("starts_at"), expected["starts_at"])
                and same_time(c.get("ends_at"), expected["ends_at"])
                for c in found
            )
            check.seam["times_match"] = times_ok
            notes = []
            if not times_ok:
                got = ", ".join(f"{c.get('starts_at')}..{c.get('ends_at')}" for c in found)
                notes.append(
                    f"code times differ from the reservation's (expected {expected['starts_at']}.."
                    f"{expected['ends_at']}, found {got})"
                )
            if id_note:
                notes.append(id_note)
            check.ok("; ".join(notes) or None)
        finally:
            self.clock.close()
            check.elapsed_s = round(time.monotonic() - t0, 3)
            self._note_requests(check, since)

    # -- update ---------------------------------------------------------------------------------------------
    def update(self, check: CheckResult) -> None:
        t0 = time.monotonic()
        since = None
        try:
            if self.reservation_id is None:
                check.fail("no reservation id")
                return
            since = self.seam.marker()
            self.clock.open("update")
            ex, parsed = send(self.client, self.base_url, self.endpoints.update, self.variables)
            check.requests.append(ex)
            problem = http_problem(ex, parsed)
            expected_end = self.variables["NEW_ENDS_AT"]
            check.seam["mode"] = self.update_check
            if self.update_check == "strict":
                check.seam["expected"] = {"ends_at": expected_end}
            if problem is not None:
                check.seam["found"] = self._found(self._ours(self.seam.codes(self.device_ids)))
                check.fail(problem)
                return

            if self.update_check == "presence":

                def want(codes):
                    return self._active(codes) or None
            else:

                def want(codes):
                    return [
                        c for c in self._active(codes) if same_time(c.get("ends_at"), expected_end)
                    ] or None

            found, why = self._wait(want, self.timeouts.update, since)
            if found is not None:
                self._remember(found)
                check.seam["found"] = self._found(found)
                check.ok()
                return
            now = self._active(self.seam.codes(self.device_ids))
            self._remember(now)
            check.seam["found"] = self._found(now)
            early = self._early(why, "update", self.timeouts.update)
            if not now:
                check.fail(f"no access code of this reservation on the device after the update ({early})")
            else:
                got = ", ".join(str(c.get("ends_at")) for c in now)
                check.fail(
                    f"code ends_at mismatch: expected {expected_end}, found {got}"
                    + (
                        f" ({early})"
                        if why in ("quiet", "failed", "settled")
                        else f" after {self.timeouts.update:.0f} s"
                    )
                )
        finally:
            self.clock.close()
            check.elapsed_s = round(time.monotonic() - t0, 3)
            self._note_requests(check, since)

    # -- cancel ---------------------------------------------------------------------------------------------
    def cancel(self, check: CheckResult) -> None:
        t0 = time.monotonic()
        since = None
        try:
            if self.reservation_id is None:
                check.fail("no reservation id")
                return
            since = self.seam.marker()
            self.clock.open("cancel")
            self._remember(self._active(self.seam.codes(self.device_ids)))
            ex, parsed = send(self.client, self.base_url, self.endpoints.cancel, self.variables)
            check.requests.append(ex)
            problem = http_problem(ex, parsed)
            check.seam["to_remove"] = sorted(self.run_code_ids)
            if problem is not None:
                check.seam["found"] = self._found(self._ours(self.seam.codes(self.device_ids)))
                check.fail(problem)
                return
            if not self.run_code_ids:
                check.fail("no access code of this reservation ever appeared, so none could be removed")
                return

            def gone(codes):
                return True if not self._active(codes) else None

            found, why = self._wait(gone, self.timeouts.cancel, since)
            after = self._ours(self.seam.codes(self.device_ids))
            check.seam["found"] = self._found(after)
            if found:
                check.ok()
                return
            left = ", ".join(f"{c.get('access_code_id')} ({c.get('status')})" for c in self._active(after))
            check.fail(
                f"access code still on the device after the cancel: {left} "
                f"({self._early(why, 'cancel', self.timeouts.cancel)})"
            )
        finally:
            self.clock.close()
            check.elapsed_s = round(time.monotonic() - t0, 3)
            self._note_requests(check, since)
