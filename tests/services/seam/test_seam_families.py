"""The hand-written route families (seam/emulator/families/) through PyPI ``seam``, configured only through
SEAM_ENDPOINT / SEAM_API_KEY. Every answer is checked against the spec's response schemas (conftest)."""

from __future__ import annotations

import httpx
import pytest
from seam import Seam
from seam.exceptions import SeamHttpApiError
from seam_helpers import admin_headers

from skillassay.seam.emulator.emulator import wait_until

STARTS, ENDS, ENDS_LATER = "2031-03-01T15:00:00Z", "2031-03-03T11:00:00Z", "2031-03-05T11:00:00Z"


def _events(emulator, workspace) -> list[dict]:
    return [dict(e) for e in emulator.state(workspace.workspace_id).events]


def _listed_events(seam: Seam) -> list[str]:
    """The workspace's events through ``events/list``: each is checked against the spec's event schema."""
    return [e.event_type for e in seam.events.list(since="2020-01-01T00:00:00Z")]


def _error(call) -> tuple[int, str]:
    with pytest.raises(SeamHttpApiError) as err:
        call()
    return err.value.status_code, err.value.code


# -- access_codes/create_multiple ------------------------------------------------------------------
def test_create_multiple_shares_one_pin_linked_by_a_common_code_key(emulator, seam_env):
    seam = Seam()
    august, yale = seam_env.device("FRONT DOOR")["device_id"], seam_env.device("Front Door")["device_id"]
    codes = seam.access_codes.create_multiple(
        device_ids=[august, yale], name="Stay", starts_at=STARTS, ends_at=ENDS
    )
    assert sorted(c.device_id for c in codes) == sorted([august, yale])
    assert len({c.code for c in codes}) == 1 and len(codes[0].code) == 4  # shortest length both take
    key = codes[0].common_code_key
    assert key and all(c.common_code_key == key for c in codes)
    for device_id in (august, yale):  # listed per device, one code each
        listed = seam.access_codes.list(device_id=device_id)
        assert [c.access_code_id for c in listed] == [
            c.access_code_id for c in codes if c.device_id == device_id
        ]
    wait_until(lambda: all(c.status == "set" for c in seam.access_codes.list(device_id=august)), 10)

    seam.access_codes.update_multiple(common_code_key=key, ends_at=ENDS_LATER)
    for device_id in (august, yale):
        (code,) = seam.access_codes.list(device_id=device_id)
        assert code.ends_at == "2031-03-05T11:00:00.000Z" and code.starts_at == "2031-03-01T15:00:00.000Z"


def test_create_multiple_with_a_given_code_leaves_them_unlinked(emulator, seam_env):
    seam = Seam()
    ids = [seam_env.device("BACK DOOR")["device_id"], seam_env.device("Side Door")["device_id"]]
    codes = seam.access_codes.create_multiple(device_ids=ids, code="482913")
    assert [c.code for c in codes] == ["482913", "482913"]
    assert [c.common_code_key for c in codes] == [None, None]  # the spec: no key for a custom code


def test_create_multiple_throws_when_a_lock_cannot_take_the_pin(emulator, seam_env):
    seam = Seam()
    august, yale = seam_env.device("GARAGE")["device_id"], seam_env.device("Side Door")["device_id"]
    # eight digits: the Yale lock takes them, the August lock (4 to 6) does not
    assert _error(lambda: seam.access_codes.create_multiple(device_ids=[august, yale], code="12345678")) == (
        400,
        "cannot_share_code",
    )
    assert seam.access_codes.list(device_id=yale) == []  # nothing created on any lock
    codes = seam.access_codes.create_multiple(
        device_ids=[august, yale], code="12345678", behavior_when_code_cannot_be_shared="create_random_code"
    )
    by_device = {c.device_id: c.code for c in codes}
    assert by_device[yale] == "12345678" and by_device[august] != "12345678" and len(by_device[august]) == 4


def test_create_multiple_passes_over_an_id_the_workspace_does_not_have(emulator, seam_env):
    """As Seam's fake answers (docs/seam-emulator.md): the codes of the devices found, none for the rest."""
    seam = Seam()
    yale = seam_env.device("Side Door")["device_id"]
    missing = "00000000-0000-4000-8000-000000000000"
    codes = seam.access_codes.create_multiple(device_ids=[yale, missing], code="3917")
    assert [(c.device_id, c.code) for c in codes] == [(yale, "3917")]
    assert seam.access_codes.create_multiple(device_ids=[missing]) == []
    assert seam.access_codes.create_multiple(device_ids=[]) == []
    assert [c.code for c in seam.access_codes.list(device_id=yale)] == ["3917"]


# -- connect webviews, connected accounts, devices -------------------------------------------------
def test_connect_webview_completes_into_the_sandbox_account_with_its_devices(emulator, seam_env):
    seam = Seam()
    created = seam.connect_webviews.create(accepted_providers=["august"], custom_metadata={"owner": "o-1"})
    assert created.status == "pending" and created.connected_account_id is None
    assert created.url.startswith("http")
    got = seam.connect_webviews.get(connect_webview_id=created.connect_webview_id)
    assert got.status == "authorized" and got.login_successful and got.selected_provider == "august"
    account = seam.connected_accounts.get(connected_account_id=got.connected_account_id)
    assert account.user_identifier.email == "jane@example.com"
    names = {d.display_name for d in seam.devices.list(connected_account_id=account.connected_account_id)}
    assert names == {"FRONT DOOR", "BACK DOOR", "GARAGE"}
    types = [e["event_type"] for e in _events(emulator, seam_env)]
    assert types[-3:-1] == ["connect_webview.login_succeeded", "connected_account.connected"]
    assert "connect_webview.login_succeeded" in _listed_events(seam)
    listed = seam.connect_webviews.list(custom_metadata_has={"owner": "o-1"})
    assert [w.connect_webview_id for w in listed] == [created.connect_webview_id]

    seam.connect_webviews.delete(connect_webview_id=created.connect_webview_id)
    assert _error(lambda: seam.connect_webviews.get(connect_webview_id=created.connect_webview_id)) == (
        404,
        "connect_webview_not_found",
    )


def test_a_webview_completes_by_itself_after_the_delay(emulator, seam_env):
    seam = Seam()
    created = seam.connect_webviews.create(accepted_providers=["schlage"])
    wid = seam_env.workspace_id
    wait_until(
        lambda: "connect_webview.login_succeeded" in emulator.state(wid).event_types(), 10
    )  # nobody asked: the webhook-driven app is told too
    got = seam.connect_webviews.get(connect_webview_id=created.connect_webview_id)
    devices = seam.devices.list(connected_account_id=got.connected_account_id)
    assert [d.device_type for d in devices] == ["schlage_lock", "schlage_lock"]
    assert "connected_account.created" in emulator.state(wid).event_types()
    assert "device.connected" in _listed_events(seam)


def test_connected_account_update_and_delete_take_its_devices_and_codes(emulator, seam_env):
    seam = Seam()
    webview = seam.connect_webviews.create(accepted_providers=["kwikset"])
    account_id = seam.connect_webviews.get(connect_webview_id=webview.connect_webview_id).connected_account_id
    seam.connected_accounts.update(
        connected_account_id=account_id, display_name="Owner's Kwikset", custom_metadata={"unit": "12"}
    )
    updated = seam.connected_accounts.get(connected_account_id=account_id)
    assert updated.display_name == "Owner's Kwikset" and updated.custom_metadata == {"unit": "12"}
    device = seam.devices.list(connected_account_id=account_id)[0]
    code = seam.access_codes.create(device_id=device.device_id, code="5821")
    seam.connected_accounts.delete(connected_account_id=account_id)
    assert _error(lambda: seam.connected_accounts.get(connected_account_id=account_id)) == (
        404,
        "connected_account_not_found",
    )
    assert _error(lambda: seam.devices.get(device_id=device.device_id))[0] == 404
    assert _error(lambda: seam.access_codes.get(access_code_id=code.access_code_id))[0] == 404
    types = [e["event_type"] for e in _events(emulator, seam_env)]
    assert {"access_code.deleted", "device.deleted", "connected_account.deleted"} <= set(types)
    assert {a.account_type for a in seam.connected_accounts.list()} == {"august", "yale", "salto_ks"}
    assert "connected_account.deleted" in _listed_events(seam)


def test_devices_update_renames_and_unmanages(emulator, seam_env):
    seam = Seam()
    device_id = seam_env.device("GARAGE")["device_id"]
    seam.devices.update(device_id=device_id, name="Garage (side)", custom_metadata={"zone": "b"})
    device = seam.devices.get(device_id=device_id)
    assert (device.display_name, device.properties.name) == ("Garage (side)", "Garage (side)")
    assert device.custom_metadata == {"zone": "b"}
    renamed = [e for e in _events(emulator, seam_env) if e["event_type"] == "device.name_changed"]
    assert renamed[-1]["device_name"] == "Garage (side)"
    code = seam.access_codes.create(device_id=device_id, code="6302")
    seam.devices.update(device_id=device_id, is_managed=False)
    assert device_id not in {d.device_id for d in seam.devices.list()}
    # its code left the managed API with it: updating it is a 404, not an emulator error
    assert _error(lambda: seam.access_codes.update(access_code_id=code.access_code_id, name="x")) == (
        404,
        "access_code_not_found",
    )
    seam.devices.update(device_id=device_id, is_managed=True)
    assert device_id in {d.device_id for d in seam.devices.list()}
    assert seam.access_codes.get(access_code_id=code.access_code_id).code == "6302"
    assert "device.unmanaged.converted_to_managed" in _listed_events(seam)


# -- client sessions -------------------------------------------------------------------------------
def test_client_sessions_scope_a_token_to_accounts_and_webviews(emulator, seam_env):
    seam = Seam()
    august = next(a for a in seam.connected_accounts.list() if a.account_type == "august")
    session = seam.client_sessions.create(
        user_identifier_key="owner-1", connected_account_ids=[august.connected_account_id]
    )
    assert session.token.startswith("seam_cst") and session.device_count == 3
    assert (
        seam.client_sessions.get(user_identifier_key="owner-1").client_session_id == session.client_session_id
    )
    assert _error(lambda: seam.client_sessions.create(user_identifier_key="owner-1"))[0] == 400
    webview = seam.connect_webviews.create(accepted_providers=["yale"])
    seam.client_sessions.grant_access(
        client_session_id=session.client_session_id, connect_webview_ids=[webview.connect_webview_id]
    )
    granted = seam.client_sessions.get(client_session_id=session.client_session_id)
    assert granted.connect_webview_ids == [webview.connect_webview_id]
    listed = seam.client_sessions.list(connect_webview_id=webview.connect_webview_id)
    assert [s.client_session_id for s in listed] == [session.client_session_id]
    seam.client_sessions.delete(client_session_id=session.client_session_id)
    assert _error(lambda: seam.client_sessions.get(client_session_id=session.client_session_id)) == (
        404,
        "client_session_not_found",
    )
    past = seam.client_sessions.create
    assert _error(lambda: past(user_identifier_key="late", expires_at="2020-01-01T00:00:00Z")) == (
        400,
        "invalid_input",
    )
    timed = seam.client_sessions.create(user_identifier_key="timed", expires_at="2031-01-01T02:00:00+02:00")
    assert timed.expires_at == "2031-01-01T00:00:00.000Z"
    missing = "00000000-0000-4000-8000-000000000000"
    assert _error(lambda: seam.client_sessions.create(connected_account_ids=[missing])) == (
        404,
        "connected_account_not_found",
    )


# -- access control systems ------------------------------------------------------------------------
def test_acs_user_gets_a_code_credential_on_entrances(emulator, seam_env):
    seam = Seam()
    (system,) = seam.acs.systems.list()
    entrances = {e.display_name: e for e in seam.acs.entrances.list(acs_system_id=system.acs_system_id)}
    assert set(entrances) == {"Main Entrance", "Lobby Door", "Room 101", "Room 102"}
    user = seam.acs.users.create(
        acs_system_id=system.acs_system_id, full_name="Guest One", email_address="g1@example.com"
    )
    assert seam.acs.systems.get(acs_system_id=system.acs_system_id).acs_user_count == 1
    allowed = [entrances["Main Entrance"].acs_entrance_id, entrances["Room 101"].acs_entrance_id]
    credential = seam.acs.credentials.create(
        acs_user_id=user.acs_user_id,
        access_method="code",
        code="731904",
        allowed_acs_entrance_ids=allowed,
        starts_at=STARTS,
        ends_at=ENDS,
    )
    assert (credential.code, credential.is_issued, credential.acs_user_id) == (
        "731904",
        False,
        user.acs_user_id,
    )
    wait_until(lambda: seam.acs.credentials.get(acs_credential_id=credential.acs_credential_id).is_issued, 10)
    reach = {
        e.acs_entrance_id for e in seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id)
    }
    assert reach == set(allowed)
    with_access = seam.acs.entrances.list_credentials_with_access(acs_entrance_id=allowed[1])
    assert [c.acs_credential_id for c in with_access] == [credential.acs_credential_id]
    assert [c.acs_credential_id for c in seam.acs.credentials.list(acs_user_id=user.acs_user_id)] == [
        credential.acs_credential_id
    ]
    seam.acs.credentials.update(acs_credential_id=credential.acs_credential_id, ends_at=ENDS_LATER)
    updated = seam.acs.credentials.get(acs_credential_id=credential.acs_credential_id)
    assert updated.ends_at == "2031-03-05T11:00:00.000Z"
    wid = seam_env.workspace_id
    wait_until(lambda: "acs_credential.reissued" in emulator.state(wid).event_types(), 10)

    seam.acs.users.suspend(acs_user_id=user.acs_user_id)
    assert seam.acs.users.get(acs_user_id=user.acs_user_id).is_suspended
    assert seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id) == []
    seam.acs.users.unsuspend(acs_user_id=user.acs_user_id)
    assert len(seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id)) == 2

    seam.acs.users.delete(acs_user_id=user.acs_user_id)
    assert _error(lambda: seam.acs.credentials.get(acs_credential_id=credential.acs_credential_id)) == (
        404,
        "acs_credential_not_found",
    )
    types = [e["event_type"] for e in _events(emulator, seam_env)]
    assert [t for t in types if t.startswith("acs_")] == [
        "acs_user.created",
        "acs_credential.issued",
        "acs_credential.reissued",
        "acs_credential.deleted",
        "acs_user.deleted",
    ]
    assert "acs_user.deleted" in _listed_events(seam)


def test_acs_access_groups_and_credential_assignment(emulator, seam_env):
    seam = Seam()
    (system,) = seam.acs.systems.list()
    groups = {g.name: g for g in seam.acs.access_groups.list(acs_system_id=system.acs_system_id)}
    user = seam.acs.users.create(acs_system_id=system.acs_system_id, full_name="Staff One")
    seam.acs.access_groups.add_user(
        acs_access_group_id=groups["Residents"].acs_access_group_id, acs_user_id=user.acs_user_id
    )
    reach = {e.display_name for e in seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id)}
    assert reach == {"Main Entrance", "Lobby Door"}
    members = seam.acs.access_groups.list_users(acs_access_group_id=groups["Residents"].acs_access_group_id)
    assert [u.acs_user_id for u in members] == [user.acs_user_id]
    assert [g.name for g in seam.acs.access_groups.list(acs_user_id=user.acs_user_id)] == ["Residents"]
    listed = seam.acs.users.list(
        acs_system_id=system.acs_system_id, created_before="2099-01-01T02:00:00+02:00"
    )
    assert user.acs_user_id in {u.acs_user_id for u in listed}
    assert seam.acs.users.list(created_before="2020-01-01T00:00:00+02:00") == []
    seam.acs.access_groups.remove_user(
        acs_access_group_id=groups["Residents"].acs_access_group_id, acs_user_id=user.acs_user_id
    )
    assert seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id) == []

    card = seam.acs.credentials.create(acs_system_id=system.acs_system_id, access_method="card")
    assert card.acs_user_id is None and card.code is None
    card_id = card.acs_credential_id
    seam.acs.credentials.assign(acs_credential_id=card_id, acs_user_id=user.acs_user_id)
    assert seam.acs.credentials.get(acs_credential_id=card_id).acs_user_id == user.acs_user_id
    seam.acs.credentials.unassign(acs_credential_id=card_id, acs_user_id=user.acs_user_id)
    assert seam.acs.credentials.get(acs_credential_id=card_id).acs_user_id is None
    missing = "00000000-0000-4000-8000-000000000000"
    assert _error(
        lambda: seam.acs.credentials.create(
            acs_user_id=user.acs_user_id, access_method="code", allowed_acs_entrance_ids=[missing]
        )
    ) == (404, "acs_entrance_not_found")
    assert _error(lambda: seam.acs.users.create(acs_system_id=missing, full_name="x")) == (
        404,
        "acs_system_not_found",
    )


def test_family_resources_are_scoped_to_their_workspace(emulator, seam_env, monkeypatch):
    """Another run's key reaches none of this workspace's webviews, sessions, ACS users or credentials."""
    seam = Seam()
    webview = seam.connect_webviews.create(accepted_providers=["august"])
    session = seam.client_sessions.create(user_identifier_key="owner-9")
    (system,) = seam.acs.systems.list()
    user = seam.acs.users.create(acs_system_id=system.acs_system_id, full_name="Guest Nine")
    credential = seam.acs.credentials.create(acs_user_id=user.acs_user_id, access_method="code")
    other = emulator.create_workspace(name="another run")
    monkeypatch.setenv("SEAM_API_KEY", other.api_key)
    intruder = Seam()
    assert (
        _error(lambda: intruder.connect_webviews.get(connect_webview_id=webview.connect_webview_id))[0] == 404
    )
    assert _error(lambda: intruder.client_sessions.get(client_session_id=session.client_session_id))[0] == 404
    assert _error(lambda: intruder.acs.users.delete(acs_user_id=user.acs_user_id)) == (
        404,
        "acs_user_not_found",
    )
    assert (
        _error(lambda: intruder.acs.credentials.get(acs_credential_id=credential.acs_credential_id))[0] == 404
    )
    assert _error(lambda: intruder.acs.systems.get(acs_system_id=system.acs_system_id))[0] == 404
    assert intruder.connect_webviews.list() == [] and intruder.client_sessions.list() == []
    # the intruder's own webview completes into its own workspace's account, never this one's
    own = intruder.connect_webviews.get(
        connect_webview_id=intruder.connect_webviews.create(accepted_providers=["august"]).connect_webview_id
    )
    assert (
        own.connected_account_id
        != seam.connect_webviews.get(connect_webview_id=webview.connect_webview_id).connected_account_id
    )
    assert seam.acs.users.get(acs_user_id=user.acs_user_id).full_name == "Guest Nine"


def test_deleting_the_access_systems_account_takes_the_system_with_it(emulator, seam_env):
    seam = Seam()
    (system,) = seam.acs.systems.list()
    user = seam.acs.users.create(acs_system_id=system.acs_system_id, full_name="Guest Ten")
    seam.acs.credentials.create(acs_user_id=user.acs_user_id, access_method="mobile_key")
    seam.connected_accounts.delete(connected_account_id=system.connected_account_id)
    assert seam.acs.systems.list() == [] and seam.acs.entrances.list() == []
    assert _error(lambda: seam.acs.users.get(acs_user_id=user.acs_user_id)) == (404, "acs_user_not_found")
    types = _listed_events(seam)
    for expected in ("acs_credential.deleted", "acs_user.deleted", "acs_access_group.deleted"):
        assert expected in types
    assert types.count("acs_entrance.removed") == 4


def test_custom_metadata_holds_at_most_fifty_keys(emulator, seam_env):
    seam = Seam()
    device_id = seam_env.device("FRONT DOOR")["device_id"]
    seam.devices.update(device_id=device_id, custom_metadata={f"k{i}": "v" for i in range(50)})
    too_many = {f"x{i}": "v" for i in range(1)}
    assert _error(lambda: seam.devices.update(device_id=device_id, custom_metadata=too_many)) == (
        400,
        "invalid_input",
    )
    seam.devices.update(device_id=device_id, custom_metadata={"k0": None, "x0": "v"})  # a null frees a key
    assert len(seam.devices.get(device_id=device_id).custom_metadata) == 50


def test_acs_entrance_grant_unlock_and_group_delete(emulator, seam_env):
    seam = Seam()
    (system,) = seam.acs.systems.list()
    lobby = next(e for e in seam.acs.entrances.list() if e.display_name == "Lobby Door")
    user = seam.acs.users.create(acs_system_id=system.acs_system_id, full_name="Guest Eleven")
    seam.acs.entrances.grant_access(acs_entrance_id=lobby.acs_entrance_id, acs_user_id=user.acs_user_id)
    reach = seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id)
    assert [e.display_name for e in reach] == ["Lobby Door"]
    seam.acs.users.revoke_access_to_all_entrances(acs_user_id=user.acs_user_id)
    assert seam.acs.users.list_accessible_entrances(acs_user_id=user.acs_user_id) == []

    key = seam.acs.credentials.create(
        acs_user_id=user.acs_user_id,
        access_method="cloud_key",
        allowed_acs_entrance_ids=[lobby.acs_entrance_id],
    )
    attempt = seam.acs.entrances.unlock(
        acs_entrance_id=lobby.acs_entrance_id, acs_credential_id=key.acs_credential_id
    )
    assert attempt.status == "success"  # the SDK polled the action attempt until it settled
    pin = seam.acs.credentials.create(acs_user_id=user.acs_user_id, access_method="code")
    assert len(pin.code) == 6  # generated
    assert _error(
        lambda: seam.acs.entrances.unlock(
            acs_entrance_id=lobby.acs_entrance_id, acs_credential_id=pin.acs_credential_id
        )
    ) == (400, "invalid_input")

    staff = next(g for g in seam.acs.access_groups.list() if g.name == "Staff")
    seam.acs.access_groups.delete(acs_access_group_id=staff.acs_access_group_id)
    assert [g.name for g in seam.acs.access_groups.list()] == ["Residents"]
    # undocumented routes the SDK has no method for: through its own HTTP client
    for route, key in (
        ("users", "acs_users"),
        ("credentials", "acs_credentials"),
        ("access_groups", "acs_access_groups"),
    ):
        answer = seam.client.post(
            f"/acs/{route}/unmanaged/list", json={"acs_system_id": system.acs_system_id}
        )
        assert answer[key] == []
    compatible = seam.acs.systems.list_compatible_credential_manager_acs_systems(
        acs_system_id=system.acs_system_id
    )
    assert compatible == []
    assert "acs_access_group.deleted" in _listed_events(seam)


def test_client_session_get_or_create_and_revoke(emulator, seam_env):
    seam = Seam()
    first = seam.client_sessions.get_or_create(user_identifier_key="owner-2")
    again = seam.client_sessions.get_or_create(user_identifier_key="owner-2")
    assert again.client_session_id == first.client_session_id and again.token == first.token
    seam.client_sessions.revoke(client_session_id=first.client_session_id)
    revoked = seam.client_sessions.get(client_session_id=first.client_session_id)
    assert revoked.expires_at <= seam.client_sessions.get_or_create(user_identifier_key="owner-3").created_at
    account = seam.connected_accounts.list()[0]
    seam.connected_accounts.sync(connected_account_id=account.connected_account_id)


def test_the_harness_waits_on_acs_credentials(emulator, seam_env):
    """``/_emulator/wait`` (admin credential) on ``acs_credentials``: the issued credential, once issued."""
    seam = Seam()
    (system,) = seam.acs.systems.list()
    credential = seam.acs.credentials.create(acs_system_id=system.acs_system_id, access_method="code")
    condition = {"resource": "acs_credentials", "where": {"is_issued": True}}
    body = {"workspace_id": seam_env.workspace_id, "condition": condition, "timeout": 10}
    answer = httpx.post(f"{emulator.base_url}/_emulator/wait", json=body, headers=admin_headers(emulator))
    assert answer.status_code == 200, answer.text
    assert [c["acs_credential_id"] for c in answer.json()["matched"]] == [credential.acs_credential_id]


def test_every_family_route_answers_schema_valid(emulator, seam_env):
    """A tour of every hand-written route over plain HTTP (the SDK's client): each answers 200, and the
    conftest checks each answer against its route's 200 schema. The unmanaged ``get`` routes are the
    exception by design: the emulator's systems have no unmanaged resources, so they answer 404."""
    from skillassay.seam.emulator.handlers import HANDLERS

    seam = Seam()
    answered: set[str] = set()

    def call(route: str, **body):
        answer = seam.client.post(route, json=body)
        answered.add(route)
        return answer

    front, side = seam_env.device("FRONT DOOR")["device_id"], seam_env.device("Side Door")["device_id"]
    codes = call("/access_codes/create_multiple", device_ids=[front, side])["access_codes"]
    call("/access_codes/update_multiple", common_code_key=codes[0]["common_code_key"], name="Tour")
    webview = call("/connect_webviews/create", accepted_providers=["lockly"])["connect_webview"]
    webview_id = webview["connect_webview_id"]
    account_id = call("/connect_webviews/get", connect_webview_id=webview_id)["connect_webview"][
        "connected_account_id"
    ]
    call("/connect_webviews/list")
    call("/connected_accounts/update", connected_account_id=account_id, display_name="Tour")
    call("/connected_accounts/sync", connected_account_id=account_id)
    call("/devices/update", device_id=front, name="Front (tour)")
    session = call("/client_sessions/create", connected_account_ids=[account_id])["client_session"]
    session_id = session["client_session_id"]
    call("/client_sessions/get", client_session_id=session_id)
    call("/client_sessions/list")
    call("/client_sessions/grant_access", client_session_id=session_id, connect_webview_ids=[webview_id])
    call("/client_sessions/get_or_create", user_identifier_key="tour")
    call("/client_sessions/revoke", client_session_id=session_id)
    call("/client_sessions/delete", client_session_id=session_id)

    system_id = call("/acs/systems/list")["acs_systems"][0]["acs_system_id"]
    call("/acs/systems/get", acs_system_id=system_id)
    call("/acs/systems/list_compatible_credential_manager_acs_systems", acs_system_id=system_id)
    entrance_id = call("/acs/entrances/list", acs_system_id=system_id)["acs_entrances"][0]["acs_entrance_id"]
    call("/acs/entrances/get", acs_entrance_id=entrance_id)
    user_id = call("/acs/users/create", acs_system_id=system_id, full_name="Tour Guest")["acs_user"][
        "acs_user_id"
    ]
    for route in (
        "get",
        "suspend",
        "unsuspend",
        "list_accessible_entrances",
        "revoke_access_to_all_entrances",
    ):
        call(f"/acs/users/{route}", acs_user_id=user_id)
    call("/acs/users/list", acs_system_id=system_id)
    call("/acs/users/update", acs_user_id=user_id, full_name="Tour Guest Two")
    call("/acs/entrances/grant_access", acs_entrance_id=entrance_id, acs_user_id=user_id)
    group_id = call("/acs/access_groups/list", acs_system_id=system_id)["acs_access_groups"][0][
        "acs_access_group_id"
    ]
    call("/acs/access_groups/get", acs_access_group_id=group_id)
    call("/acs/users/add_to_access_group", acs_user_id=user_id, acs_access_group_id=group_id)
    call("/acs/users/remove_from_access_group", acs_user_id=user_id, acs_access_group_id=group_id)
    call("/acs/access_groups/add_user", acs_user_id=user_id, acs_access_group_id=group_id)
    call("/acs/access_groups/list_users", acs_access_group_id=group_id)
    call("/acs/access_groups/list_accessible_entrances", acs_access_group_id=group_id)
    call("/acs/access_groups/remove_user", acs_user_id=user_id, acs_access_group_id=group_id)
    key = call(
        "/acs/credentials/create",
        acs_user_id=user_id,
        access_method="cloud_key",
        allowed_acs_entrance_ids=[entrance_id],
    )["acs_credential"]["acs_credential_id"]
    call("/acs/entrances/unlock", acs_entrance_id=entrance_id, acs_credential_id=key)
    call("/acs/entrances/list_credentials_with_access", acs_entrance_id=entrance_id)
    for route in ("get", "list_accessible_entrances"):
        call(f"/acs/credentials/{route}", acs_credential_id=key)
    call("/acs/credentials/list", acs_user_id=user_id)
    call("/acs/credentials/unassign", acs_credential_id=key, acs_user_id=user_id)
    call("/acs/credentials/assign", acs_credential_id=key, acs_user_id=user_id)
    pin = call("/acs/credentials/create", acs_system_id=system_id, access_method="code")["acs_credential"]
    call("/acs/credentials/update", acs_credential_id=pin["acs_credential_id"], code="135791")
    call("/acs/credentials/delete", acs_credential_id=pin["acs_credential_id"])
    for kind in ("users", "credentials", "access_groups"):
        call(f"/acs/{kind}/unmanaged/list", acs_system_id=system_id)
    for route, body in (
        ("/acs/users/unmanaged/get", {"acs_user_id": user_id}),
        ("/acs/credentials/unmanaged/get", {"acs_credential_id": key}),
        ("/acs/access_groups/unmanaged/get", {"acs_access_group_id": group_id}),
    ):
        assert _error(lambda route=route, body=body: seam.client.post(route, json=body))[0] == 404
        answered.add(route)
    call("/acs/users/delete", acs_user_id=user_id)
    call("/acs/access_groups/delete", acs_access_group_id=group_id)
    call("/connect_webviews/delete", connect_webview_id=webview_id)
    call("/connected_accounts/delete", connected_account_id=account_id)

    family = {path for path, handler in HANDLERS.items() if ".families." in handler.__module__}
    assert answered == family, sorted(family ^ answered)
