from __future__ import annotations

from collections.abc import Iterator

import pytest
from response_schemas import ResponseRecorder, ResponseSchemas
from seam_helpers import FAST, WebhookReceiver

from skillassay.seam.emulator.emulator import SeamEmulator, WorkspaceHandle


@pytest.fixture(scope="module")
def emulator() -> Iterator[SeamEmulator]:
    emu = SeamEmulator(async_delay=FAST)
    # Every answer this emulator gives is recorded, and checked against the spec after each test.
    emu.app = ResponseRecorder(emu.app)
    with emu:
        yield emu


@pytest.fixture(scope="session")
def response_schemas() -> ResponseSchemas:
    from skillassay.seam.emulator.spec import load_spec

    return ResponseSchemas(load_spec())


@pytest.fixture(autouse=True)
def answers_match_the_response_schemas(request: pytest.FixtureRequest) -> Iterator[None]:
    """For every test that talks to the shared emulator (the official SDKs, in and out of process): each
    successful answer it got must validate against its route's 200 schema in the OpenAPI document."""
    if "emulator" not in request.fixturenames:
        yield
        return
    emu = request.getfixturevalue("emulator")
    recorder = emu.app
    assert isinstance(recorder, ResponseRecorder)
    schemas = request.getfixturevalue("response_schemas")
    start = len(recorder.answers)
    yield
    problems = schemas.violations(recorder.since(start))
    assert not problems, "answers that break the OpenAPI response schemas:\n" + "\n".join(problems[:40])


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
