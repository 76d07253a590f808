"""What Seam does behind the API: events, code programming delays, access grants and reservation automations.

Every function here is called with the workspace's lock held (the scheduler's callbacks take it themselves)
and leaves the workspace consistent. Codes go ``setting`` -> ``set`` and ``removing`` -> gone after
``async_delay``.
"""

from __future__ import annotations

import heapq
import itertools
import random
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from skillassay.seam.emulator.seed import is_lock_with_codes
from skillassay.seam.emulator.spec import parse_datetime
from skillassay.seam.emulator.store import Store, Workspace, new_id, now_iso, public_copy, to_iso
from skillassay.seam.emulator.webhooks import Delivery, WebhookDispatcher, origin, wants

# push_data: list name -> key field, for places (all become spaces) and people (all become user identities)
PLACE_LISTS = {
    "spaces": "space_key",
    "sites": "site_key",
    "properties": "property_key",
    "rooms": "room_key",
    "common_areas": "common_area_key",
    "units": "unit_key",
    "facilities": "facility_key",
    "buildings": "building_key",
    "listings": "listing_key",
    "property_listings": "property_listing_key",
}
PEOPLE_LISTS = {
    "user_identities": "user_identity_key",
    "guests": "guest_key",
    "tenants": "tenant_key",
    "residents": "resident_key",
    "users": "user_key",
    "staff_members": "staff_member_key",
}
GRANT_LISTS = {
    "reservations": "reservation_key",
    "bookings": "booking_key",
    "access_grants": "access_grant_key",
}
PLACE_KEY_ARRAYS = [f"{k[:-4]}_keys" for k in PLACE_LISTS.values()]  # space_keys, site_keys, ...
PERSON_KEYS = list(PEOPLE_LISTS.values())


class Scheduler:
    """Runs callbacks after a delay on one background thread (a heap and a condition, no thread per timer)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="seam-emulator-scheduler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        due = time.monotonic() + max(0.0, delay)
        with self._cond:
            # The thread sleeps until the earliest task: only a new earliest one needs it awake (a wake-up
            # per task cost a thread switch per request).
            earliest = not self._heap or due < self._heap[0][0]
            heapq.heappush(self._heap, (due, next(self._seq), fn))
            if earliest:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and (not self._heap or self._heap[0][0] > time.monotonic()):
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                _, _, fn = heapq.heappop(self._heap)
            try:
                fn()
            except Exception:  # a failing callback must not kill the clock of every workspace
                import logging

                logging.getLogger(__name__).exception("seam emulator scheduled task failed")


def norm_time(value: str | None) -> str | None:
    return to_iso(parse_datetime(value)) if value else None


def event_description(event_type: str) -> str:
    """A one-line account of an event, as Seam's events carry one: ``access_code.set_on_device`` ->
    "Access code set on device."."""
    resource, _, what = event_type.partition(".")
    text = f"{resource} {what}".replace("_", " ").strip()
    return text[:1].upper() + text[1:] + "."


class Engine:
    def __init__(
        self,
        store: Store,
        scheduler: Scheduler,
        dispatcher: WebhookDispatcher,
        async_delay: float = 1.0,
        automation_delay: float = 0.0,
    ):
        self.store = store
        self.scheduler = scheduler
        self.dispatcher = dispatcher
        self.async_delay = async_delay
        self.automation_delay = automation_delay
        self._random = random.Random()

    # -- events ---------------------------------------------------------------------------------------
    def emit(self, ws: Workspace, event_type: str, **fields: Any) -> dict:
        ts = now_iso()
        event = {
            "event_id": new_id(),
            "event_type": event_type,
            "workspace_id": ws.workspace_id,
            "created_at": ts,
            "occurred_at": ts,
            "event_description": event_description(event_type),
            **fields,
        }
        ws.events.append(event)
        for hook in ws.webhooks.values():
            if wants(hook.get("event_types"), event_type):
                delivery = Delivery(
                    hook["url"], hook["secret"], dict(event), hook["webhook_id"], ws.workspace_id
                )
                if ws.webhook_origins is not None and origin(hook["url"]) not in ws.webhook_origins:
                    # the emulator posts from the harness's process: only where the harness let this workspace
                    # reach
                    self.dispatcher.refuse(
                        delivery, "not delivered: the URL is not an origin this workspace may reach"
                    )
                else:
                    self.dispatcher.submit(delivery)
        return event

    def _code_event(self, ws: Workspace, event_type: str, code: dict, with_code: bool = False) -> None:
        device = ws.devices.get(code["device_id"], {})
        fields: dict[str, Any] = {
            "access_code_id": code["access_code_id"],
            "device_id": code["device_id"],
            "connected_account_id": device.get("connected_account_id"),
        }
        if with_code:
            fields["code"] = code.get("code")
        self.emit(ws, event_type, **fields)

    def later(self, ws: Workspace, fn: Callable[[Workspace], None], delay: float | None = None) -> None:
        wid = ws.workspace_id
        wait = self.async_delay if delay is None else delay
        token = ws.schedule(time.monotonic() + max(0.0, wait))  # the harness asks what is still due

        def run() -> None:
            target = self.store.workspaces.get(wid)
            if target is None:
                return
            try:
                with target.lock:
                    if not target.deleted:
                        fn(target)
                        self.store.touch(target)
            finally:
                target.unschedule(token)

        self.scheduler.call_later(wait, run)

    # -- action attempts --------------------------------------------------------------------------------
    def action_attempt(self, ws: Workspace, action_type: str) -> dict:
        attempt: dict[str, Any] = {
            "action_attempt_id": new_id(),
            "action_type": action_type,
            "status": "pending",
            "result": None,
            "error": None,
        }
        ws.action_attempts[attempt["action_attempt_id"]] = attempt
        return attempt

    @staticmethod
    def _finish_attempt(ws: Workspace, attempt_id: str | None, result: dict) -> None:
        attempt = ws.action_attempts.get(attempt_id or "")
        if attempt and attempt["status"] == "pending":
            attempt.update(status="success", result=result, error=None)

    # -- access codes -------------------------------------------------------------------------------------
    def generate_code(self, ws: Workspace, device_ids: list[str], length: int = 4) -> str:
        taken = {c.get("code") for c in ws.access_codes.values() if c["device_id"] in device_ids}
        while True:
            code = "".join(self._random.choice("0123456789") for _ in range(length))
            if code not in taken and len(set(code)) > 1:
                return code

    @staticmethod
    def code_fields(
        ws: Workspace, device: dict, *, name: str | None, code: str, kind: str, status: str
    ) -> dict:
        """The public fields every access code answers with, new and unmanaged by any automation."""
        return {
            "access_code_id": new_id(),
            "device_id": device["device_id"],
            "workspace_id": ws.workspace_id,
            "name": name,
            "code": code,
            "common_code_key": None,
            "type": kind,
            "status": status,
            "created_at": now_iso(),
            "errors": [],
            "warnings": [],
            "is_managed": True,
            "is_backup_access_code_available": False,
            "is_external_modification_allowed": False,
            "is_one_time_use": False,
            "is_offline_access_code": False,
            "pending_mutations": [],
        }

    def create_code(
        self,
        ws: Workspace,
        device: dict,
        *,
        name: str | None,
        code: str | None,
        starts_at: str | None,
        ends_at: str | None,
        grant_id: str | None = None,
        method_id: str | None = None,
        attempt_id: str | None = None,
        extra: dict | None = None,
    ) -> dict:
        record = {
            **self.code_fields(
                ws,
                device,
                name=name,
                code=code or self.generate_code(ws, [device["device_id"]]),
                kind="time_bound" if (starts_at or ends_at) else "ongoing",
                status="setting",
            ),
            "is_scheduled_on_device": False,
            "is_waiting_for_code_assignment": False,
            "_gen": 0,
            "_access_grant_id": grant_id,
            "_access_method_id": method_id,
            "_attempt_id": attempt_id,
        }
        if starts_at or ends_at:
            record["starts_at"] = starts_at
            record["ends_at"] = ends_at
        record.update(extra or {})
        ws.access_codes[record["access_code_id"]] = record
        self._code_event(ws, "access_code.created", record)
        self._schedule_set(ws, record)
        return record

    def _schedule_expiry(self, ws: Workspace, code: dict) -> None:
        """Seam removes a time-bound code from the lock when its ``ends_at`` passes. One timer a code at a
        time (pushes that move a reservation's end again and again left a timer for each end, held until it
        fell due, years on): an end later than the pending timer's waits for it, and it looks again when it
        fires."""
        if not code.get("ends_at"):
            return
        ends = parse_datetime(code["ends_at"])
        pending = code.get("_expires_at")
        if pending is not None and pending <= ends.timestamp():
            return
        code["_expires_at"] = due = ends.timestamp()
        code_id = code["access_code_id"]

        def expire(target: Workspace) -> None:
            current = target.access_codes.get(code_id)
            if current is None:
                return
            if current.get("_expires_at") == due:
                current["_expires_at"] = None  # this was the pending timer
            if not current.get("ends_at") or current["status"] == "removing":
                return
            if parse_datetime(current["ends_at"]) <= utcnow():
                self.remove_code(target, current)
            else:  # its end moved later meanwhile
                self._schedule_expiry(target, current)

        self.later(ws, expire, max(0.0, (ends - utcnow()).total_seconds()))

    def _schedule_set(self, ws: Workspace, code: dict) -> None:
        self._schedule_expiry(ws, code)
        code["_gen"] += 1
        gen, code_id = code["_gen"], code["access_code_id"]

        def finish(target: Workspace) -> None:
            current = target.access_codes.get(code_id)
            if current is None or current["_gen"] != gen or current["status"] != "setting":
                return
            current["status"] = "set"
            if current["type"] == "time_bound":
                current["is_scheduled_on_device"] = True
            self._code_event(target, "access_code.set_on_device", current, with_code=True)
            attempt_id = current.pop("_attempt_id", None)
            self._finish_attempt(target, attempt_id, {"access_code": public_copy(current)})
            self._maybe_issue(target, current.get("_access_method_id"))

        self.later(ws, finish)

    def update_code(self, ws: Workspace, code: dict, changes: dict, attempt_id: str | None = None) -> None:
        before = (code.get("name"), code.get("code"), code.get("starts_at"), code.get("ends_at"))
        code.update(changes)
        if "starts_at" in changes or "ends_at" in changes:
            code["type"] = "time_bound" if (code.get("starts_at") or code.get("ends_at")) else "ongoing"
            if code["type"] == "ongoing":
                code.pop("starts_at", None)
                code.pop("ends_at", None)
        after = (code.get("name"), code.get("code"), code.get("starts_at"), code.get("ends_at"))
        if attempt_id:
            code["_attempt_id"] = attempt_id
        if before == after and not attempt_id:
            return
        if before != after:
            self._code_event(ws, "access_code.changed", code)
        # Reprogramming the lock: back to setting, then set after the delay.
        code["status"] = "setting"
        code["is_scheduled_on_device"] = False
        self._schedule_set(ws, code)

    def remove_code(self, ws: Workspace, code: dict, attempt_id: str | None = None) -> None:
        if code["status"] == "removing":
            if attempt_id:
                self._finish_attempt(ws, attempt_id, {})
            return
        code["status"] = "removing"
        code["_gen"] += 1
        gen, code_id = code["_gen"], code["access_code_id"]

        def finish(target: Workspace) -> None:
            current = target.access_codes.get(code_id)
            if current is None or current["_gen"] != gen:
                return
            del target.access_codes[code_id]
            self._code_event(target, "access_code.removed_from_device", current)
            self._code_event(target, "access_code.deleted", current, with_code=True)
            self._finish_attempt(target, attempt_id, {})

        self.later(ws, finish)

    # -- access grants and methods --------------------------------------------------------------------------
    def grant_devices(self, ws: Workspace, grant: dict) -> list[dict]:
        ids: list[str] = list(grant.get("_device_ids", []))
        for space_id in grant.get("space_ids", []):
            space = ws.spaces.get(space_id)
            if space:
                ids.extend(space.get("_device_ids", []))
        seen: set[str] = set()
        devices = []
        for device_id in ids:
            device = ws.devices.get(device_id)
            if device and device_id not in seen and is_lock_with_codes(device):
                seen.add(device_id)
                devices.append(device)
        return devices

    def create_grant(
        self,
        ws: Workspace,
        *,
        user_identity_id: str,
        space_ids: list[str],
        device_ids: list[str],
        requested_access_methods: list[dict],
        starts_at: str | None,
        ends_at: str | None,
        name: str | None,
        reservation_key: str | None = None,
        access_grant_key: str | None = None,
        customer_key: str | None = None,
        push_key: str | None = None,
    ) -> dict:
        identity = ws.user_identities.get(user_identity_id, {})
        grant_id = new_id()
        display = name or identity.get("full_name") or identity.get("email_address") or "Access Grant"
        grant: dict[str, Any] = {
            "access_grant_id": grant_id,
            "workspace_id": ws.workspace_id,
            "user_identity_id": user_identity_id,
            "location_ids": list(space_ids),
            "space_ids": list(space_ids),
            "requested_access_methods": [],
            "access_method_ids": [],
            "name": name,
            "display_name": display,
            "created_at": now_iso(),
            "starts_at": starts_at or now_iso(),
            "ends_at": ends_at,
            "warnings": [],
            "errors": [],
            "pending_mutations": [],
            "_device_ids": list(device_ids),
            "_customer_key": customer_key,
            "_push_key": push_key,
        }
        if reservation_key:
            grant["reservation_key"] = reservation_key
        if access_grant_key:
            grant["access_grant_key"] = access_grant_key
        ws.access_grants[grant_id] = grant
        if push_key:
            ws.push_grants[push_key] = grant_id
        self.emit(ws, "access_grant.created", access_grant_id=grant_id)
        for requested in requested_access_methods:
            mode = requested["mode"]
            method_id = new_id()
            method = {
                "access_method_id": method_id,
                "workspace_id": ws.workspace_id,
                "display_name": {
                    "code": "PIN Code",
                    "card": "Card",
                    "mobile_key": "Mobile Key",
                    "cloud_key": "Cloud Key",
                }[mode],
                "mode": mode,
                "created_at": now_iso(),
                "issued_at": None,
                "is_issued": False,
                "warnings": [],
                "errors": [],
                "pending_mutations": [],
                "_access_grant_id": grant_id,
            }
            if mode == "code":
                device_ids_now = [d["device_id"] for d in self.grant_devices(ws, grant)]
                method["code"] = requested.get("code") or self.generate_code(ws, device_ids_now)
            ws.access_methods[method_id] = method
            grant["access_method_ids"].append(method_id)
            grant["requested_access_methods"].append(
                {
                    "mode": mode,
                    "display_name": method["display_name"],
                    "created_at": method["created_at"],
                    "created_access_method_ids": [method_id],
                    **({"code": requested["code"]} if requested.get("code") else {}),
                }
            )
        self.sync_grant(ws, grant)
        return grant

    def sync_grant(self, ws: Workspace, grant: dict) -> None:
        """Make the grant's codes match its locks and times: issue missing, remove extra, follow times."""
        devices = self.grant_devices(ws, grant)
        wanted = {d["device_id"]: d for d in devices}
        for method_id in grant["access_method_ids"]:
            method = ws.access_methods.get(method_id)
            if not method or method["mode"] != "code":
                continue
            existing = {
                c["device_id"]: c
                for c in ws.access_codes.values()
                if c.get("_access_method_id") == method_id and c["status"] != "removing"
            }
            starts_at = grant.get("starts_at") if grant.get("ends_at") else None
            ends_at = grant.get("ends_at")
            for device_id, code in existing.items():
                if device_id not in wanted:
                    self.remove_code(ws, code)
                elif (code.get("starts_at"), code.get("ends_at")) != (starts_at, ends_at):
                    self.update_code(ws, code, {"starts_at": starts_at, "ends_at": ends_at})
            for device_id, device in wanted.items():
                if device_id not in existing:
                    self.create_code(
                        ws,
                        device,
                        name=grant["display_name"],
                        code=method.get("code"),
                        starts_at=starts_at,
                        ends_at=ends_at,
                        grant_id=grant["access_grant_id"],
                        method_id=method_id,
                    )
            self._maybe_issue(ws, method_id)

    def _maybe_issue(self, ws: Workspace, method_id: str | None) -> None:
        method = ws.access_methods.get(method_id or "")
        if not method or method["is_issued"]:
            return
        codes = [c for c in ws.access_codes.values() if c.get("_access_method_id") == method_id]
        if codes and all(c["status"] == "set" for c in codes):
            method["is_issued"] = True
            method["issued_at"] = now_iso()
            self.emit(
                ws,
                "access_method.issued",
                access_method_id=method_id,
                access_grant_ids=[method["_access_grant_id"]],
                code=method.get("code"),
            )

    def update_grant_times(
        self, ws: Workspace, grant: dict, starts_at: str | None, ends_at: str | None, name: str | None = None
    ) -> None:
        changed = False
        if starts_at and starts_at != grant["starts_at"]:
            grant["starts_at"], changed = starts_at, True
        if ends_at is not None and ends_at != grant.get("ends_at"):
            grant["ends_at"], changed = ends_at, True
        if name is not None and name != grant.get("name"):
            grant["name"] = name
            grant["display_name"] = name
        if changed:
            self.emit(ws, "access_grant.access_times_changed", access_grant_id=grant["access_grant_id"])
        self.sync_grant(ws, grant)

    def delete_grant(self, ws: Workspace, grant: dict) -> None:
        grant_id = grant["access_grant_id"]
        ws.access_grants.pop(grant_id, None)
        self.emit(ws, "access_grant.deleted", access_grant_id=grant_id)
        for method_id in grant["access_method_ids"]:
            method = ws.access_methods.pop(method_id, None)
            if method:
                self.emit(
                    ws, "access_method.deleted", access_method_id=method_id, access_grant_ids=[grant_id]
                )
        for code in ws.codes_of_grant(grant_id):
            self.remove_code(ws, code)

    # -- spaces ------------------------------------------------------------------------------------
    def create_space(
        self,
        ws: Workspace,
        name: str,
        space_key: str | None = None,
        customer_key: str | None = None,
        pushed: bool = False,
    ) -> dict:
        space: dict[str, Any] = {
            "space_id": new_id(),
            "workspace_id": ws.workspace_id,
            "name": name,
            "display_name": name,
            "created_at": now_iso(),
            "device_count": 0,
            "acs_entrance_count": 0,
            "_device_ids": [],
            "_customer_key": customer_key if pushed else None,
        }
        if space_key:
            space["space_key"] = space_key
        if customer_key:
            space["customer_key"] = customer_key
        ws.spaces[space["space_id"]] = space
        return space

    def set_space_devices(
        self, ws: Workspace, space: dict, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> None:
        ids = [d for d in space["_device_ids"] if d not in set(remove)]
        for device_id in add:
            if device_id not in ids:
                ids.append(device_id)
        space["_device_ids"] = ids
        space["device_count"] = len(ids)
        for device in ws.devices.values():
            in_space = device["device_id"] in ids
            listed = space["space_id"] in device["space_ids"]
            if in_space and not listed:
                device["space_ids"].append(space["space_id"])
            elif listed and not in_space:
                device["space_ids"].remove(space["space_id"])
        for grant in list(ws.access_grants.values()):
            if space["space_id"] in grant["space_ids"]:
                self.sync_grant(ws, grant)

    def delete_space(self, ws: Workspace, space: dict) -> None:
        self.set_space_devices(ws, space, remove=list(space["_device_ids"]))
        ws.spaces.pop(space["space_id"], None)
        for grant in list(ws.access_grants.values()):
            if space["space_id"] in grant["space_ids"]:
                grant["space_ids"].remove(space["space_id"])
                grant["location_ids"] = list(grant["space_ids"])
                self.sync_grant(ws, grant)

    # -- user identities ---------------------------------------------------------------------------
    def create_user_identity(
        self,
        ws: Workspace,
        *,
        key: str | None,
        full_name: str | None,
        email: str | None,
        phone: str | None,
        customer_key: str | None = None,
    ) -> dict:
        ui: dict[str, Any] = {
            "user_identity_id": new_id(),
            "user_identity_key": key,
            "email_address": email,
            "phone_number": phone,
            "full_name": full_name,
            # never empty (the spec's minLength 1): an identity created with nothing to show gets a
            # placeholder
            "display_name": full_name or email or phone or key or "Unnamed user",
            "created_at": now_iso(),
            "workspace_id": ws.workspace_id,
            "errors": [],
            "warnings": [],
            "acs_user_ids": [],
            "_customer_key": customer_key,
        }
        ws.user_identities[ui["user_identity_id"]] = ui
        return ui

    def delete_user_identity(self, ws: Workspace, ui: dict) -> None:
        for grant in list(ws.access_grants.values()):
            if grant["user_identity_id"] == ui["user_identity_id"]:
                self.delete_grant(ws, grant)
        ws.user_identities.pop(ui["user_identity_id"], None)

    # -- reservation automations (customers/push_data, customers/delete_data) ----------------------
    def push_data(self, ws: Workspace, params: dict) -> None:
        if self.automation_delay > 0:
            # Seam applies pushed data asynchronously; the answer comes first.
            self.later(ws, lambda target: self._apply_push(target, params), self.automation_delay)
        else:
            self._apply_push(ws, params)

    def _apply_push(self, ws: Workspace, params: dict) -> None:
        customer_key = params["customer_key"]
        ws.customers.setdefault(
            customer_key,
            {"customer_key": customer_key, "workspace_id": ws.workspace_id, "created_at": now_iso()},
        )
        for list_name, key_field in PLACE_LISTS.items():
            for place in params.get(list_name) or []:
                key = place[key_field]
                space = ws.space_by_key(key)
                if space is None:
                    self.create_space(ws, place.get("name") or key, key, customer_key, pushed=True)
                elif place.get("name"):
                    space["name"] = space["display_name"] = place["name"]
        for list_name, key_field in PEOPLE_LISTS.items():
            for person in params.get(list_name) or []:
                key = person[key_field]
                email = person.get("email_address")
                ui = ws.user_identity_by_key(key)
                if ui is None:
                    if email and any(u.get("email_address") == email for u in ws.user_identities.values()):
                        continue  # duplicate email: Seam drops it without an error
                    self.create_user_identity(
                        ws,
                        key=key,
                        full_name=person.get("name"),
                        email=email,
                        phone=person.get("phone_number"),
                        customer_key=customer_key,
                    )
                else:
                    ui.update(
                        full_name=person.get("name") or ui["full_name"],
                        display_name=person.get("name") or ui["display_name"],
                        phone_number=person.get("phone_number") or ui["phone_number"],
                    )
                    if email and not any(
                        u.get("email_address") == email and u is not ui for u in ws.user_identities.values()
                    ):
                        ui["email_address"] = email
        for list_name, key_field in GRANT_LISTS.items():
            for item in params.get(list_name) or []:
                self._apply_pushed_grant(ws, customer_key, list_name, key_field, item)

    def _apply_pushed_grant(
        self, ws: Workspace, customer_key: str, list_name: str, key_field: str, item: dict
    ) -> None:
        key = item[key_field]
        push_key = f"{list_name}:{key}"
        starts_at = norm_time(item.get("starts_at"))
        ends_at = norm_time(item.get("ends_at"))
        spaces = []
        for array in PLACE_KEY_ARRAYS:
            for place_key in item.get(array) or []:
                space = ws.space_by_key(place_key)
                if space is not None and space not in spaces:
                    spaces.append(space)
        existing = ws.grant_by_push_key(push_key)
        if existing is not None:
            existing["space_ids"] = [s["space_id"] for s in spaces]
            existing["location_ids"] = list(existing["space_ids"])
            self.update_grant_times(ws, existing, starts_at, ends_at, item.get("name"))
            return
        # Unknown spaces or spaces without a lock: Seam answers ok and creates nothing.
        if not any(
            is_lock_with_codes(ws.devices[d]) for s in spaces for d in s["_device_ids"] if d in ws.devices
        ):
            return
        person_key = next((item[k] for k in PERSON_KEYS if item.get(k)), None)
        ui = ws.user_identity_by_key(person_key) if person_key else None
        if ui is None:
            if person_key:
                # A person key that was never pushed: only silently dropped if its email collided.
                ui = self.create_user_identity(
                    ws, key=person_key, full_name=None, email=None, phone=None, customer_key=customer_key
                )
            else:
                ui = self.create_user_identity(
                    ws,
                    key=None,
                    full_name=item.get("name"),
                    email=None,
                    phone=None,
                    customer_key=customer_key,
                )
        requested = {"mode": "code"}
        if item.get("preferred_code"):
            requested["code"] = item["preferred_code"]
        self.create_grant(
            ws,
            user_identity_id=ui["user_identity_id"],
            space_ids=[s["space_id"] for s in spaces],
            device_ids=[],
            requested_access_methods=[requested],
            starts_at=starts_at,
            ends_at=ends_at,
            name=item.get("name"),
            reservation_key=key if list_name in ("reservations", "bookings") else None,
            access_grant_key=key if list_name == "access_grants" else None,
            customer_key=customer_key,
            push_key=push_key,
        )

    def delete_data(self, ws: Workspace, params: dict) -> None:
        for list_name, key_field in GRANT_LISTS.items():
            for key in params.get(f"{key_field}s") or []:
                grant = ws.grant_by_push_key(f"{list_name}:{key}")
                if grant:
                    self.delete_grant(ws, grant)
        for key_field in PERSON_KEYS:
            for key in params.get(f"{key_field}s") or []:
                ui = ws.user_identity_by_key(key)
                if ui:
                    self.delete_user_identity(ws, ui)
        for array in PLACE_KEY_ARRAYS:
            for key in params.get(array) or []:
                space = ws.space_by_key(key)
                if space:
                    self.delete_space(ws, space)
        for customer_key in params.get("customer_keys") or []:
            for grant in [g for g in ws.access_grants.values() if g.get("_customer_key") == customer_key]:
                self.delete_grant(ws, grant)
            for ui in [u for u in ws.user_identities.values() if u.get("_customer_key") == customer_key]:
                self.delete_user_identity(ws, ui)
            for space in [s for s in ws.spaces.values() if s.get("_customer_key") == customer_key]:
                self.delete_space(ws, space)
            ws.customers.pop(customer_key, None)


def utcnow() -> datetime:
    return datetime.now(UTC)
