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
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

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


def origin(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL (default ports made explicit), or None for anything else."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    host = parts.hostname.lower()
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


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


class WebhookDispatcher:
    """Posts deliveries in order per workspace, each workspace from its own worker thread (started on demand,
    gone when idle): a receiver that hangs or refuses delays only its own workspace's deliveries, never
    another run's. Failures are retried a few times with a short back-off."""

    IDLE_SECONDS = 5.0  # a workspace's worker ends after this long without deliveries

    def __init__(self, retries: int = 2, timeout: float = 5.0, keep_records: int = 10_000):
        self.retries = retries
        self.timeout = timeout
        self.records: deque[DeliveryRecord] = deque(maxlen=keep_records)
        self._lock = threading.Lock()
        self._queues: dict[str, queue.Queue[Delivery | None]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._client: httpx.Client | None = None
        self._running = False

    def start(self) -> None:
        with self._lock:
            if not self._running:
                self._client = httpx.Client(timeout=self.timeout, trust_env=False)
                self._running = True

    def stop(self) -> None:
        with self._lock:
            self._running = False
            threads = list(self._threads.values())
            for q in self._queues.values():
                # Pending deliveries are dropped: stopping must not wait on unreachable receivers.
                try:
                    while True:
                        q.get_nowait()
                except queue.Empty:
                    pass
                q.put(None)
            self._queues.clear()
            self._threads.clear()
        deadline = time.monotonic() + self.timeout + 1  # one delivery in flight may take its timeout
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self._client is not None:
            self._client.close()
            self._client = None

    def refuse(self, delivery: Delivery, reason: str) -> None:
        """Record a delivery that is not sent (its URL is not one the workspace may reach)."""
        self.records.append(
            DeliveryRecord(
                delivery.webhook_id,
                delivery.workspace_id,
                delivery.event["event_id"],
                delivery.url,
                None,
                reason,
                0,
            )
        )

    def submit(self, delivery: Delivery) -> None:
        with self._lock:
            if not self._running:
                return
            wid = delivery.workspace_id
            q = self._queues.get(wid)
            if q is None:
                q = self._queues[wid] = queue.Queue()
            q.put(delivery)
            if wid not in self._threads:
                thread = threading.Thread(
                    target=self._run, args=(wid, q), name=f"seam-emulator-webhooks-{wid[:8]}", daemon=True
                )
                self._threads[wid] = thread
                thread.start()

    def _run(self, workspace_id: str, q: queue.Queue[Delivery | None]) -> None:
        while True:
            try:
                item = q.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    # nothing arrived meanwhile: retire (submit starts a new worker when needed)
                    if q.empty():
                        self._threads.pop(workspace_id, None)
                        if self._queues.get(workspace_id) is q:
                            del self._queues[workspace_id]
                        return
                continue
            if item is None:
                return
            self._deliver(item)

    def _deliver(self, d: Delivery) -> None:
        client = self._client
        if client is None:
            return
        body = json.dumps(d.event, separators=(",", ":"))
        msg_id = "msg_" + d.event["event_id"].replace("-", "")
        status, error, attempt = None, None, 0
        for attempt in range(1, self.retries + 2):
            headers = signed_headers(d.secret, body, msg_id=msg_id)
            try:
                resp = client.post(d.url, content=body.encode(), headers=headers)
                status, error = resp.status_code, None
                if resp.status_code < 300:
                    break
            except (httpx.HTTPError, ValueError) as exc:  # ValueError: a URL httpx cannot use
                status, error = None, str(exc)
            if attempt <= self.retries:
                time.sleep(0.2 * attempt)
        self.records.append(
            DeliveryRecord(d.webhook_id, d.workspace_id, d.event["event_id"], d.url, status, error, attempt)
        )
