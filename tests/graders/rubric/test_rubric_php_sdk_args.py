"""The PHP SDK's arguments as PHP lets them be written, and the agent playing the grader with them:
positional arguments in the SDK's own parameter order (required first, so ``customer_key`` leads
``push_data``), named and positional mixed, ``null`` in a parameter's place (the SDK sends nothing for it), a
variable holding null, an argument one place off, a list spread (nothing known), a string-keyed array spread
(named arguments), more arguments than the method takes. The order itself is checked against the shipped
OpenAPI document."""

from __future__ import annotations

import pytest
from rubric_helpers import ENDPOINTS
from test_rubric_php import GOLDEN, KEY, PRISTINE, SERVICE_GOLDEN, php_syntax  # noqa: F401 - the fixture

from skillassay.seam.rubric import php_sdk

PUSH = """            $this->seam->customers->push_data(
                customer_key: $r['property_id'],
                user_identities: [['user_identity_key' => $r['guest_id']]],
                reservations: [['reservation_key' => $r['id'], 'space_keys' => [$r['unit_id']]]],
            );
"""
DELETE = "            $this->seam->customers->delete_data(customer_keys: ['p1'], reservation_keys: [$rid]);\n"
assert PUSH in SERVICE_GOLDEN and DELETE in SERVICE_GOLDEN

GUESTS = "[['user_identity_key' => $r['guest_id']]]"
STAYS = "[['reservation_key' => $r['id'], 'space_keys' => [$r['unit_id']]]]"


def _nulls(n: int) -> str:
    return ", ".join(["null"] * n)


def _params(make_app, push: str = PUSH, delete: str = DELETE) -> dict[str, list[str]]:
    """``"push"``/``"delete"`` -> the rubric's evidence on each call's required parameters (update's spread
    push_data call, untouched, always has all three)."""
    service = SERVICE_GOLDEN.replace(PUSH, push).replace(DELETE, delete)
    result = make_app(PRISTINE, {**GOLDEN, "app/Services/ReservationService.php": service}).grade(
        KEY, endpoints=ENDPOINTS
    )
    out: dict[str, list[str]] = {"push": [], "delete": []}
    for category in result.categories.values():
        for e in category.evidence:
            if "required parameters" in e.message:
                which = "push" if e.message.startswith("customers.push_data") else "delete"
                out[which].append(e.message)
    assert len(out["push"]) == 2 and len(out["delete"]) == 1, out
    return out


def _all(messages: list[str], tail: str) -> bool:
    return all(m.endswith(tail) for m in messages)


def _any(messages: list[str], part: str) -> bool:
    return any(part in m for m in messages)


def test_positional_arguments_take_the_sdks_order(make_app):
    # push_data($customer_key, $access_grants, ..., $reservations (11th), ..., $user_identities (19th))
    push = (
        f"            $this->seam->customers->push_data($r['property_id'], {_nulls(9)}, {STAYS}, "
        f"{_nulls(7)}, {GUESTS});\n"
    )
    delete = f"            $this->seam->customers->delete_data({_nulls(4)}, ['p1'], {_nulls(5)}, [$rid]);\n"
    found = _params(make_app, push, delete)
    assert _all(found["push"], "3/3 required parameters"), found
    assert _any(found["delete"], ": 2/2 required parameters"), found


def test_positional_then_named(make_app):
    push = (
        f"            $this->seam->customers->push_data($r['property_id'], user_identities: {GUESTS}, "
        f"reservations: {STAYS});\n"
    )
    assert _all(_params(make_app, push)["push"], "3/3 required parameters")


def test_one_place_off_is_another_parameter(make_app):
    # the 10th place is property_listing_keys: an alphabetical count that forgot nothing still misses
    delete = f"            $this->seam->customers->delete_data({_nulls(4)}, ['p1'], {_nulls(4)}, [$rid]);\n"
    assert _any(_params(make_app, delete=delete)["delete"], "missing reservation_keys")
    # and customer_key is push_data's first parameter (required), not its fifth (alphabetical)
    push = (
        f"            $this->seam->customers->push_data(null, null, null, null, $r['property_id'], "
        f"user_identities: {GUESTS}, reservations: {STAYS});\n"
    )
    assert _any(_params(make_app, push)["push"], "missing customer_key")


@pytest.mark.parametrize(
    "delete",
    [
        f"            $this->seam->customers->delete_data({_nulls(4)}, ['p1'], {_nulls(6)});\n",
        "            $this->seam->customers->delete_data(customer_keys: ['p1'], reservation_keys: null);\n",
        "            $keys = null;\n"
        f"            $this->seam->customers->delete_data({_nulls(4)}, ['p1'], {_nulls(5)}, $keys);\n",
    ],
    ids=["null-in-place", "named-null", "variable-holding-null"],
)
def test_null_is_no_parameter(make_app, delete):
    assert _any(_params(make_app, delete=delete)["delete"], "missing reservation_keys")


def test_a_list_spread_names_nothing_and_a_keyed_one_names_its_keys(make_app):
    listed = (
        f"            $args = [$r['property_id'], {_nulls(9)}, {STAYS}, {_nulls(7)}, {GUESTS}];\n"
        "            $this->seam->customers->push_data(...$args);\n"
    )
    assert _any(_params(make_app, listed)["push"], "0/3 required parameters")
    keyed = (
        f"            $args = ['customer_key' => $r['property_id'], 'reservations' => {STAYS}];\n"
        f"            $this->seam->customers->push_data(...$args, user_identities: {GUESTS});\n"
    )
    assert _all(_params(make_app, keyed)["push"], "3/3 required parameters")


def test_more_arguments_than_parameters(make_app):
    push = (
        f"            $this->seam->customers->push_data($r['property_id'], {_nulls(9)}, {STAYS}, "
        f"{_nulls(7)}, {GUESTS}, {_nulls(12)}, 'extra');\n"
    )
    assert _all(_params(make_app, push)["push"], "3/3 required parameters")


# ----------------------------------------------------------------------------- the order itself
def test_committed_order_is_the_shipped_documents():
    from skillassay.seam.emulator.spec import PINNED_TYPES_VERSION, load_spec

    assert php_sdk.DATA_FILE.read_text(encoding="utf-8") == php_sdk.render(
        PINNED_TYPES_VERSION, php_sdk.derive(load_spec().document)
    ), "php_sdk_params.json is stale: python scripts/export_seam_openapi.py"


def test_order_facts_of_the_shipped_document():
    create = php_sdk.parameter_order("access_codes.create")
    assert create[:4] == ["device_id", "allow_external_modification", "attempt_for_offline_device", "code"]
    assert "sync" not in create  # x-undocumented: the SDK has no such argument
    assert "use_offline_access_code" in create  # deprecated, still an argument
    # allOf [oneOf [user_identity_id | user_identity], {...}]: the required part's first, the branches' next
    grant = php_sdk.parameter_order("access_grants.create")
    assert grant[:4] == ["requested_access_methods", "user_identity_id", "user_identity", "access_grant_key"]
    assert php_sdk.parameter_order("spaces.add_devices") == ["device_ids", "space_id"]  # the body's order
    # a oneOf whose every branch requires acs_encoder_id: required, so first
    scan = php_sdk.parameter_order("acs.encoders.simulate.next_credential_scan_will_succeed")
    assert scan[0] == "acs_encoder_id"
    assert php_sdk.parameter_order("no_such.method") == []


def _doc(route: str, schema: dict, response_key: str = "thing", components: dict | None = None) -> dict:
    operation = {
        "x-response-key": response_key,
        "requestBody": {"content": {"application/json": {"schema": schema}}},
    }
    return {"paths": {route: {"post": operation}}, "components": components or {}}


def test_a_get_methods_own_id_comes_first():
    schema = {"properties": {"name": {}, "owner_id": {}, "thing_id": {}}, "required": ["owner_id"]}
    assert php_sdk.derive(_doc("/things/get", schema))["/things/get"] == ["thing_id", "owner_id", "name"]
    # only a get's: another method keeps required first, then the document's order
    assert php_sdk.derive(_doc("/things/update", schema))["/things/update"] == [
        "owner_id",
        "name",
        "thing_id",
    ]


def test_refs_and_undocumented_properties():
    components = {"schemas": {"Body": {"properties": {"b": {}, "a": {"x-undocumented": "internal"}}}}}
    doc = _doc("/things/create", {"$ref": "#/components/schemas/Body"}, components=components)
    assert php_sdk.derive(doc) == {"/things/create": ["b"]}
