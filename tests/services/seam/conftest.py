from __future__ import annotations

from collections.abc import Iterator

import pytest
from seam_helpers import FAST, WebhookReceiver

from skillassay.services.seam.emulator import SeamEmulator, WorkspaceHandle


@pytest.fixture(scope="module")
def emulator() -> Iterator[SeamEmulator]:
    with SeamEmulator(async_delay=FAST) as emu:
        yield emu


@pytest.fixture
def workspace(emulator: SeamEmulator) -> WorkspaceHandle:
    return emulator.create_workspace(name="test")


@pytest.fixture
def seam_env(
    emulator: SeamEmulator, workspace: WorkspaceHandle, monkeypatch: pytest.MonkeyPatch
) -> WorkspaceHandle:
    """Point the official SDKs at the emulator exactly the way an app under test is pointed: env vars only."""
    monkeypatch.setenv("SEAM_ENDPOINT", emulator.base_url)
    monkeypatch.setenv("SEAM_API_KEY", workspace.api_key)
    monkeypatch.delenv("SEAM_API_URL", raising=False)
    return workspace


@pytest.fixture
def webhook_receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()
    yield receiver
    receiver.close()
