# ruff: noqa: E501 - apps written as their authors would, inside strings
"""Labelled apps in styles no shipped fixture uses, for the stacks (Express, Next.js, Flask, FastAPI, Rails) and
the three Seam paths, each with the score every rubric category should get (what the app really does, as
the sandbox would see it). Shared by tests/graders/rubric/test_rubric_adversarial_styles.py and
benchmarks/rubric_labelled.py (which prints the accuracy).

Styles: SDK methods handed to threads, executors, partials, background tasks and timers; a coroutine that
is never awaited (never runs); clients made in ``lib/`` and used in another module under names that do not
say Seam (an SDK client, an axios instance with a base URL, an httpx client); class-based services with
constructor / ``Depends`` injection; route handlers calling ``lib/`` functions; computed method names
(``getattr(x, "create")``, ``x[OP]()`` with a constant); public or exported helpers nothing calls."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillassay.seam.plan import AnswerKey

CATEGORIES = (
    "api_path_selection",
    "file_targeting",
    "integration_placement",
    "api_correctness",
    "lifecycle_completeness",
)
FULL = dict.fromkeys(CATEGORIES, 1.0)
NOTHING = {**dict.fromkeys(CATEGORIES, 0.0), "file_targeting": 1.0}


@dataclass
class Case:
    name: str
    stack: str  # express, nextjs, flask, fastapi
    path: str  # reservation_automations, access_grants, access_codes
    styles: str  # what it exercises
    pristine: dict[str, str]
    changes: dict[str, str]
    key: AnswerKey
    endpoints: dict[str, tuple[str, str]]
    expected: dict[str, float] = field(default_factory=lambda: dict(FULL))


BOOKING_ENDPOINTS = {
    "create": ("POST", "/api/bookings"),
    "update": ("PUT", "/api/bookings/{{RESERVATION_ID}}"),
    "cancel": ("DELETE", "/api/bookings/{{RESERVATION_ID}}"),
}


def _key(path: str, placements: tuple[str, str, str]) -> AnswerKey:
    create, update, cancel = placements
    if path == "reservation_automations":
        return AnswerKey(
            expected_new_files_allowed=["*"],
            expected_calls={
                "create": ["customers.push_data"],
                "update": ["customers.push_data"],
                "cancel": ["customers.delete_data"],
            },
            expected_placements={"customers.push_data": [create, update], "customers.delete_data": [cancel]},
            required_parameters={
                "push_data": ["customer_key", "reservations", "user_identities"],
                "delete_data": ["reservation_keys"],
            },
        )
    ns = "access_grants" if path == "access_grants" else "access_codes"
    first = (
        ["user_identity_id", "device_ids", "starts_at", "ends_at"]
        if ns == "access_grants"
        else [
            "device_id",
            "starts_at",
            "ends_at",
        ]
    )
    return AnswerKey(
        expected_new_files_allowed=["*"],
        expected_calls={"create": [f"{ns}.create"], "update": [f"{ns}.update"], "cancel": [f"{ns}.delete"]},
        expected_placements={f"{ns}.create": [create], f"{ns}.update": [update], f"{ns}.delete": [cancel]},
        required_parameters={"create": first, "delete": [f"{ns[:-1]}_id"]},
    )


# ============================================================================= Flask
FLASK_APP = """
from flask import Flask
from routes import bp

app = Flask(__name__)
app.register_blueprint(bp, url_prefix="/api")
"""
FLASK_ROUTES = """
from flask import Blueprint, jsonify, request
from services.bookings import create_booking, update_booking, cancel_booking

bp = Blueprint("bookings", __name__)


@bp.post("/bookings")
def create():
    return jsonify({"booking": create_booking(request.get_json())}), 201


@bp.put("/bookings/<bid>")
def update(bid):
    return jsonify({"booking": update_booking(bid, request.get_json())})


@bp.delete("/bookings/<bid>")
def cancel(bid):
    return jsonify({"booking": cancel_booking(bid)})
"""
FLASK_SERVICE = """
BOOKINGS = {}


def create_booking(data):
    BOOKINGS[data["id"]] = data
    return data


def update_booking(bid, data):
    BOOKINGS[bid].update(data)
    return BOOKINGS[bid]


def cancel_booking(bid):
    return BOOKINGS.pop(bid)
"""
FLASK = {
    "app.py": FLASK_APP,
    "routes.py": FLASK_ROUTES,
    "services/__init__.py": "",
    "services/bookings.py": FLASK_SERVICE,
}
FLASK_PLACES = ("create_booking", "update_booking", "cancel_booking")

FLASK_THREADS = """
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from seam import Seam

seam = Seam()
pool = ThreadPoolExecutor(max_workers=2)
BOOKINGS = {}


def create_booking(data):
    BOOKINGS[data["id"]] = data
    worker = threading.Thread(
        target=seam.access_codes.create,
        kwargs={"device_id": data["device"], "starts_at": data["start"], "ends_at": data["end"], "name": data["id"]},
    )
    worker.start()
    return data


def update_booking(bid, data):
    BOOKINGS[bid].update(data)
    pool.submit(seam.access_codes.update, access_code_id=BOOKINGS[bid]["code"], ends_at=data["end"])
    return BOOKINGS[bid]


def cancel_booking(bid):
    remove = partial(seam.access_codes.delete, access_code_id=BOOKINGS[bid]["code"])
    remove()
    return BOOKINGS.pop(bid)
"""

FLASK_CLIENTS = """
import os

from seam import Seam

upstream = Seam(api_key=os.environ["SEAM_API_KEY"])
"""
FLASK_RA_LIB = """
from lib.clients import upstream

BOOKINGS = {}
DELETE = "delete_data"


def _payload(data):
    return {
        "customer_key": data["site"],
        "user_identities": [{"user_identity_key": data["member"], "name": data["member"]}],
        "reservations": [{"reservation_key": data["id"], "user_identity_key": data["member"]}],
    }


def create_booking(data):
    BOOKINGS[data["id"]] = data
    upstream.customers.push_data(**_payload(data))
    return data


def update_booking(bid, data):
    BOOKINGS[bid].update(data)
    getattr(upstream.customers, "push_data")(**_payload(BOOKINGS[bid]))
    return BOOKINGS[bid]


def cancel_booking(bid):
    getattr(upstream.customers, DELETE)(reservation_keys=[bid])
    return BOOKINGS.pop(bid)
"""

FLASK_DEAD_GRANTS = """
from seam import Seam

seam = Seam()


def grant_access(booking):
    return seam.access_grants.create(
        user_identity_id=booking["member"], device_ids=[booking["device"]],
        starts_at=booking["start"], ends_at=booking["end"],
    )


def revoke_access(grant_id):
    seam.access_grants.delete(access_grant_id=grant_id)


class GrantSync:
    def move(self, grant_id, ends_at):
        seam.access_grants.update(access_grant_id=grant_id, ends_at=ends_at)
"""

# ============================================================================= FastAPI
FASTAPI_MAIN = """
from fastapi import FastAPI
from routers import bookings

app = FastAPI()
app.include_router(bookings.router, prefix="/api")
"""
FASTAPI_ROUTER = """
from fastapi import APIRouter

router = APIRouter(prefix="/bookings")
BOOKINGS = {}


@router.post("")
async def create_booking(body: dict):
    BOOKINGS[body["id"]] = body
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict):
    BOOKINGS[bid].update(body)
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str):
    return {"booking": BOOKINGS.pop(bid)}
"""
FASTAPI = {"main.py": FASTAPI_MAIN, "routers/__init__.py": "", "routers/bookings.py": FASTAPI_ROUTER}
FASTAPI_PLACES = ("create_booking", "update_booking", "cancel_booking")

FASTAPI_GRANT_SERVICE = """
import asyncio
from functools import partial

from seam import Seam


class GrantService:
    def __init__(self, client):
        self.client = client

    async def open(self, body):
        grant = await asyncio.to_thread(
            self.client.access_grants.create,
            user_identity_id=body["member"],
            device_ids=[body["device"]],
            starts_at=body["start"],
            ends_at=body["end"],
        )
        return grant.access_grant_id

    async def move(self, grant_id, ends_at):
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(
            None, partial(self.client.access_grants.update, access_grant_id=grant_id, ends_at=ends_at)
        )

    async def close(self, grant_id):
        await asyncio.to_thread(self.client.access_grants.delete, access_grant_id=grant_id)


def get_grants() -> GrantService:
    return GrantService(Seam())
"""
FASTAPI_GRANT_ROUTER = """
from fastapi import APIRouter, Depends
from services.grants import GrantService, get_grants

router = APIRouter(prefix="/bookings")
BOOKINGS = {}


@router.post("")
async def create_booking(body: dict, grants: GrantService = Depends(get_grants)):
    body["grant"] = await grants.open(body)
    BOOKINGS[body["id"]] = body
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict, grants: GrantService = Depends(get_grants)):
    BOOKINGS[bid].update(body)
    await grants.move(BOOKINGS[bid]["grant"], body["end"])
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str, grants: GrantService = Depends(get_grants)):
    await grants.close(BOOKINGS[bid]["grant"])
    return {"booking": BOOKINGS.pop(bid)}
"""

FASTAPI_SYNC = """
from seam import Seam

seam = Seam()


async def publish(body):
    seam.customers.push_data(
        customer_key=body["site"],
        user_identities=[{"user_identity_key": body["member"]}],
        reservations=[{"reservation_key": body["id"]}],
    )


async def retract(bid):
    seam.customers.delete_data(reservation_keys=[bid])
"""
FASTAPI_UNAWAITED_ROUTER = """
import asyncio

from fastapi import APIRouter
from integrations.seam_sync import publish, retract

router = APIRouter(prefix="/bookings")
BOOKINGS = {}


@router.post("")
async def create_booking(body: dict):
    BOOKINGS[body["id"]] = body
    publish(body)
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict):
    BOOKINGS[bid].update(body)
    await publish(BOOKINGS[bid])
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str):
    asyncio.create_task(retract(bid))
    return {"booking": BOOKINGS.pop(bid)}
"""

FASTAPI_BG_ROUTER = """
import os

from fastapi import APIRouter, BackgroundTasks
from seam import Seam

router = APIRouter(prefix="/bookings")
BOOKINGS = {}
codes = Seam(api_key=os.environ["SEAM_API_KEY"]).access_codes
REMOVE = "delete"


@router.post("")
async def create_booking(body: dict, tasks: BackgroundTasks):
    BOOKINGS[body["id"]] = body
    tasks.add_task(codes.create, device_id=body["device"], starts_at=body["start"], ends_at=body["end"])
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict, tasks: BackgroundTasks):
    BOOKINGS[bid].update(body)
    tasks.add_task(codes.update, access_code_id=BOOKINGS[bid]["code"], ends_at=body["end"])
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str, tasks: BackgroundTasks):
    tasks.add_task(getattr(codes, REMOVE), access_code_id=BOOKINGS[bid]["code"])
    return {"booking": BOOKINGS.pop(bid)}
"""

FASTAPI_HTTPX_LIB = """
import os

import httpx

api = httpx.Client(
    base_url="https://connect.getseam.com", headers={"Authorization": f"Bearer {os.environ['SEAM_API_KEY']}"}
)
"""
FASTAPI_HTTPX_ROUTER = """
from fastapi import APIRouter
from lib.http import api

router = APIRouter(prefix="/bookings")
BOOKINGS = {}


@router.post("")
async def create_booking(body: dict):
    BOOKINGS[body["id"]] = body
    api.post("/access_codes/create", json={"device_id": body["device"], "starts_at": body["start"], "ends_at": body["end"]})
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict):
    BOOKINGS[bid].update(body)
    api.post("/access_codes/update", json={"access_code_id": BOOKINGS[bid]["code"], "ends_at": body["end"]})
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str):
    api.post("/access_codes/delete", json={"access_code_id": BOOKINGS[bid]["code"]})
    return {"booking": BOOKINGS.pop(bid)}
"""

# ============================================================================= Express
EXPRESS_INDEX = """
import express from 'express';
import bookings from './routes/bookings';

const app = express();
app.use(express.json());
app.use('/api/bookings', bookings);
app.listen(3000);
"""
EXPRESS_ROUTES = """
import { Router } from 'express';
import { createBooking, updateBooking, cancelBooking } from '../services/bookings';

const router = Router();
router.post('/', async (req, res) => { res.status(201).json({ booking: await createBooking(req.body) }); });
router.put('/:id', async (req, res) => { res.json({ booking: await updateBooking(req.params.id, req.body) }); });
router.delete('/:id', async (req, res) => { res.json({ booking: await cancelBooking(req.params.id) }); });
export default router;
"""
EXPRESS_SERVICE = """
const bookings = new Map<string, any>();

export async function createBooking(input: any) {
  bookings.set(input.id, input);
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  return b;
}
"""
EXPRESS = {
    "src/index.ts": EXPRESS_INDEX,
    "src/routes/bookings.ts": EXPRESS_ROUTES,
    "src/services/bookings.ts": EXPRESS_SERVICE,
}
EXPRESS_PLACES = ("createBooking", "updateBooking", "cancelBooking")

EXPRESS_AXIOS_LIB = """
import axios from 'axios';

export const upstream = axios.create({
  baseURL: process.env.SEAM_ENDPOINT ?? 'https://connect.getseam.com',
  headers: { Authorization: `Bearer ${process.env.SEAM_API_KEY}` },
});
"""
EXPRESS_AXIOS_SERVICE = """
import { upstream } from '../lib/http';

const bookings = new Map<string, any>();

function toStay(b: any) {
  return {
    customer_key: b.site,
    user_identities: [{ user_identity_key: b.member, name: b.member }],
    reservations: [{ reservation_key: b.id, user_identity_key: b.member }],
  };
}

export async function createBooking(input: any) {
  bookings.set(input.id, input);
  await upstream.post('/customers/push_data', toStay(input));
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  await upstream.post('/customers/push_data', toStay(b));
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  await upstream.post('/customers/delete_data', { reservation_keys: [id] });
  return b;
}
"""

EXPRESS_UPSTREAM = """
import { SeamHttp } from '@seamapi/http';

export const door = SeamHttp.fromApiKey(process.env.SEAM_API_KEY!);
"""
EXPRESS_ACCESS_SERVICE = """
export class AccessService {
  constructor(private readonly api: any) {}

  async grant(b: any) {
    const created = await this.api.accessGrants.create({
      user_identity_id: b.member, device_ids: [b.device], starts_at: b.start, ends_at: b.end,
    });
    return created.access_grant_id;
  }

  async move(grantId: string, endsAt: string) {
    await this.api.accessGrants.update({ access_grant_id: grantId, ends_at: endsAt });
  }

  revoke(grantId: string) {
    setTimeout(this.api.accessGrants.delete.bind(this.api.accessGrants), 0, { access_grant_id: grantId });
  }
}
"""
EXPRESS_ACCESS_CONTAINER = """
import { door } from './upstream';
import { AccessService } from './access';

export const access = new AccessService(door);
"""
EXPRESS_ACCESS_BOOKINGS = """
import { access } from '../lib/container';

const bookings = new Map<string, any>();

export async function createBooking(input: any) {
  input.grant = await access.grant(input);
  bookings.set(input.id, input);
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  await access.move(b.grant, b.end);
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  access.revoke(b.grant);
  return b;
}
"""

EXPRESS_CODES_SERVICE = """
import { Seam } from 'seam';

const seam = new Seam();
const CREATE = 'create';
const UPDATE = 'update';
const jobs: Array<() => Promise<unknown>> = [];
const bookings = new Map<string, any>();

export async function createBooking(input: any) {
  bookings.set(input.id, input);
  seam.accessCodes[CREATE]({ device_id: input.device, starts_at: input.start, ends_at: input.end });
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  await seam.accessCodes[UPDATE]({ access_code_id: b.code, ends_at: b.end });
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  jobs.push(seam.accessCodes.delete.bind(seam.accessCodes, { access_code_id: b.code }));
  await jobs.shift()?.();
  return b;
}
"""

EXPRESS_DEAD_SERVICE = (
    EXPRESS_SERVICE
    + """
import { Seam } from 'seam';

const seam = new Seam();

export async function syncBooking(b: any) {
  await seam.customers.pushData({
    customer_key: b.site, user_identities: [{ user_identity_key: b.member }], reservations: [{ reservation_key: b.id }],
  });
}

export async function forgetBooking(id: string) {
  await seam.customers.deleteData({ reservation_keys: [id] });
}
"""
)

# ============================================================================= Next.js
NEXT_COLLECTION = """
import { NextResponse } from 'next/server';
import { createBooking } from '@/lib/bookings';

export async function POST(request: Request) {
  return NextResponse.json({ booking: await createBooking(await request.json()) }, { status: 201 });
}
"""
NEXT_ITEM = """
import { NextResponse } from 'next/server';
import { updateBooking, cancelBooking } from '@/lib/bookings';

export async function PUT(request: Request, { params }: { params: { id: string } }) {
  return NextResponse.json({ booking: await updateBooking(params.id, await request.json()) });
}

export async function DELETE(_request: Request, { params }: { params: { id: string } }) {
  return NextResponse.json({ booking: await cancelBooking(params.id) });
}
"""
NEXT_LIB = EXPRESS_SERVICE
NEXT_TSCONFIG = '{ "compilerOptions": { "paths": { "@/*": ["./*"] } } }\n'
NEXT = {
    "app/api/bookings/route.ts": NEXT_COLLECTION,
    "app/api/bookings/[id]/route.ts": NEXT_ITEM,
    "lib/bookings.ts": NEXT_LIB,
    "tsconfig.json": NEXT_TSCONFIG,
}

NEXT_CLIENTS = """
import { Seam } from 'seam';

export const door = new Seam({ apiKey: process.env.SEAM_API_KEY });
"""
NEXT_GRANTS_LIB = """
import { door } from '@/lib/clients';

const bookings = new Map<string, any>();

export async function createBooking(input: any) {
  const grant = await door.accessGrants.create({
    user_identity_id: input.member, device_ids: [input.device], starts_at: input.start, ends_at: input.end,
  });
  bookings.set(input.id, { ...input, grant: grant.access_grant_id });
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  await door.accessGrants.update({ access_grant_id: b.grant, ends_at: b.end });
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  door.accessGrants.delete({ access_grant_id: b.grant });
  return b;
}
"""

NEXT_DEAD_CODES = """
import { Seam } from 'seam';

const seam = new Seam();

export async function issueCode(b: any) {
  return seam.accessCodes.create({ device_id: b.device, starts_at: b.start, ends_at: b.end });
}

export async function dropCode(codeId: string) {
  await seam.accessCodes.delete({ access_code_id: codeId });
}
"""

NEXT_RA_LIB = """
import { Seam } from 'seam';

const seam = new Seam();
const OPS = { push: 'pushData', remove: 'deleteData' } as const;
const bookings = new Map<string, any>();

function stay(b: any) {
  return {
    customer_key: b.site,
    user_identities: [{ user_identity_key: b.member }],
    reservations: [{ reservation_key: b.id, user_identity_key: b.member }],
  };
}

export async function createBooking(input: any) {
  bookings.set(input.id, input);
  queueMicrotask(() => void seam.customers[OPS.push](stay(input)));
  return input;
}

export async function updateBooking(id: string, input: any) {
  const b = { ...bookings.get(id), ...input };
  bookings.set(id, b);
  setTimeout(() => seam.customers['pushData'](stay(b)), 0);
  return b;
}

export async function cancelBooking(id: string) {
  const b = bookings.get(id);
  bookings.delete(id);
  seam.customers[OPS.remove]({ reservation_keys: [id] });
  return b;
}
"""

CASES = [
    Case(
        "flask_access_codes_thread_executor_partial",
        "flask",
        "access_codes",
        "SDK methods run by threading.Thread(target=, kwargs=), executor.submit and functools.partial",
        FLASK,
        {"services/bookings.py": FLASK_THREADS},
        _key("access_codes", FLASK_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "flask_reservations_client_from_lib_getattr",
        "flask",
        "reservation_automations",
        "an SDK client made in lib/ (named `upstream`), getattr with a literal and a constant name",
        FLASK,
        {"lib/__init__.py": "", "lib/clients.py": FLASK_CLIENTS, "services/bookings.py": FLASK_RA_LIB},
        _key("reservation_automations", FLASK_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "flask_access_grants_public_helpers_nothing_calls",
        "flask",
        "access_grants",
        "public functions and a public class's method that call Seam, called by nothing: dead code",
        FLASK,
        {"services/grants.py": FLASK_DEAD_GRANTS},
        _key("access_grants", FLASK_PLACES),
        BOOKING_ENDPOINTS,
        expected=dict(NOTHING),
    ),
    Case(
        "fastapi_access_grants_depends_class_to_thread",
        "fastapi",
        "access_grants",
        "a class-based service from Depends(), SDK methods run by asyncio.to_thread and run_in_executor(partial)",
        FASTAPI,
        {
            "routers/bookings.py": FASTAPI_GRANT_ROUTER,
            "services/__init__.py": "",
            "services/grants.py": FASTAPI_GRANT_SERVICE,
        },
        _key("access_grants", FASTAPI_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "fastapi_reservations_coroutine_never_awaited",
        "fastapi",
        "reservation_automations",
        "create calls an async Seam helper without await (it never runs); cancel hands it to create_task",
        FASTAPI,
        {
            "routers/bookings.py": FASTAPI_UNAWAITED_ROUTER,
            "integrations/__init__.py": "",
            "integrations/seam_sync.py": FASTAPI_SYNC,
        },
        _key("reservation_automations", FASTAPI_PLACES),
        BOOKING_ENDPOINTS,
        expected={**FULL, "integration_placement": 0.66, "lifecycle_completeness": 0.66},
    ),
    Case(
        "fastapi_access_codes_background_tasks",
        "fastapi",
        "access_codes",
        "BackgroundTasks.add_task(sdk_method, **kwargs), getattr with a constant, a namespace held in a variable",
        FASTAPI,
        {"routers/bookings.py": FASTAPI_BG_ROUTER},
        _key("access_codes", FASTAPI_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "fastapi_access_codes_httpx_client_from_lib",
        "fastapi",
        "access_codes",
        "raw HTTP through an httpx.Client(base_url=) made in lib/ and used in the router",
        FASTAPI,
        {
            "routers/bookings.py": FASTAPI_HTTPX_ROUTER,
            "lib/__init__.py": "",
            "lib/http.py": FASTAPI_HTTPX_LIB,
        },
        _key("access_codes", FASTAPI_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "express_reservations_axios_instance_from_lib",
        "express",
        "reservation_automations",
        "raw HTTP through an axios.create({baseURL}) instance exported from lib/ as `upstream`",
        EXPRESS,
        {"src/lib/http.ts": EXPRESS_AXIOS_LIB, "src/services/bookings.ts": EXPRESS_AXIOS_SERVICE},
        _key("reservation_automations", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "express_access_grants_constructor_injection_timer",
        "express",
        "access_grants",
        "an SDK client from lib/ injected through a constructor typed `any`; delete run by setTimeout(bound method)",
        EXPRESS,
        {
            "src/lib/upstream.ts": EXPRESS_UPSTREAM,
            "src/lib/access.ts": EXPRESS_ACCESS_SERVICE,
            "src/lib/container.ts": EXPRESS_ACCESS_CONTAINER,
            "src/services/bookings.ts": EXPRESS_ACCESS_BOOKINGS,
        },
        _key("access_grants", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "express_access_codes_computed_names_queue",
        "express",
        "access_codes",
        "method names from constants (`seam.accessCodes[CREATE]`), an un-awaited promise (runs), a bound method in a job queue",
        EXPRESS,
        {"src/services/bookings.ts": EXPRESS_CODES_SERVICE},
        _key("access_codes", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "express_reservations_exported_helpers_nothing_calls",
        "express",
        "reservation_automations",
        "exported Seam helpers that no module imports: dead code",
        EXPRESS,
        {"src/services/bookings.ts": EXPRESS_DEAD_SERVICE},
        _key("reservation_automations", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
        expected=dict(NOTHING),
    ),
    Case(
        "nextjs_access_grants_client_from_lib",
        "nextjs",
        "access_grants",
        "route handlers calling lib/ functions that use an SDK client made in another lib/ module (`door`)",
        NEXT,
        {"lib/clients.ts": NEXT_CLIENTS, "lib/bookings.ts": NEXT_GRANTS_LIB},
        _key("access_grants", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "nextjs_access_codes_exported_lib_nothing_imports",
        "nextjs",
        "access_codes",
        "an exported lib/ module of Seam helpers that no route imports: dead code",
        NEXT,
        {"lib/locks.ts": NEXT_DEAD_CODES},
        _key("access_codes", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
        expected=dict(NOTHING),
    ),
    Case(
        "nextjs_reservations_constant_table_names_timers",
        "nextjs",
        "reservation_automations",
        "method names from a constant table (`seam.customers[OPS.push]`) inside queueMicrotask / setTimeout callbacks",
        NEXT,
        {"lib/bookings.ts": NEXT_RA_LIB},
        _key("reservation_automations", EXPRESS_PLACES),
        BOOKING_ENDPOINTS,
    ),
]

# ============================================================================= written after the fixes above
EXPRESS_CONTROLLER_ROUTES = """
import { Router } from 'express';
import { controller } from '../lib/wiring';

const router = Router();
router.post('/', controller.create.bind(controller));
router.put('/:id', controller.update.bind(controller));
router.delete('/:id', (req, res) => controller.cancel(req, res));
export default router;
"""
EXPRESS_CONTROLLER = """
import type { Request, Response } from 'express';
import { GrantStore } from './store';

export class BookingController {
  constructor(private readonly store: GrantStore) {}

  async create(req: Request, res: Response) {
    res.status(201).json({ booking: await this.store.open(req.body) });
  }

  async update(req: Request, res: Response) {
    res.json({ booking: await this.store.move(req.params.id, req.body) });
  }

  async cancel(req: Request, res: Response) {
    res.json({ booking: await this.store.close(req.params.id) });
  }
}
"""
EXPRESS_STORE = """
const bookings = new Map<string, any>();

export class GrantStore {
  constructor(private readonly client: any) {}

  async open(b: any) {
    const grant = await this.client.accessGrants.create({
      user_identity_id: b.member, device_ids: [b.device], starts_at: b.start, ends_at: b.end,
    });
    bookings.set(b.id, { ...b, grant: grant.access_grant_id });
    return b;
  }

  async move(id: string, patch: any) {
    const b = { ...bookings.get(id), ...patch };
    bookings.set(id, b);
    await this.client.accessGrants.update({ access_grant_id: b.grant, ends_at: b.end });
    return b;
  }

  async close(id: string) {
    const b = bookings.get(id);
    bookings.delete(id);
    await this.client.accessGrants.delete({ access_grant_id: b.grant });
    return b;
  }
}
"""
EXPRESS_WIRING = """
import { SeamHttp } from '@seamapi/http';
import { BookingController } from './controller';
import { GrantStore } from './store';

export const controller = new BookingController(new GrantStore(new SeamHttp({ apiKey: process.env.SEAM_API_KEY })));
"""

FASTAPI_DEPENDS_CLIENT_ROUTER = """
from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool
from deps import seam_client

router = APIRouter(prefix="/bookings")
BOOKINGS = {}


@router.post("")
async def create_booking(body: dict, client=Depends(seam_client)):
    code = await run_in_threadpool(
        client.access_codes.create, device_id=body["device"], starts_at=body["start"], ends_at=body["end"]
    )
    BOOKINGS[body["id"]] = {**body, "code": code.access_code_id}
    return {"booking": body}


@router.put("/{bid}")
async def update_booking(bid: str, body: dict, client=Depends(seam_client)):
    BOOKINGS[bid].update(body)
    await run_in_threadpool(client.access_codes.update, access_code_id=BOOKINGS[bid]["code"], ends_at=body["end"])
    return {"booking": BOOKINGS[bid]}


@router.delete("/{bid}")
async def cancel_booking(bid: str, client=Depends(seam_client)):
    await run_in_threadpool(client.access_codes.delete, access_code_id=BOOKINGS[bid]["code"])
    return {"booking": BOOKINGS.pop(bid)}
"""
FASTAPI_DEPS = """
import os
from functools import lru_cache

from seam import Seam


@lru_cache
def seam_client():
    return Seam(api_key=os.environ["SEAM_API_KEY"])
"""

FLASK_INLINE_CLASS = """
from integrations.upstream import connect

BOOKINGS = {}


class Stays:
    def __init__(self, api):
        self.api = api

    def publish(self, b):
        self.api.customers.push_data(
            customer_key=b["site"],
            user_identities=[{"user_identity_key": b["member"]}],
            reservations=[{"reservation_key": b["id"], "user_identity_key": b["member"]}],
        )

    def retract(self, bid):
        self.api.customers.delete_data(reservation_keys=[bid])


def create_booking(data):
    BOOKINGS[data["id"]] = data
    Stays(connect()).publish(data)
    return data


def update_booking(bid, data):
    BOOKINGS[bid].update(data)
    Stays(connect()).publish(BOOKINGS[bid])
    return BOOKINGS[bid]


def cancel_booking(bid):
    Stays(connect()).retract(bid)
    return BOOKINGS.pop(bid)
"""
FLASK_UPSTREAM = """
import os

import seam


def connect():
    return seam.Seam(api_key=os.environ["SEAM_API_KEY"])
"""

LATER_CASES = [
    Case(
        "express_access_grants_controller_bind_constructor_chain",
        "express",
        "access_grants",
        "route handlers as bound controller methods, a store injected into the controller, the SDK client into the store",
        EXPRESS,
        {
            "src/routes/bookings.ts": EXPRESS_CONTROLLER_ROUTES,
            "src/lib/controller.ts": EXPRESS_CONTROLLER,
            "src/lib/store.ts": EXPRESS_STORE,
            "src/lib/wiring.ts": EXPRESS_WIRING,
        },
        _key("access_grants", ("GrantStore.open", "GrantStore.move", "GrantStore.close")),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "fastapi_access_codes_depends_client_threadpool",
        "fastapi",
        "access_codes",
        "a Seam client from an lru_cache'd Depends() factory, unannotated, its methods run by run_in_threadpool",
        FASTAPI,
        {"routers/bookings.py": FASTAPI_DEPENDS_CLIENT_ROUTER, "deps.py": FASTAPI_DEPS},
        _key("access_codes", FASTAPI_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "flask_reservations_inline_instances_factory_client",
        "flask",
        "reservation_automations",
        "a class instantiated inline per call with a client from a factory in another package (`seam.Seam`)",
        FLASK,
        {
            "integrations/__init__.py": "",
            "integrations/upstream.py": FLASK_UPSTREAM,
            "services/bookings.py": FLASK_INLINE_CLASS,
        },
        _key("reservation_automations", FLASK_PLACES),
        BOOKING_ENDPOINTS,
    ),
]
CASES += LATER_CASES

# ============================================================================= Rails (Ruby)
RAILS_ROUTES = """
Rails.application.routes.draw do
  scope "/api" do
    resources :bookings, only: %i[create update destroy]
  end
end
"""
RAILS_CONTROLLER = """
class BookingsController < ApplicationController
  def create
    render json: BookingService.create_booking(params.to_unsafe_h), status: :created
  end

  def update
    render json: BookingService.update_booking(params[:id], params.to_unsafe_h)
  end

  def destroy
    render json: BookingService.cancel_booking(params[:id])
  end
end
"""
RAILS_SERVICE = """
class BookingService
  BOOKINGS = {}

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
  end

  def self.cancel_booking(bid)
    BOOKINGS.delete(bid)
  end
end
"""
RAILS = {
    "Gemfile": 'source "https://rubygems.org"\n\ngem "rails", "~> 6.1.7"\n',
    "config/routes.rb": RAILS_ROUTES,
    "app/controllers/bookings_controller.rb": RAILS_CONTROLLER,
    "app/services/booking_service.rb": RAILS_SERVICE,
}
RAILS_PLACES = ("create_booking", "update_booking", "cancel_booking")
RAILS_ACTIONS = ("BookingsController.create", "BookingsController.update", "BookingsController.destroy")

RAILS_CONCERN = """
module SeamConnected
  extend ActiveSupport::Concern

  def seam
    @seam ||= Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
  end
end
"""
RAILS_CODE_SERVICES = """
class LockCodes
  include SeamConnected

  def self.call(*args, **opts)
    new.call(*args, **opts)
  end

  def call(action, **opts)
    case action
    when :open then seam.access_codes.create(**opts)
    when :move then seam.access_codes.update(**opts)
    when :close then seam.access_codes.delete(**opts)
    end
  end
end
"""
RAILS_CODE_SERVICE_BOOKINGS = """
class BookingService
  BOOKINGS = {}

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    LockCodes.call(:open, device_id: data["device"], starts_at: data["start"], ends_at: data["end"], name: data["id"])
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    LockCodes.call(:move, access_code_id: BOOKINGS[bid]["code"], ends_at: data["end"])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    LockCodes.call(:close, access_code_id: BOOKINGS[bid]["code"])
    BOOKINGS.delete(bid)
  end
end
"""

RAILS_INITIALIZER_SEAM = """
SEAM_CLIENT = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
"""
RAILS_SEND_SERVICE = """
class BookingService
  BOOKINGS = {}
  RETRACT = :delete_data

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    send(:publish, data)
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    public_send("publish", BOOKINGS[bid])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    SEAM_CLIENT.customers.public_send(RETRACT, reservation_keys: [bid])
    BOOKINGS.delete(bid)
  end

  def self.publish(data)
    SEAM_CLIENT.customers.send(
      :push_data,
      customer_key: data["site"],
      user_identities: [{ user_identity_key: data["member"] }],
      reservations: [{ reservation_key: data["id"], user_identity_key: data["member"] }]
    )
  end
end
"""

RAILS_GRANT_JOB = """
class GrantJob < ApplicationJob
  queue_as :default

  def perform(op, booking)
    client = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
    case op
    when "open"
      client.access_grants.create(
        user_identity_id: booking["member"], device_ids: [booking["device"]],
        starts_at: booking["start"], ends_at: booking["end"]
      )
    when "move"
      client.access_grants.update(access_grant_id: booking["grant"], ends_at: booking["end"])
    end
  end
end
"""
RAILS_REVOKE_JOB = """
class RevokeGrantJob < ApplicationJob
  def perform(grant_id)
    Seam.new(api_key: ENV.fetch("SEAM_API_KEY")).access_grants.delete(access_grant_id: grant_id)
  end
end
"""
RAILS_JOB_SERVICE = """
class BookingService
  BOOKINGS = {}

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    GrantJob.perform_later("open", data)
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    GrantJob.set(wait: 5.seconds).perform_later("move", BOOKINGS[bid])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    RevokeGrantJob.perform_now(BOOKINGS[bid]["grant"])
    BOOKINGS.delete(bid)
  end
end
"""

RAILS_THREAD_SERVICE = """
class BookingService
  BOOKINGS = {}
  SEAM = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    Thread.new do
      SEAM.access_codes.create(device_id: data["device"], starts_at: data["start"], ends_at: data["end"])
    end
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    move = ->(code) { SEAM.access_codes.update(access_code_id: code, ends_at: data["end"]) }
    move.call(BOOKINGS[bid]["code"])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    with_retries { SEAM.access_codes.delete(access_code_id: BOOKINGS[bid]["code"]) }
    BOOKINGS.delete(bid)
  end

  def self.with_retries(attempts = 3)
    yield
  rescue StandardError
    attempts -= 1
    retry if attempts.positive?
  end
end
"""
RAILS_UNCALLED_LAMBDA_SERVICE = """
class BookingService
  BOOKINGS = {}
  SEAM = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    SEAM.access_codes.create(device_id: data["device"], starts_at: data["start"], ends_at: data["end"])
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    SEAM.access_codes.update(access_code_id: BOOKINGS[bid]["code"], ends_at: data["end"])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    remove = lambda { SEAM.access_codes.delete(access_code_id: BOOKINGS[bid]["code"]) }
    later = proc { SEAM.access_codes.delete(access_code_id: BOOKINGS[bid]["code"]) }
    Rails.logger.info("cancelled #{bid}")
    BOOKINGS.delete(bid)
  end
end
"""

RAILS_FARADAY_INITIALIZER = """
SEAM_HTTP = Faraday.new(
  url: "https://connect.getseam.com",
  headers: { "Authorization" => "Bearer #{ENV.fetch('SEAM_API_KEY')}", "Content-Type" => "application/json" }
)
"""
RAILS_FARADAY_SERVICE = """
class BookingService
  BOOKINGS = {}

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    SEAM_HTTP.post("/customers/push_data", payload(data).to_json)
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    SEAM_HTTP.post("/customers/push_data", payload(BOOKINGS[bid]).to_json)
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    SEAM_HTTP.post("/customers/delete_data", { reservation_keys: [bid] }.to_json)
    BOOKINGS.delete(bid)
  end

  def self.payload(data)
    {
      customer_key: data["site"],
      user_identities: [{ user_identity_key: data["member"] }],
      reservations: [{ reservation_key: data["id"], user_identity_key: data["member"] }]
    }
  end
end
"""

RAILS_HTTPARTY_CLIENT = """
class DoorApi
  include HTTParty
  base_uri "https://connect.getseam.com"
  headers "Authorization" => "Bearer #{ENV['SEAM_API_KEY']}", "Content-Type" => "application/json"

  def open(body)
    self.class.post("/access_grants/create", body: body.to_json)
  end

  def move(body)
    self.class.post("/access_grants/update", body: body.to_json)
  end
end
"""
RAILS_NET_HTTP_REVOKER = """
require "net/http"

class Revoker
  def revoke(grant_id)
    request = Net::HTTP::Post.new("/access_grants/delete", "Content-Type" => "application/json")
    request["Authorization"] = "Bearer #{ENV.fetch('SEAM_API_KEY')}"
    request.body = { access_grant_id: grant_id }.to_json
    http.request(request)
  end

  private

  def http
    @http ||= Net::HTTP.new("connect.getseam.com", 443).tap { |h| h.use_ssl = true }
  end
end
"""
RAILS_HTTP_GRANT_SERVICE = """
class BookingService
  BOOKINGS = {}

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    DoorApi.new.open(
      user_identity_id: data["member"], device_ids: [data["device"]], starts_at: data["start"], ends_at: data["end"]
    )
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    DoorApi.new.move(access_grant_id: BOOKINGS[bid]["grant"], ends_at: data["end"])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    Revoker.new.revoke(BOOKINGS[bid]["grant"])
    BOOKINGS.delete(bid)
  end
end
"""

RAILS_DEAD_CONTROLLER = """
class BookingsController < ApplicationController
  def create
    render json: BookingService.create_booking(params.to_unsafe_h), status: :created
  end

  def update
    render json: BookingService.update_booking(params[:id], params.to_unsafe_h)
  end

  def destroy
    render json: BookingService.cancel_booking(params[:id])
  end

  # not routed: config/routes.rb names only create, update and destroy
  def sync
    seam = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
    seam.access_grants.create(user_identity_id: params[:member], device_ids: [params[:device]],
                              starts_at: params[:start], ends_at: params[:end])
  end
end
"""
RAILS_DEAD_SERVICE = """
class BookingService
  BOOKINGS = {}
  SEAM = Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
  USAGE = <<~TEXT
    SEAM.access_grants.update(access_grant_id: id, ends_at: ends_at)
  TEXT

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    if false
      SEAM.access_grants.create(user_identity_id: data["member"], device_ids: [data["device"]],
                                starts_at: data["start"], ends_at: data["end"])
    end
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    # SEAM.access_grants.update(access_grant_id: BOOKINGS[bid]["grant"], ends_at: data["end"])
    Rails.logger.debug("would call SEAM.access_grants.update(access_grant_id: #{bid})")
    BOOKINGS[bid]
  end

=begin
  def self.cancel_booking(bid)
    SEAM.access_grants.delete(access_grant_id: BOOKINGS[bid]["grant"])
    BOOKINGS.delete(bid)
  end
=end

  def self.cancel_booking(bid)
    BOOKINGS.delete(bid)
  end

  def self.revoke(grant_id)
    SEAM.access_grants.delete(access_grant_id: grant_id)
  end
end
"""

RAILS_CALLBACK_CONTROLLER = """
class BookingsController < ApplicationController
  before_action :load_booking, only: %i[update destroy]
  after_action :open_code, only: :create
  after_action :move_code, only: [:update]
  before_action :close_code, only: :destroy

  def create
    @booking = BookingService.create_booking(params.to_unsafe_h)
    render json: @booking, status: :created
  end

  def update
    render json: BookingService.update_booking(params[:id], params.to_unsafe_h)
  end

  def destroy
    render json: BookingService.cancel_booking(params[:id])
  end

  private

  def seam
    @seam ||= Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
  end

  def load_booking
    @booking = BookingService::BOOKINGS.fetch(params[:id])
  end

  def open_code
    seam.access_codes.create(device_id: @booking["device"], starts_at: @booking["start"], ends_at: @booking["end"])
  end

  def move_code
    seam.access_codes.update(access_code_id: @booking["code"], ends_at: params[:end])
  end

  def close_code
    seam.access_codes.delete(access_code_id: @booking["code"])
  end
end
"""

RAILS_HASH_ARGS_SERVICE = """
class BookingService
  BOOKINGS = {}

  def self.seam
    @seam ||= Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
  end

  def self.create_booking(data)
    BOOKINGS[data["id"]] = data
    opts = { device_id: data["device"], starts_at: data["start"], ends_at: data["end"] }
    seam.access_codes.create(**opts)
    data
  end

  def self.update_booking(bid, data)
    BOOKINGS[bid].merge!(data)
    seam.access_codes.update(access_code_id: BOOKINGS[bid]["code"], ends_at: data["end"])
    BOOKINGS[bid]
  end

  def self.cancel_booking(bid)
    seam.access_codes.delete({ access_code_id: BOOKINGS[bid]["code"] })
    BOOKINGS.delete(bid)
  end
end
"""

RUBY_CASES = [
    Case(
        "rails_access_codes_service_object_concern",
        "rails",
        "access_codes",
        "a service object in app/services (`LockCodes.call(:open, **opts)`), its client from a concern mixed in (`@seam ||= Seam.new`), `case` on symbols",
        RAILS,
        {
            "app/services/lock_codes.rb": RAILS_CODE_SERVICES,
            "app/models/concerns/seam_connected.rb": RAILS_CONCERN,
            "app/services/booking_service.rb": RAILS_CODE_SERVICE_BOOKINGS,
        },
        _key("access_codes", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_reservations_initializer_client_send",
        "rails",
        "reservation_automations",
        "an SDK client made in config/initializers (a constant), `send`/`public_send` with a literal symbol, a string and a constant",
        RAILS,
        {
            "config/initializers/seam.rb": RAILS_INITIALIZER_SEAM,
            "app/services/booking_service.rb": RAILS_SEND_SERVICE,
        },
        _key("reservation_automations", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_grants_active_jobs",
        "rails",
        "access_grants",
        "SDK calls in ActiveJob `perform`, enqueued with perform_later (Rails' async adapter runs them), `set(wait:)`, perform_now",
        RAILS,
        {
            "app/jobs/grant_job.rb": RAILS_GRANT_JOB,
            "app/jobs/revoke_grant_job.rb": RAILS_REVOKE_JOB,
            "app/services/booking_service.rb": RAILS_JOB_SERVICE,
        },
        _key("access_grants", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_codes_thread_lambda_yield",
        "rails",
        "access_codes",
        "an SDK call in a `Thread.new` block, in a lambda that is called, in a block handed to a method that yields",
        RAILS,
        {"app/services/booking_service.rb": RAILS_THREAD_SERVICE},
        _key("access_codes", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_codes_lambda_never_called",
        "rails",
        "access_codes",
        "cancel's SDK call only inside a lambda and a proc that are never called",
        RAILS,
        {"app/services/booking_service.rb": RAILS_UNCALLED_LAMBDA_SERVICE},
        _key("access_codes", RAILS_PLACES),
        BOOKING_ENDPOINTS,
        # the delete is never sent: like the other stacks' calls in code nothing runs, it has no parameters to
        # credit (create's 3/3, delete's none: 0.5)
        expected={
            **FULL,
            "integration_placement": 0.66,
            "api_correctness": 0.5,
            "lifecycle_completeness": 0.66,
        },
    ),
    Case(
        "rails_reservations_faraday_constant_in_initializer",
        "rails",
        "reservation_automations",
        "raw HTTP through a Faraday connection kept in a constant made in config/initializers",
        RAILS,
        {
            "config/initializers/seam_http.rb": RAILS_FARADAY_INITIALIZER,
            "app/services/booking_service.rb": RAILS_FARADAY_SERVICE,
        },
        _key("reservation_automations", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_grants_httparty_and_net_http",
        "rails",
        "access_grants",
        "raw HTTP through an HTTParty class (`base_uri`, `self.class.post`) and a memoized Net::HTTP (`@http ||=`) with Net::HTTP::Post",
        RAILS,
        {
            "app/clients/door_api.rb": RAILS_HTTPARTY_CLIENT,
            "app/clients/revoker.rb": RAILS_NET_HTTP_REVOKER,
            "app/services/booking_service.rb": RAILS_HTTP_GRANT_SERVICE,
        },
        _key("access_grants", RAILS_PLACES),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_grants_dead_code_comments_heredocs",
        "rails",
        "access_grants",
        "an action no route names, `if false`, calls only in a comment, a string, a heredoc and `=begin/=end`, a public method nothing calls: nothing runs",
        RAILS,
        {
            "app/controllers/bookings_controller.rb": RAILS_DEAD_CONTROLLER,
            "app/services/booking_service.rb": RAILS_DEAD_SERVICE,
        },
        _key("access_grants", RAILS_PLACES),
        BOOKING_ENDPOINTS,
        expected=dict(NOTHING),
    ),
    Case(
        "rails_access_codes_controller_callbacks",
        "rails",
        "access_codes",
        "SDK calls in private controller methods run by `after_action`/`before_action ..., only:` callbacks of the actions",
        RAILS,
        {"app/controllers/bookings_controller.rb": RAILS_CALLBACK_CONTROLLER},
        _key("access_codes", RAILS_ACTIONS),
        BOOKING_ENDPOINTS,
    ),
    Case(
        "rails_access_codes_hash_vs_keyword_args",
        "rails",
        "access_codes",
        "keywords from a splatted hash (`**opts`) and a braced hash passed positionally to a keyword method (Ruby 3: ArgumentError)",
        RAILS,
        {"app/services/booking_service.rb": RAILS_HASH_ARGS_SERVICE},
        _key("access_codes", RAILS_PLACES),
        BOOKING_ENDPOINTS,
        # create's keywords from `**opts` all arrive (1.0); delete's Hash is one positional argument the
        # gem's keyword method refuses (0.0): the mean of the two methods the key requires
        expected={**FULL, "api_correctness": 0.5},
    ),
]
# labelled right but still misjudged by the static rubric (not yet fixed): kept out of CASES, so the test
# stays green; benchmarks/rubric_labelled.py counts them. None at present: the last six Rails ones (an
# initializer's constant, HTTParty included in a class, a request body set after Net::HTTP::Post.new,
# keywords forwarded through `**opts`, the routes file nothing requires) are read right now.
OPEN: set[str] = set()
OPEN_CASES = [c for c in RUBY_CASES if c.name in OPEN]
CASES += [c for c in RUBY_CASES if c.name not in OPEN]
