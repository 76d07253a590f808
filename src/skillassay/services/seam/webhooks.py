"""Webhook delivery signed the Standard Webhooks (Svix) way, from a background thread.

``svix-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`` where key is the base64-decoded
secret after ``whsec_``. The body is the bare event object, as Seam sends it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

log = logging.getLogger(__name__)


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def sign(secret: str, msg_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(
    secret: str, body: str, msg_id: str | None = None, timestamp: int | None = None
) -> dict[str, str]:
    msg_id = msg_id or "msg_" + secrets.token_hex(12)
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {
        "content-type": "application/json",
        "svix-id": msg_id,
        "svix-timestamp": str(timestamp),
        "svix-signature": sign(secret, msg_id, timestamp, body),
        "user-agent": "Svix-Webhooks/1.0 (skillassay seam emulator)",
    }


def wants(event_types: list[str] | None, event_type: str) -> bool:
    if not event_types:
        return True
    for pattern in event_types:
        if pattern in ("*", event_type):
            return True
        if pattern.endswith(".*") and event_type.startswith(pattern[:-1]):
            return True
    return False


@dataclass
class Delivery:
    url: str
    secret: str
    event: dict[str, Any]
    webhook_id: str
    workspace_id: str


@dataclass
class DeliveryRecord:
    webhook_id: str
    workspace_id: str
    event_id: str
    url: str
    status: int | None
    error: str | None
    attempts: int


@dataclass
class WebhookDispatcher:
    """One worker thread posts deliveries in order; failures are retried a few times with a short back-off."""

    retries: int = 2
    timeout: float = 5.0
    records: list[DeliveryRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: queue.Queue[Delivery | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._client: httpx.Client | None = None

    def start(self) -> None:
        if self._thread is None:
            self._client = httpx.Client(timeout=self.timeout, trust_env=False)
            self._thread = threading.Thread(target=self._run, name="seam-emulator-webhooks", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            # Pending deliveries are dropped: stopping must not wait on unreachable receivers.
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def submit(self, delivery: Delivery) -> None:
        self._queue.put(delivery)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._deliver(item)

    def _deliver(self, d: Delivery) -> None:
        body = json.dumps(d.event, separators=(",", ":"))
        msg_id = "msg_" + d.event["event_id"].replace("-", "")
        status, error, attempt = None, None, 0
        for attempt in range(1, self.retries + 2):
            headers = signed_headers(d.secret, body, msg_id=msg_id)
            try:
                assert self._client is not None
                resp = self._client.post(d.url, content=body.encode(), headers=headers)
                status, error = resp.status_code, None
                if resp.status_code < 300:
                    break
            except httpx.HTTPError as exc:
                status, error = None, str(exc)
            time.sleep(0.2 * attempt)
        self.records.append(
            DeliveryRecord(d.webhook_id, d.workspace_id, d.event["event_id"], d.url, status, error, attempt)
        )
