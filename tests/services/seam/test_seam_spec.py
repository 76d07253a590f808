"""The pinned OpenAPI document: loading, caching, validation and the linter's parameter oracle."""

from __future__ import annotations

import json

import pytest

from skillassay.services.seam import spec as spec_module
from skillassay.services.seam.params import coerce_query, format_validation_errors
from skillassay.services.seam.spec import PINNED_TYPES_VERSION, SeamSpecError, load_spec


@pytest.fixture(scope="module")
def spec():
    return load_spec()


def test_pinned_version_and_routes(spec):
    assert spec.version == PINNED_TYPES_VERSION
    assert len(spec.routes) > 300
    assert spec.route("/customers/delete_data").methods == {"DELETE", "POST"}
    assert spec.route("spaces.add_devices").methods == {"POST", "PUT"}


def test_unknown_parameters_for_the_linter(spec):
    assert spec.unknown_parameters("/customers/delete_data", ["customer_key"]) == ["customer_key"]
    assert spec.unknown_parameters("customers.delete_data", ["customer_keys", "reservation_keys"]) == []
    assert spec.unknown_parameters("customers.pushData", ["customer_key", "reservations", "rooms_list"]) == [
        "rooms_list"
    ]
    assert spec.accepts("customers.push_data", ["customer_key", "spaces"])
    assert not spec.accepts("/customers/delete_data", ["customer_key"])
    assert not spec.accepts("/customers/teleport")
    # parameters that only appear in one branch of a oneOf/allOf still count
    assert spec.accepts("/access_grants/create", ["user_identity", "requested_access_methods", "space_keys"])
    assert spec.required_parameters("/customers/push_data") == ["customer_key"]
    with pytest.raises(KeyError):
        spec.unknown_parameters("/customers/teleport", ["x"])


def test_validation_uses_draft4_with_nullable(spec):
    route = spec.route("/access_grants/create")
    ok = {
        "user_identity_id": "6f1c8e8a-4f6a-4b8e-9d3c-2a1f0b9e7c11",
        "requested_access_methods": [{"mode": "code"}],
        "name": None,
        "unknown_extra": 1,
    }
    assert route.validate(ok) == []
    errors = route.validate({"requested_access_methods": [{"mode": "laser"}]})
    message, tree = format_validation_errors(errors)
    assert tree["requested_access_methods"]["0"]["mode"]["_errors"]
    errors = spec.route("/access_codes/create").validate({})
    _, tree = format_validation_errors(errors)
    assert tree["device_id"]["_errors"] == ["Required"]


def test_query_coercion(spec):
    route = spec.route("/devices/list")
    params = coerce_query(
        [
            ("device_ids", "a"),
            ("device_ids", "b"),
            ("limit", "10"),
            ("_strict", "true"),
            ("custom_metadata_has.k", "v"),
        ],
        route.properties,
        route._resolve,
    )
    assert params == {"device_ids": ["a", "b"], "limit": 10, "custom_metadata_has": {"k": "v"}}
    assert coerce_query([("device_ids", "")], route.properties, route._resolve) == {"device_ids": []}


def test_validators_are_compiled_once(spec):
    route = spec.route("/customers/push_data")
    body = {
        "customer_key": "c",
        "reservations": [
            {
                "reservation_key": f"r{i}",
                "space_keys": ["s"],
                "starts_at": "2031-01-01T00:00:00Z",
                "ends_at": "2031-01-02T00:00:00Z",
            }
            for i in range(5)
        ],
    }
    assert route.validate(body) == []
    assert route.validator is route.validator  # compiled once (its speed: benchmarks/seam_spec.py)
    assert route.validate({**body, "customer_key": 5})  # and it still validates


def test_json_export_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path))
    path, version = spec_module.openapi_json_path()
    assert path == tmp_path / f"seam-openapi-{version}.json"
    document = json.loads(path.read_text())
    assert document["openapi"].startswith("3.") and "/customers/push_data" in document["paths"]
    mtime = path.stat().st_mtime_ns
    assert spec_module.openapi_json_path()[0].stat().st_mtime_ns == mtime


def test_missing_package_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLASSAY_NODE_DIR", str(tmp_path))
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SeamSpecError, match="npm ci --prefix node"):
        spec_module.openapi_json_path()
