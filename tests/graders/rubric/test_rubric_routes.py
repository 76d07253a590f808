"""webhook_route_added on Next.js file-based routes and FastAPI routers, in styles the fixtures do not use:
handlers exported as constants, wrapped, re-exported from another module, pages/api; routers mounted across
files. Includes decoys: another route file's handler that does handle Seam events must not lend its events."""

from __future__ import annotations

import textwrap

from rubric_helpers import RA_KEY_PY, scores

NEXT_PRISTINE = {
    "lib/reservations.ts": """
        export async function createReservation(input: unknown) { return { id: 'r1' }; }
        export async function updateReservation(id: string, input: unknown) { return { id }; }
        export async function cancelReservation(id: string) { return { id }; }
    """,
    "app/api/reservations/route.ts": """
        import { createReservation } from '@/lib/reservations';
        export async function POST(request: Request) {
          return Response.json(await createReservation(await request.json()), { status: 201 });
        }
    """,
    "app/api/webhooks/payments/route.ts": """
        export async function POST(request: Request) {
          const event = await request.json();
          if (event.type === 'access_code.set_on_device') { console.log('odd, but old'); }
          return Response.json({ received: true });
        }
    """,
}

SEAM_HANDLER = """
    export async function handleSeamEvent(request: Request) {
      const event = await request.json();
      switch (event.event_type) {
        case 'access_code.set_on_device': console.log('set'); break;
        case 'device.disconnected': console.log('offline'); break;
      }
      return new Response(null, { status: 204 });
    }
"""


def _webhook(app) -> tuple[float, list[str]]:
    result = app.grade()
    category = result.categories["webhook_setup"]
    return category.score, [e.message for e in category.evidence]


def test_next_handler_reexported_from_another_module(make_app):
    app = make_app(
        NEXT_PRISTINE,
        {
            "lib/seam/webhooks.ts": SEAM_HANDLER,
            "app/api/webhooks/seam/route.ts": "export { handleSeamEvent as POST } from "
            "'@/lib/seam/webhooks';\n",
        },
    )
    score, evidence = _webhook(app)
    assert score == 1.0, evidence
    assert any(
        "new route POST /api/webhooks/seam handles Seam events" in e and "lib/seam/webhooks.ts" in e
        for e in evidence
    ), evidence


def test_next_reexported_handler_is_not_confused_with_another_files_post(make_app):
    # The new route re-exports a POST that handles no Seam event; another changed route file's POST does.
    # Matching handlers by name alone would lend the new route those events.
    app = make_app(
        NEXT_PRISTINE,
        {
            "app/api/webhooks/seam/impl.ts": "export async function POST(request: Request) { return new "
            "Response(null); }\n",
            "app/api/webhooks/seam/route.ts": "export { POST } from './impl';\n",
            "app/api/webhooks/payments/route.ts": NEXT_PRISTINE["app/api/webhooks/payments/route.ts"].replace(
                "'odd, but old'", "'still old'"
            ),
        },
    )
    score, evidence = _webhook(app)
    assert score == 0.5, evidence  # a new webhook route, but without Seam events


def test_next_const_export_with_wrapper_and_pages_api(make_app):
    wrapped = make_app(
        NEXT_PRISTINE,
        {
            "app/api/integrations/seam/route.ts": """
            import { verified } from '@/lib/verify';
            export const POST = verified(async (request: Request) => {
              const { event_type } = await request.json();
              if (['access_method.issued', 'access_code.failed_to_set_on_device'].includes(event_type)) {
                console.log(event_type);
              }
              return new Response(null, { status: 204 });
            });
        """,
        },
    )
    assert _webhook(wrapped)[0] == 1.0

    pages = make_app(
        NEXT_PRISTINE,
        {
            "pages/api/seam-events.ts": """
            const handlers: Record<string, (e: unknown) => void> = {
              'access_code.set_on_device': (e) => console.log(e),
            };
            export default async function handler(req, res) {
              handlers[req.body.event_type]?.(req.body);
              res.status(200).end();
            }
        """,
        },
    )
    score, evidence = _webhook(pages)
    assert score == 1.0 and any("ANY /api/seam-events" in e for e in evidence), evidence


def test_next_edited_existing_route_is_not_new(make_app):
    app = make_app(
        NEXT_PRISTINE,
        {
            "app/api/webhooks/payments/route.ts": NEXT_PRISTINE["app/api/webhooks/payments/route.ts"].replace(
                "'odd, but old'", "'device.disconnected'"
            ),
        },
    )
    assert _webhook(app) == (0.0, ["no new HTTP route"])


FASTAPI_PRISTINE = {
    "app/main.py": """
        from fastapi import FastAPI
        from app.routers import reservations, webhooks
        app = FastAPI()
        app.include_router(reservations.router, prefix="/api")
        app.include_router(webhooks.router, prefix="/hooks")
    """,
    "app/routers/reservations.py": """
        from fastapi import APIRouter
        from app.services import create_reservation, update_reservation, cancel_reservation
        router = APIRouter(prefix="/reservations")

        @router.post("")
        def create(body: dict):
            return create_reservation(body)
    """,
    "app/routers/webhooks.py": """
        from fastapi import APIRouter
        router = APIRouter()

        @router.post("/payments")
        def payments(event: dict):
            if event.get("type") == "device.disconnected":
                return {}
            return {}
    """,
    "app/services.py": """
        def create_reservation(data): return data
        def update_reservation(rid, data): return data
        def cancel_reservation(rid): return rid
    """,
}


def test_fastapi_new_router_mounted_in_main_handles_events(make_app):
    app = make_app(
        FASTAPI_PRISTINE,
        {
            "app/main.py": textwrap.dedent(FASTAPI_PRISTINE["app/main.py"])
            + """
from app.routers.seam import router as seam_router
app.include_router(seam_router, prefix="/integrations")
""",
            "app/routers/seam.py": """
            from fastapi import APIRouter, Request
            router = APIRouter(prefix="/seam")
            HANDLED = {"access_code.set_on_device", "access_method.issued"}

            @router.api_route("/events", methods=["POST"])
            async def events(request: Request):
                event = await request.json()
                if event["event_type"] in HANDLED:
                    return {"handled": True}
                return {"handled": False}
        """,
        },
    )
    score, evidence = _webhook(app)
    assert score == 1.0, evidence
    assert any("new route POST /integrations/seam/events handles Seam events" in e for e in evidence), (
        evidence
    )
    # the decoy: the old payments route compares an event type, but it is not new
    assert not any("/payments" in e for e in evidence), evidence


def test_fastapi_remounting_an_old_router_does_not_make_its_routes_new(make_app):
    # main.py changes the prefix the old webhooks router is mounted under: same routes, new full paths
    app = make_app(
        FASTAPI_PRISTINE,
        {
            "app/main.py": FASTAPI_PRISTINE["app/main.py"].replace('prefix="/hooks"', 'prefix="/webhooks"'),
            "app/routers/webhooks.py": FASTAPI_PRISTINE["app/routers/webhooks.py"] + "\n# touched\n",
        },
    )
    result = app.grade(key=RA_KEY_PY)
    assert scores(result)["webhook_setup"] == 0.0, result.categories["webhook_setup"].evidence
