"""The committed SDK surface matches the installed official packages (regenerate with the module's
--write).
"""

from __future__ import annotations

from parts import needs
from rubric_helpers import REPO

from skillassay.seam.rubric import sdk_surface

NODE_MODULES = REPO / "node" / "node_modules"


@needs((NODE_MODULES / "@seamapi" / "http").is_dir(), "the official npm SDK (npm ci --prefix node)")
def test_committed_surface_is_current():
    import seam  # noqa: F401 - the official PyPI SDK is a test dependency: its absence is a failure

    fresh = sdk_surface.render(sdk_surface.generate(NODE_MODULES))
    assert fresh == sdk_surface.DATA_FILE.read_text(encoding="utf-8"), (
        "the SDK surface is stale: python -m skillassay.seam.rubric.sdk_surface --write"
    )


def test_surface_facts():
    py = sdk_surface.language_surface("python")["methods"]
    js = sdk_surface.language_surface("typescript")["methods"]
    assert py["customers.push_data"]["name"] == "push_data"
    assert js["customers.push_data"]["name"] == "pushData"
    assert js["access_grants.create"]["name"] == "create"
    assert "customer_keys" in py["customers.delete_data"]["params"]
    assert "customer_key" not in js["customers.delete_data"]["params"]
    assert "access_code.set_on_device" in sdk_surface.event_types()
    assert sdk_surface.snake("accessGrants") == "access_grants"


def test_committed_seam_routes_are_the_shipped_documents():
    # the rubric reads the route paths from its own small file; they must be the OpenAPI document's own
    from skillassay.seam.emulator.spec import PINNED_TYPES_VERSION, load_spec
    from skillassay.seam.rubric import rawhttp

    assert rawhttp.ROUTES_FILE.read_text(encoding="utf-8") == rawhttp.render_routes(
        PINNED_TYPES_VERSION, load_spec().routes
    ), "seam_routes.json is stale: python scripts/export_seam_openapi.py"
    assert rawhttp.seam_routes() == frozenset(load_spec().routes)
