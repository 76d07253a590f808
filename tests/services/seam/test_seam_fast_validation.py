"""The fast validator (fastjsonschema) decides only that a request is valid; jsonschema lists the errors.

An app sends whatever it likes: a value the fast validator accepts but jsonschema refuses would reach a
handler unchecked. So, for every hand-written route, values built from its own schema (conforming, nearly
conforming and arbitrary JSON) must never be accepted by the fast one and refused by jsonschema, and a
refused request gets jsonschema's errors exactly.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillassay.seam.emulator.emulator import wait_until
from skillassay.seam.emulator.handlers import HANDLERS
from skillassay.seam.emulator.spec import SeamSpec, load_spec, rewrite_nullable, unions_as_any_of

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_FORMATS = {
    "uuid": st.uuids().map(str) | st.sampled_from(["not-a-uuid", "6f1c8e8a4f6a4b8e9d3c2a1f0b9e7c11", ""]),
    "date-time": st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat())
    | st.sampled_from(["2031-01-01T15:00:00", "2031-13-01T00:00:00Z", "tomorrow"]),
    "email": st.emails() | st.sampled_from(["no-at-sign", "a@b"]),
    "uri": st.sampled_from(["https://example.com/hook", "example.com", "mailto:x@y.z", "http://"]),
}


def _string(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    fmt = _FORMATS.get(schema.get("format", ""))
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    text = st.text(min_size=max(0, low - 1), max_size=(high + 1) if high is not None else 12)
    return text if fmt is None else fmt | text


def _value(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Mostly what ``schema`` describes (each node sometimes something else), never deeper than 4."""
    if not isinstance(schema, dict) or depth > 4:
        return _JSON
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | _JSON
    branches = [*schema.get("anyOf", []), *schema.get("allOf", [])]
    if branches:
        return st.one_of([_value(b, depth + 1) for b in branches])
    types = schema.get("type", [])
    options = [_typed(schema, t, depth) for t in ([types] if isinstance(types, str) else types) or ["object"]]
    return st.one_of([*options, _JSON]) if depth else st.one_of(options)


def _typed(schema: dict[str, Any], kind: str, depth: int) -> st.SearchStrategy[Any]:
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: _value(v, depth + 1) for k, v in props.items() if k in required},
            optional={k: _value(v, depth + 1) for k, v in props.items() if k not in required},
        )
    if kind == "array":
        return st.lists(_value(schema.get("items", {}), depth + 1), max_size=3)
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return st.integers(-5, 5) | st.sampled_from([1.0, True])
    if kind == "number":
        return st.integers(-5, 5) | st.floats(-5, 5) | st.just(False)
    if kind == "boolean":
        return st.booleans() | st.sampled_from([0, 1])
    return st.none()


@pytest.fixture(scope="module")
def spec():
    return load_spec()


@pytest.mark.parametrize("path", sorted(HANDLERS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_validator_never_accepts_what_jsonschema_refuses(spec, path, data):
    route = spec.routes[path]
    assert route.fast_validator is not None  # compiled now (an emulator has it compiled in the background)
    schema = unions_as_any_of(rewrite_nullable(route.raw_schema))
    params = data.draw(_value(schema))
    if not isinstance(params, dict):
        return  # the app refuses a body that is not an object before validation
    slow = list(route.validator.iter_errors(params))
    if route.is_valid(params):
        assert slow == [], f"{path}: fast accepted {params!r}, jsonschema: {slow[0].message}"
    if slow:  # refused: the answer lists jsonschema's errors, as before the fast path
        assert [e.message for e in route.validate(params)] == [
            e.message
            for e in sorted(
                slow, key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in e.absolute_path]
            )
        ]


@pytest.mark.parametrize(
    "params",
    [
        {"customer_key": "k", "reservations": [{"reservation_key": "r", "starts_at": "2031-01-01T15:00:00"}]},
        {"customer_key": True},
        {"customer_key": "k", "reservations": [{"space_keys": ["a"]}]},
        {"customer_key": "k", "reservations": [{"reservation_key": "r", "space_keys": "a"}]},
        {"customer_key": "k", "user_identities": [{"user_identity_key": "u", "email_address": "no-at-sign"}]},
        {"customer_key": ""},
    ],
)
def test_an_attacker_body_the_fast_validator_refuses_is_refused_with_jsonschemas_errors(spec, params):
    route = spec.routes["/customers/push_data"]
    assert route.fast_validator is not None
    assert not route.is_valid(params)
    errors = route.validate(params)
    assert errors, params
    assert [e.message for e in errors] == [
        e.message for e in route.validator.iter_errors(params) if e.message in {x.message for x in errors}
    ]


def test_the_fast_validator_leaves_the_request_as_sent(spec):
    """fastjsonschema writes schema defaults into the data unless told not to: a handler would then see
    parameters the app never sent."""
    route = spec.routes["/access_codes/list"]
    assert route.fast_validator is not None
    assert "default" in route.properties["limit"]  # the schema has one to write
    params = {"device_id": "6f1c8e8a-4f6a-4b8e-9d3c-2a1f0b9e7c11"}
    assert route.is_valid(params)
    assert params == {"device_id": "6f1c8e8a-4f6a-4b8e-9d3c-2a1f0b9e7c11"}


def test_a_route_validates_before_its_fast_validator_is_compiled_and_never_waits_for_it(spec):
    """The first request of a route is validated by jsonschema while the fast validator compiles on the
    background thread (push_data's takes 50 ms: charged to a first request, it marked the route slow in
    that workspace for good); the answers are the same either way."""
    fresh = SeamSpec(spec.document, spec.version).routes["/customers/push_data"]
    valid = {"customer_key": "k", "reservations": [{"reservation_key": "r", "space_keys": ["a"]}]}
    invalid = {"customer_key": "k", "reservations": [{"space_keys": "a"}]}
    assert not fresh.is_valid(valid)  # not compiled yet: asked for, not waited for
    before = ([e.message for e in fresh.validate(valid)], [e.message for e in fresh.validate(invalid)])
    wait_until(lambda: fresh._fast_compiled, 60)
    assert fresh.is_valid(valid)
    assert not fresh.is_valid(invalid)
    after = ([e.message for e in fresh.validate(valid)], [e.message for e in fresh.validate(invalid)])
    assert before == after
    assert before[0] == [] and before[1]
