"""The Seam side of a validation: a run-scoped bootstrap, observing access codes, and clean-up.

Two sessions share one shape:
- ``EmulatorSession``: a fresh workspace of the local emulator per validation; spaces created through its real
  HTTP API with the workspace key; waits use the emulator's condition API (no polling).
- ``LiveSession``: the same HTTP bootstrap against Seam's sandbox (or any ``SEAM_ENDPOINT``) with the caller's
  key, polling with backoff, and clean-up of only what this run created.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from skillassay import tls
from skillassay.apps.windows import EndpointWindow
from skillassay.errors import InfrastructureError
from skillassay.seam.behaviour.trace import SeamTrace, TraceOrigin, build_trace

if TYPE_CHECKING:
    from skillassay.seam.emulator.emulator import SeamEmulator

T = TypeVar("T")
LIVE_ENDPOINT = "https://connect.getseam.com"


class SeamCallError(InfrastructureError):
    def __init__(self, route: str, status: int | None, body: str):
        self.route, self.status, self.body = route, status, body
        super().__init__(f"Seam {route}: {'HTTP ' + str(status) if status else 'no answer'}: {body[:500]}")


@dataclass
class SpaceInfo:
    space_key: str
    name: str
    space_id: str | None = None
    device_ids: list[str] = field(default_factory=list)
    created: bool = True  # False: the space already existed (live sandbox) and is not ours to delete


@dataclass
class WantedSpace:
    space_key: str
    name: str
    devices: int = 1


class SeamRequestsFailed(Exception):
    """Every Seam request the app sent for a step failed (``requests``: their summaries, oldest first)."""

    def __init__(self, requests: list[dict[str, Any]]):
        self.requests = requests
        super().__init__(f"{len(requests)} failed Seam request(s)")


class SeamSettled(Exception):
    """The app's Seam requests for a step were all answered, Seam has no work scheduled for the workspace, and
    the app sent nothing more for a while: nothing will change (``requests``: their summaries)."""

    def __init__(self, requests: list[dict[str, Any]]):
        self.requests = requests
        super().__init__(f"{len(requests)} Seam request(s), nothing pending")


def request_summary(record: Any, t0: float | None = None) -> dict[str, Any]:
    """One request the app sent to Seam, for the evidence: method, route, query, the status answered (None
    while unanswered) and the error, and when it came (seconds after the step's request was sent)."""
    out: dict[str, Any] = {
        "method": record.method,
        "path": record.path,
        "status": getattr(record, "status", None),
    }
    query = getattr(record, "query", "")
    if query:
        out["query"] = query if len(query) <= 300 else query[:300] + "..."
    error = getattr(record, "error", None)
    if error:
        out["error"] = error if len(error) <= 300 else error[:300] + "..."
    if t0 is not None and getattr(record, "at", None):
        out["at_s"] = round(max(0.0, record.at - t0), 3)
    return out


def request_text(summary: Mapping[str, Any]) -> str:
    """``POST /access_grants/create -> 404 (space_not_found: ...)``."""
    status = summary.get("status")
    text = f"{summary.get('method')} {summary.get('path')}"
    text += f" -> {status}" if status is not None else " (no answer yet)"
    if summary.get("error"):
        text += f" ({summary['error']})"
    return text


def code_summary(code: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "access_code_id",
        "device_id",
        "name",
        "code",
        "type",
        "status",
        "starts_at",
        "ends_at",
        "created_at",
    )
    return {k: code.get(k) for k in keys if k in code}


def credential_codes(
    credentials: Iterable[Mapping[str, Any]], entrances: Mapping[str, Iterable[str]]
) -> list[dict[str, Any]]:
    """ACS PIN credentials seen as access codes, one per entrance it opens (``device_id``: the entrance), so
    that the checks judge an ACS integration as they judge codes on locks: issued is ``set``, deleted is
    gone."""
    out = []
    for credential in credentials:
        if credential.get("access_method") != "code":
            continue
        timed = credential.get("starts_at") or credential.get("ends_at")
        for entrance_id in entrances.get(credential.get("acs_credential_id") or "", ()):
            out.append(
                {
                    "access_code_id": credential.get("acs_credential_id"),
                    "device_id": entrance_id,
                    "name": credential.get("display_name"),
                    "code": credential.get("code"),
                    "type": "time_bound" if timed else "ongoing",
                    "status": "set" if credential.get("is_issued") else "setting",
                    "starts_at": credential.get("starts_at"),
                    "ends_at": credential.get("ends_at"),
                    "created_at": credential.get("created_at"),
                }
            )
    return out


class SeamHttp:
    """A minimal Seam HTTP client: POST with a JSON body, which Seam (and the emulator) accept on every
    route.
    """

    def __init__(self, base_url: str, api_key: str, *, local: bool):
        self.base_url = base_url.rstrip("/")
        self.client = httpx.Client(
            base_url=self.base_url,
            headers={"authorization": f"Bearer {api_key}", "seam-sdk-name": "skillassay-sandbox"},
            timeout=30.0,
            trust_env=not local,
            verify=tls.context(not local),
        )
        self.calls: list[dict[str, Any]] = []  # route + status, for the evidence (never the key)

    def call(self, route: str, body: Mapping[str, Any] | None = None, *, retries: int = 2) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                r = self.client.post("/" + route.lstrip("/"), json=dict(body or {}))
            except httpx.HTTPError as e:
                if attempt < retries:
                    attempt += 1
                    time.sleep(0.5 * attempt)
                    continue
                self.calls.append({"route": route, "status": None})
                raise SeamCallError(route, None, f"{type(e).__name__}: {e}") from e
            self.calls.append({"route": route, "status": r.status_code})
            if (r.status_code == 429 or r.status_code >= 500) and attempt < retries:
                attempt += 1
                time.sleep(0.5 * attempt)
                continue
            if r.status_code >= 400:
                raise SeamCallError(route, r.status_code, r.text)
            try:
                return r.json()
            except ValueError as e:
                raise SeamCallError(route, r.status_code, "non-JSON answer: " + r.text[:300]) from e

    def close(self) -> None:
        self.client.close()


class SeamSession(ABC):
    mode: str = "base"

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.spaces: list[SpaceInfo] = []
        self.uses_spaces = True  # False: the eval's path needs no spaces, so none were created
        self.customer_key: str | None = None
        self.http: SeamHttp | None = None
        self.claimed_code_ids: set[str] = set()  # codes attributed to this run (clean-up in live mode)
        # the app's ids for this run's reservations (clean-up in live mode)
        self.reservation_ids: set[str] = set()
        # check_device "acs_entrance": the codes observed are PIN credentials on this entrance
        self.acs_entrance_id: str | None = None

    # the app's view
    @property
    @abstractmethod
    def endpoint(self) -> str: ...

    @property
    @abstractmethod
    def api_key(self) -> str: ...

    @property
    def spec_version(self) -> str | None:
        return None

    # ------------------------------------------------------------------ bootstrap
    @abstractmethod
    def device_pool(self, n: int) -> list[str]:
        """``n`` lock device ids that can hold access codes (fewer if the workspace has fewer)."""

    def bootstrap(self, wanted: list[WantedSpace], customer_key: str | None, *, spaces: bool = True) -> None:
        """Pick each wanted space's locks and, with ``spaces``, create the space in Seam. Without ``spaces``
        (an eval whose path needs none: access codes on a device) nothing is created; the wanted spaces only
        name the locks the app is given, and clean-up has no space or customer data to remove."""
        assert self.http is not None
        self.customer_key = customer_key
        self.uses_spaces = spaces
        pool = self.device_pool(sum(max(1, w.devices) for w in wanted))
        if not pool:
            raise InfrastructureError(
                f"Seam ({self.mode}): the workspace has no lock that can hold access codes"
            )
        i = 0
        for w in wanted:
            ids = []
            for _ in range(max(1, w.devices)):
                ids.append(pool[i % len(pool)])  # reuse devices if the workspace has too few
                i += 1
            if not spaces:
                self.spaces.append(SpaceInfo(w.space_key, w.name, None, ids, created=False))
                continue
            body = {"name": w.name, "space_key": w.space_key, "device_ids": ids}
            try:
                space = self.http.call("spaces/create", body).get("space", {})
                self.spaces.append(SpaceInfo(w.space_key, w.name, space.get("space_id"), ids))
            except SeamCallError as e:
                existing = self._existing_space(w.space_key) if e.status and e.status < 500 else None
                if existing is None:
                    raise
                # a shared sandbox may hold the key already: use it, make sure our lock is on it, never delete
                # it
                ids = list(dict.fromkeys(existing.get("device_ids") or [])) or ids
                self.http.call("spaces/add_devices", {"space_id": existing["space_id"], "device_ids": ids})
                self.spaces.append(SpaceInfo(w.space_key, w.name, existing["space_id"], ids, created=False))

    def watch_acs_entrance(self) -> dict[str, str]:
        """Observe PIN credentials on the first entrance (one that takes codes) of the workspace's first
        access system, instead of codes on locks; its ids as template variables."""
        assert self.http is not None
        for system in self.http.call("acs/systems/list", {}).get("acs_systems", []):
            entrances = self.http.call("acs/entrances/list", {"acs_system_id": system["acs_system_id"]})
            for entrance in entrances.get("acs_entrances", []):
                if entrance.get("can_unlock_with_code", True):
                    self.acs_entrance_id = entrance["acs_entrance_id"]
                    return {"ACS_SYSTEM_ID": system["acs_system_id"], "ACS_ENTRANCE_ID": self.acs_entrance_id}
        raise InfrastructureError(f"Seam ({self.mode}): the workspace has no ACS entrance that takes codes")

    def _existing_space(self, space_key: str) -> dict[str, Any] | None:
        assert self.http is not None
        try:
            spaces = self.http.call("spaces/list", {}).get("spaces", [])
        except SeamCallError:
            return None
        return next((s for s in spaces if s.get("space_key") == space_key), None)

    def device_ids(self) -> list[str]:
        return list(dict.fromkeys(d for s in self.spaces for d in s.device_ids))

    def annotate(self, codes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Code summaries for the evidence, each with the space(s) its device belongs to (``space_keys``)."""
        out = []
        for code in summaries(codes):
            keys = [s.space_key for s in self.spaces if code.get("device_id") in s.device_ids]
            if keys:
                code["space_keys"] = keys
            out.append(code)
        return out

    def grants(self) -> list[dict[str, Any]] | None:
        """The access grants on this run's spaces (what Seam turned the app's data into), where known."""
        return None

    # ------------------------------------------------------------------ observing
    @abstractmethod
    def codes(self, device_ids: list[str]) -> list[dict[str, Any]]:
        """Access codes on these devices, as Seam reports them now."""

    @abstractmethod
    def wait(
        self,
        device_ids: list[str],
        predicate: Callable[[list[dict[str, Any]]], T],
        timeout: float,
        quiet_after: float | None = None,
        since: Any = None,
        fail_grace: float | None = None,
    ) -> T | None:
        """Wait until ``predicate(codes)`` is truthy and return it. Raises TimeoutError.

        Emulator only (it sees the app's requests), measured from marker ``since``: return None early when the
        app sent Seam no request at all for ``quiet_after`` seconds (no code can come); raise
        ``SeamRequestsFailed`` when every request the app sent failed and it sent none for ``fail_grace``
        seconds after the last answer; raise ``SeamSettled`` when they were all answered, Seam has nothing
        scheduled that falls due before the limit, and the app sent nothing for ``quiet_after`` seconds after
        the last answer.
        """

    def marker(self) -> Any:
        """An opaque 'now' for ``wait(since=...)``."""
        return None

    def app_requests(self, since: Any, until: float | None = None) -> list[dict[str, Any]] | None:
        """The Seam requests the app sent since the marker (``request_summary``), and before ``until``
        (time.monotonic()) when given, where known."""
        return None

    def trace(self, origin: TraceOrigin | None, windows: list[EndpointWindow]) -> SeamTrace | None:
        """Every request the app sent Seam since ``origin``, attributed to ``windows``, where known."""
        return None

    def trace_origin(self) -> TraceOrigin | None:
        return None

    def allow_webhooks_to(self, app_url: str) -> None:  # noqa: B027 - a no-op where no webhooks are delivered
        """The app under test listens at ``app_url``: the only place its Seam webhooks may be delivered
        (emulator).
        """

    def cleanup(self) -> None:
        if self.http is not None:
            self.http.close()

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "endpoint": self.endpoint,
            "spaces": [s.__dict__ for s in self.spaces],
            "spaces_created": self.uses_spaces,
            "customer_key": self.customer_key,
            "spec_version": self.spec_version,
        }


# ============================================================================ emulator
def _devices_of(ws: Any) -> list[Mapping[str, Any]]:
    devices = getattr(ws, "devices", None) or []
    return list(devices.values()) if isinstance(devices, Mapping) else list(devices)


def _codes_of(snapshot: Any) -> list[Mapping[str, Any]]:
    codes = (
        snapshot["access_codes"] if isinstance(snapshot, Mapping) else getattr(snapshot, "access_codes", ())
    )
    return list(codes.values()) if isinstance(codes, Mapping) else list(codes)


def _version_of(snapshot: Any) -> Any:
    return snapshot.get("version") if isinstance(snapshot, Mapping) else getattr(snapshot, "version", None)


def can_hold_codes(device: Mapping[str, Any]) -> bool:
    caps = device.get("capabilities_supported")
    if caps is not None:
        return "access_code" in caps
    return bool(device.get("can_program_online_access_codes", True))


class EmulatorSession(SeamSession):
    mode = "emulator"

    def __init__(self, emulator: SeamEmulator, run_id: str):
        super().__init__(run_id)
        self.emu = emulator
        self.ws = emulator.create_workspace(name=f"run-{run_id}")
        # The emulator posts webhooks from the harness's process: none at all until the app's own address is
        # known.
        emulator.limit_webhooks(self.ws.workspace_id, [])
        self.http = SeamHttp(emulator.base_url, self.ws.api_key, local=True)

    @property
    def endpoint(self) -> str:
        return self.emu.base_url

    @property
    def api_key(self) -> str:
        return self.ws.api_key

    @property
    def spec_version(self) -> str | None:
        return getattr(self.emu, "spec_version", None)

    @property
    def workspace_id(self) -> str:
        return self.ws.workspace_id

    def device_pool(self, n: int) -> list[str]:
        return [d["device_id"] for d in _devices_of(self.ws) if can_hold_codes(d)][:n]

    def allow_webhooks_to(self, app_url: str) -> None:
        self.emu.limit_webhooks(self.workspace_id, [app_url])

    def _observed(self, snapshot: Any) -> list[Mapping[str, Any]]:
        """The access codes on the locks, or the PIN credentials when an ACS entrance is watched: what Seam
        manages, and what it forgot but the locks still hold (an account deleted, a device unmanaged), so an
        app cannot pass the cancel by making Seam forget a code it never removed."""
        if self.acs_entrance_id is None:
            return [*_codes_of(snapshot), *getattr(snapshot, "forgotten_codes", ())]
        entrances = getattr(snapshot, "acs_credential_entrances", {})
        held = (*getattr(snapshot, "acs_credentials", ()), *getattr(snapshot, "forgotten_credentials", ()))
        return list(credential_codes(held, entrances))

    def codes(self, device_ids: list[str]) -> list[dict[str, Any]]:
        wanted = set(device_ids)
        snapshot = self.emu.state(self.workspace_id)
        return [dict(c) for c in self._observed(snapshot) if c.get("device_id") in wanted]

    def _requests_after(self, seq: int) -> list[Any]:
        # The emulator keeps each workspace's own request log: another run's flood can never push ours out.
        return [r for r in self.emu.requests(self.workspace_id) if r.seq > seq]

    def marker(self) -> Any:
        log = self.emu.requests(self.workspace_id)
        return (_version_of(self.emu.state(self.workspace_id)), log[-1].seq if log else 0, time.monotonic())

    def app_requests(self, since: Any, until: float | None = None) -> list[dict[str, Any]] | None:
        sent = self._requests_after(since[1])
        return [request_summary(r, since[2]) for r in sent if until is None or r.at <= until]

    def trace_origin(self) -> TraceOrigin | None:
        log = self.emu.requests(self.workspace_id)
        return TraceOrigin(
            seq=log[-1].seq if log else 0,
            logged=self.emu.requests_logged(self.workspace_id),
            at=time.monotonic(),
        )

    def trace(self, origin: TraceOrigin | None, windows: list[EndpointWindow]) -> SeamTrace | None:
        if origin is None:
            return None
        logged = self.emu.requests_logged(self.workspace_id)
        kept = self._requests_after(origin.seq)
        return build_trace(kept, windows, origin.at, dropped=logged - origin.logged - len(kept))

    def wait(self, device_ids, predicate, timeout, quiet_after=None, since=None, fail_grace=None):
        wanted = set(device_ids)

        def on(snapshot: Any) -> Any:
            return predicate([dict(c) for c in self._observed(snapshot) if c.get("device_id") in wanted])

        t0 = time.monotonic()
        watch = since is not None and (quiet_after is not None or fail_grace is not None)
        while True:
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                raise TimeoutError(f"condition not met within {timeout} s")
            try:  # wakes on every change of the workspace; the slices let the app's requests be looked at
                return self.emu.wait_for(self.workspace_id, on, timeout=min(0.25, left) if watch else left)
            except TimeoutError:
                pass
            if not watch:
                continue
            sent = self._requests_after(since[1])
            now = time.monotonic()
            if not sent:
                # the app sent Seam nothing at all since the request: no code can come
                if quiet_after is not None and now - t0 >= quiet_after and quiet_after < timeout:
                    return None
                continue
            if any(r.status is None for r in sent):
                continue  # the emulator is still answering
            last = max(r.answered_at or r.at for r in sent)
            if fail_grace is not None and all(r.status >= 400 for r in sent):
                # every request it sent failed, and it sent no other for a while: nothing is on its way
                if now - last >= fail_grace:
                    raise SeamRequestsFailed([request_summary(r, since[2]) for r in sent])
            elif (
                quiet_after is not None
                and now - last >= quiet_after
                and quiet_after < timeout
                and not self.emu.due_within(self.workspace_id, max(0.0, timeout - (now - t0)))
            ):
                # answered, nothing scheduled in Seam, and the app quiet: nothing will change any more
                raise SeamSettled([request_summary(r, since[2]) for r in sent])

    def annotate(self, codes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = super().annotate(codes)
        links = getattr(self.emu.state(self.workspace_id), "access_code_links", None) or {}
        for code in out:
            link = links.get(code.get("access_code_id"), {})
            for key in ("access_grant_id", "reservation_key", "customer_key"):
                if link.get(key):
                    code[key] = link[key]
        return out

    def grants(self) -> list[dict[str, Any]] | None:
        snapshot = self.emu.state(self.workspace_id)
        keys = {s.space_id: s.space_key for s in self.spaces if s.space_id}
        out = []
        for grant in getattr(snapshot, "access_grants", ()):
            spaces = [keys[i] for i in grant.get("space_ids") or [] if i in keys]
            if not spaces:
                continue
            item = {
                k: grant.get(k)
                for k in ("access_grant_id", "reservation_key", "access_grant_key", "starts_at", "ends_at")
                if grant.get(k) is not None
            }
            item["space_keys"] = spaces
            out.append(item)
        return out

    def cleanup(self) -> None:
        try:
            delete = getattr(self.emu, "delete_workspace", None)
            if delete is not None:  # a shared emulator must not grow with every validation
                delete(self.workspace_id)
        finally:
            super().cleanup()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "workspace_id": self.workspace_id}


# ============================================================================ live
class LiveSession(SeamSession):
    """Seam's sandbox through HTTP only. Also pointed at the emulator in tests: the same code path,
    offline.
    """

    mode = "live"

    def __init__(
        self,
        run_id: str,
        api_key: str,
        endpoint: str | None = None,
        *,
        poll_min: float = 0.5,
        poll_max: float = 5.0,
    ):
        super().__init__(run_id)
        self._endpoint = (endpoint or LIVE_ENDPOINT).rstrip("/")
        self._key = api_key
        local = any(h in self._endpoint for h in ("://127.0.0.1", "://localhost"))
        self.http = SeamHttp(self._endpoint, api_key, local=local)
        self.poll_min, self.poll_max = poll_min, poll_max
        self.cleanup_log: list[dict[str, Any]] = []

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def api_key(self) -> str:
        return self._key

    def device_pool(self, n: int) -> list[str]:
        assert self.http is not None
        devices = self.http.call("devices/list", {}).get("devices", [])
        return [d["device_id"] for d in devices if can_hold_codes(d)][:n]

    def codes(self, device_ids: list[str]) -> list[dict[str, Any]]:
        assert self.http is not None
        out: list[dict[str, Any]] = []
        for d in device_ids:
            if self.acs_entrance_id is not None:
                body = {"acs_entrance_id": d}
                found = self.http.call("acs/entrances/list_credentials_with_access", body)
                credentials = found.get("acs_credentials", [])
                opens = {c.get("acs_credential_id"): [d] for c in credentials}
                out.extend(credential_codes(credentials, opens))
            else:
                out.extend(self.http.call("access_codes/list", {"device_id": d}).get("access_codes", []))
        return out

    def wait(self, device_ids, predicate, timeout, quiet_after=None, since=None, fail_grace=None):
        deadline = time.monotonic() + timeout
        delay = self.poll_min
        while True:
            result = predicate(self.codes(device_ids))
            if result:
                return result
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError(f"condition not met within {timeout} s")
            time.sleep(min(delay, deadline - now))
            delay = min(delay * 1.6, self.poll_max)

    def cleanup(self) -> None:
        """Remove only this run's data: its customer when the key is run-scoped, else its reservations; the
        codes it claimed; the spaces it created. Never a whole customer or space another run may be using."""
        try:
            if self.http is None:
                return
            if not self.uses_spaces:
                pass  # no spaces: customer data the app pushed created nothing (push_data needs a space)
            elif self.customer_key and self.run_id in self.customer_key:
                self._try("customers/delete_data", {"customer_keys": [self.customer_key]})
            elif self.reservation_ids:
                self._try("customers/delete_data", {"reservation_keys": sorted(self.reservation_ids)})
            still = {c["access_code_id"] for c in self._safe_codes()}
            for code_id in sorted(self.claimed_code_ids & still):
                if self.acs_entrance_id is not None:
                    self._try("acs/credentials/delete", {"acs_credential_id": code_id})
                else:
                    self._try("access_codes/delete", {"access_code_id": code_id})
            for s in self.spaces:
                if s.space_id and s.created:
                    self._try("spaces/delete", {"space_id": s.space_id})
        finally:
            super().cleanup()

    def _safe_codes(self) -> list[dict[str, Any]]:
        watched = [self.acs_entrance_id] if self.acs_entrance_id is not None else self.device_ids()
        try:
            return self.codes(watched)
        except SeamCallError:
            return []

    def _try(self, route: str, body: dict[str, Any]) -> None:
        assert self.http is not None
        try:
            self.http.call(route, body)
            self.cleanup_log.append({"route": route, "body": body, "ok": True})
        except SeamCallError as e:
            self.cleanup_log.append({"route": route, "body": body, "ok": False, "error": str(e)})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "cleanup": self.cleanup_log}


def summaries(codes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [code_summary(c) for c in codes]
