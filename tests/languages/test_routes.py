"""Route discovery: Next.js file-based routes and FastAPI/Flask routers mounted across files.

Written in the styles the shipped fixtures do not use (they export `async function POST` and mount one router
level): handlers as `export const`, wrapped, re-exported from another module, destructured; route groups,
slots, private folders, catch-alls, pages/api; FastAPI routers nested in routers, `api_route`,
`add_api_route`, imports of every form; Flask's url_prefix override.
"""

from __future__ import annotations

import textwrap

import pytest

from skillassay.languages import parser_for
from skillassay.languages.base import Module
from skillassay.languages.routes import mounted_routes
from skillassay.languages.typescript import next_route_path


def _parse(path: str, source: str) -> Module:
    parse = parser_for(path)
    assert parse is not None, path
    return parse(textwrap.dedent(source).encode(), path)


def _routes(files: dict[str, str]) -> set[tuple[str, str, str]]:
    """(file, method, path) of every route, mounts applied."""
    modules = [_parse(path, source) for path, source in files.items()]
    return {(m.module.path, m.route.method, m.path) for m in mounted_routes(modules)}


def _handlers(module: Module) -> dict[str, list[str]]:
    """method -> handler descriptions: `fn:<name>` for a function, `ref:<a.b>`, `call:<name>(fn:...)`."""

    def show(value) -> str:
        if value.kind == "func":
            return "fn:" + (module.functions[value.func].qualname if value.func is not None else "?")
        if value.kind == "ref":
            return "ref:" + ".".join(value.chain)
        if value.kind == "call":
            return f"call:{'.'.join(value.chain)}(" + ",".join(show(a) for a in value.args) + ")"
        return value.kind

    return {r.method: [show(h) for h in r.handlers] for r in module.routes}


# ---------------------------------------------------------------------------- Next.js: which files are routes
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("app/route.ts", ("app", "/")),
        ("app/api/bookings/route.ts", ("app", "/api/bookings")),
        ("app/api/bookings/[id]/route.ts", ("app", "/api/bookings/[id]")),
        ("app/(admin)/api/(v2)/rooms/route.ts", ("app", "/api/rooms")),  # route groups leave no trace
        ("app/@modal/api/x/route.js", ("app", "/api/x")),  # parallel-route slots neither
        ("app/docs/[...slug]/route.tsx", ("app", "/docs/[...slug]")),
        ("app/docs/[[...slug]]/route.mjs", ("app", "/docs/[[...slug]]")),
        ("src/app/api/hooks/route.ts", ("app", "/api/hooks")),
        ("apps/web/app/api/hooks/route.ts", ("app", "/api/hooks")),  # a monorepo's app
        ("web/src/app/app/route.ts", ("app", "/app")),  # a folder named app inside the app router
        ("pages/api/bookings/[id].ts", ("pages", "/api/bookings/[id]")),
        ("pages/api/index.ts", ("pages", "/api")),
        ("src/pages/api/webhooks/seam.js", ("pages", "/api/webhooks/seam")),
        ("app/_lib/route.ts", None),  # private folders are not routed
        ("app/api/(.)photo/route.ts", None),  # intercepting routes are not URL routes
        ("app/api/bookings/page.tsx", None),
        ("app/api/bookings/handlers.ts", None),
        ("app/api/route.d.ts", None),
        ("lib/route.ts", None),  # not under app/
        ("pages/about.tsx", None),  # a page, not an API route
        ("pages/api/_utils.ts", None),
        ("src/routes/reservations.ts", None),  # an Express router file
    ],
)
def test_next_route_files(path: str, expected) -> None:
    assert next_route_path(path) == expected


# ----------------------------------------------------------------------------- Next.js: handlers
def test_app_router_exports_in_every_form() -> None:
    module = _parse(
        "app/api/bookings/[id]/route.ts",
        """
        import { withAuth } from '@/lib/auth';
        import { handlers } from '@/auth';
        export const GET = async (request: Request) => Response.json({ ok: true });
        export const POST = withAuth(async function create(request: Request) { return new Response(null); });
        async function change(request: Request) { return new Response(null); }
        export { change as PUT };
        export { remove as DELETE, head as HEAD } from '../handlers';
        export const { OPTIONS } = handlers;
        export const dynamic = 'force-dynamic';
        export const runtime = 'nodejs';
        export function helper() {}
        function PATCH() {}  // not exported: not a route
        export default function GETTER() {}
    """,
    )
    assert {(r.method, r.path) for r in module.routes} == {
        (m, "/api/bookings/[id]") for m in ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")
    }
    assert _handlers(module) == {
        "GET": ["fn:GET"],
        "POST": ["call:withAuth(fn:create)"],
        "PUT": ["ref:change"],
        "DELETE": ["ref:remove"],
        "HEAD": ["ref:head"],
        "OPTIONS": ["ref:handlers.OPTIONS"],
    }
    # re-exported handlers remember where they come from, relative to the route file
    assert [(r.stem, r.name) for r in module.import_refs["remove"]] == [
        ("app/api/bookings/handlers", "remove")
    ]
    assert module.import_refs["withAuth"][0].fuzzy and module.import_refs["withAuth"][0].stem == "lib/auth"


def test_export_star_and_non_route_files_declare_nothing() -> None:
    assert _parse("app/api/x/route.ts", "export * from './impl';\n").routes == []
    assert _parse("app/api/x/impl.ts", "export async function POST() {}\n").routes == []
    assert _parse("app/api/x/page.tsx", "export default function Page() { return null; }\n").routes == []


def test_pages_api_default_export_answers_every_method() -> None:
    forms = {
        "pages/api/a.ts": "export default async function handler(req, res) { res.status(200).end(); }",
        "pages/api/b.ts": "const handler = (req, res) => res.end();\nexport default withSentry(handler);",
        "pages/api/c/index.js": "export default (req, res) => res.end();",
        "pages/api/d.ts": "export function config() {}\nexport const POST = () => {};",  # no default: nothing
    }
    modules = {path: _parse(path, text) for path, text in forms.items()}
    assert {(r.method, r.path) for r in modules["pages/api/a.ts"].routes} == {("ANY", "/api/a")}
    assert _handlers(modules["pages/api/a.ts"]) == {"ANY": ["fn:handler"]}
    assert _handlers(modules["pages/api/b.ts"]) == {"ANY": ["call:withSentry(ref:handler)"]}
    assert [(r.method, r.path) for r in modules["pages/api/c/index.js"].routes] == [("ANY", "/api/c")]
    assert modules["pages/api/d.ts"].routes == []


# ----------------------------------------------------------------------------- FastAPI
FASTAPI_APP = {
    "svc/main.py": """
        from fastapi import FastAPI
        from svc.routers import bookings
        from svc.routers.hooks import router as hooks_router
        import svc.routers.admin
        from .api import api
        app = FastAPI()
        app.include_router(bookings.router, prefix="/api")
        app.include_router(hooks_router, prefix="/webhooks")
        app.include_router(svc.routers.admin.router, prefix="/admin")
        app.include_router(api, prefix="/v2")

        @app.get("/health")
        def health():
            return {}
    """,
    "svc/routers/__init__.py": "",
    "svc/routers/bookings.py": """
        from fastapi import APIRouter
        router = APIRouter(prefix="/bookings", tags=["bookings"])

        @router.api_route("/{booking_id}", methods=["PUT", "PATCH"])
        def change(booking_id: str): ...

        @router.api_route("/{booking_id}/any")
        def anything(booking_id: str): ...
    """,
    "svc/routers/hooks.py": """
        from fastapi import APIRouter
        router = APIRouter()

        @router.post(path="/seam")
        async def seam_events(): ...

        def legacy(): ...
        router.add_api_route("/legacy", legacy, methods=["POST"])
    """,
    "svc/routers/admin.py": """
        from fastapi import APIRouter
        router = APIRouter(prefix="/tools")

        @router.delete("/cache")
        def clear(): ...
    """,
    "svc/api.py": """
        from fastapi import APIRouter
        api = APIRouter(prefix="/api")
        rooms = APIRouter(prefix="/rooms")
        locks = APIRouter()

        @rooms.get("/{room_id}")
        def room(room_id: str): ...

        @locks.post("/unlock")
        def unlock(): ...

        rooms.include_router(locks, prefix="/{room_id}/locks")
        api.include_router(rooms, prefix="/hotel")
    """,
}


def test_fastapi_prefixes_across_files_and_nested_routers() -> None:
    assert _routes(FASTAPI_APP) == {
        ("svc/main.py", "GET", "/health"),
        ("svc/routers/bookings.py", "PUT", "/api/bookings/{booking_id}"),
        ("svc/routers/bookings.py", "PATCH", "/api/bookings/{booking_id}"),
        ("svc/routers/bookings.py", "ANY", "/api/bookings/{booking_id}/any"),  # api_route without methods
        ("svc/routers/hooks.py", "POST", "/webhooks/seam"),
        ("svc/routers/hooks.py", "POST", "/webhooks/legacy"),
        ("svc/routers/admin.py", "DELETE", "/admin/tools/cache"),
        # FastAPI: include prefix + the including router's own prefix, at every level
        ("svc/api.py", "GET", "/v2/api/hotel/rooms/{room_id}"),
        ("svc/api.py", "POST", "/v2/api/hotel/rooms/{room_id}/locks/unlock"),
    }


def test_fastapi_router_mounted_nowhere_parsed_keeps_its_own_prefix() -> None:
    # main.py not among the parsed files (unchanged): the router's own prefix is all that is known
    files = {k: v for k, v in FASTAPI_APP.items() if k != "svc/main.py"}
    routes = _routes(files)
    assert ("svc/routers/bookings.py", "PUT", "/bookings/{booking_id}") in routes
    assert ("svc/routers/hooks.py", "POST", "/seam") in routes


def test_fastapi_router_mounted_twice_has_both_paths_and_cycles_end() -> None:
    routes = _routes(
        {
            "main.py": """
            from fastapi import FastAPI, APIRouter
            from hooks import router
            app = FastAPI()
            app.include_router(router, prefix="/v1")
            app.include_router(router, prefix="/v2")
            a = APIRouter(prefix="/a")
            b = APIRouter(prefix="/b")
            a.include_router(b)
            b.include_router(a)

            @a.get("/x")
            def x(): ...
        """,
            "hooks.py": """
            from fastapi import APIRouter
            router = APIRouter(prefix="/hooks")

            @router.post("/seam")
            def seam(): ...
        """,
        }
    )
    assert {("hooks.py", "POST", "/v1/hooks/seam"), ("hooks.py", "POST", "/v2/hooks/seam")} <= routes
    # a cycle is cut, not followed forever
    assert any(f == "main.py" and p.endswith("/a/x") for f, _, p in routes)


def test_names_that_only_look_like_routers_are_not_mounted() -> None:
    routes = _routes(
        {
            "main.py": """
            from fastapi import FastAPI
            import requests
            app = FastAPI()
            app.include_router(requests.router, prefix="/x")   # a package, not a parsed module
            prefix = "/dyn"
            app.include_router(local_router, prefix=prefix)     # a prefix that is not a literal: unknown
        """,
            "routes.py": """
            from fastapi import APIRouter
            router = APIRouter()

            @router.get("/ping")
            def ping(): ...
        """,
        }
    )
    assert routes == {("routes.py", "GET", "/ping")}


# ----------------------------------------------------------------------------- Flask
def test_flask_register_blueprint_url_prefix_replaces_the_blueprints_own() -> None:
    routes = _routes(
        {
            "app.py": """
            from flask import Flask
            from blueprints.hooks import hooks_bp
            from blueprints import api
            app = Flask(__name__)
            app.register_blueprint(hooks_bp, url_prefix="/integrations")
            app.register_blueprint(api.api_bp)
        """,
            "blueprints/hooks.py": """
            from flask import Blueprint
            hooks_bp = Blueprint("hooks", __name__, url_prefix="/webhooks")

            @hooks_bp.post("/seam")
            def seam(): ...
        """,
            "blueprints/api.py": """
            from flask import Blueprint
            api_bp = Blueprint("api", __name__, url_prefix="/api")
            v1 = Blueprint("v1", __name__, url_prefix="/v1")

            @v1.route("/bookings", methods=["POST", "GET"])
            def bookings(): ...

            api_bp.register_blueprint(v1)
        """,
        }
    )
    assert routes == {
        ("blueprints/hooks.py", "POST", "/integrations/seam"),  # Flask: the registration's url_prefix wins
        ("blueprints/api.py", "POST", "/api/v1/bookings"),  # nested: the parent's prefix, then the child's
        ("blueprints/api.py", "GET", "/api/v1/bookings"),
    }
