"""The static gaps of issue 26, at the outline and call-graph level: functions handed to runners are calls
where they are handed over, a Python coroutine nothing awaits never runs (a TypeScript promise runs anyway),
method names computed from constants are names, and code nothing reachable from the app's entry points calls
never runs."""

from __future__ import annotations

import textwrap

from skillassay.languages import parser_for
from skillassay.languages.base import Call, Module
from skillassay.languages.callgraph import TOP, CallGraph, FnRef


def _parse(path: str, source: str) -> Module:
    parse = parser_for(path)
    assert parse is not None
    return parse(textwrap.dedent(source).encode(), path)


def _handed(module: Module) -> dict[tuple[str, ...], Call]:
    return {c.chain: c for c in module.calls if c.handed_over}


def _reached(graph: CallGraph, module: Module, name: str) -> set[str]:
    start = next(FnRef(module.path, i) for i, f in enumerate(module.functions) if f.name == name)
    return {graph.name(r) for r in graph.reach([start])}


# ----------------------------------------------------------------------------- handed over
def test_python_methods_handed_to_threads_executors_partials_and_task_queues_are_calls():
    m = _parse(
        "a.py",
        """
        import asyncio, threading
        from functools import partial

        async def handler(tasks, loop, pool, seam):
            await asyncio.to_thread(seam.access_grants.create, user_identity_id="u", device_ids=["d"])
            await loop.run_in_executor(None, seam.access_codes.update, "positional")
            remove = partial(seam.access_codes.delete, access_code_id="c")
            pool.submit(seam.customers.push_data, customer_key="k")
            tasks.add_task(seam.customers.delete_data, reservation_keys=["r"])
            threading.Thread(target=seam.locks.unlock_door, kwargs={"device_id": "d"}, daemon=True).start()
            loop.call_later(5, seam.locks.lock_door, "d")
            pool.submit(print, "bare names are call-graph references already")
        """,
    )
    handed = _handed(m)
    grants = handed[("seam", "access_grants", "create")]
    assert grants.handed_over == "to_thread" and set(grants.kwargs) == {"user_identity_id", "device_ids"}
    assert [a.text for a in handed[("seam", "access_codes", "update")].args] == ["positional"]
    assert set(handed[("seam", "access_codes", "delete")].kwargs) == {"access_code_id"}
    assert set(handed[("seam", "customers", "push_data")].kwargs) == {"customer_key"}
    assert handed[("seam", "customers", "delete_data")].handed_over == "add_task"
    thread = handed[("seam", "locks", "unlock_door")]
    assert thread.handed_over == "Thread" and set(thread.kwargs) == {"device_id"}  # not target/daemon
    assert [a.text for a in handed[("seam", "locks", "lock_door")].args] == ["d"]
    assert ("print",) not in handed


def test_typescript_methods_handed_to_timers_queues_and_bind_are_calls():
    m = _parse(
        "a.ts",
        """
        export function handler(seam: any, jobs: any[], p: any) {
          setTimeout(seam.accessCodes.create.bind(seam.accessCodes), 0, p);
          jobs.push(seam.customers.deleteData.bind(seam.customers, { reservation_keys: ['r'] }));
          setImmediate(seam.locks.unlockDoor, p);
          const later = seam.accessGrants.delete.bind(seam.accessGrants, { access_grant_id: 'g' });
        }
        """,
    )
    handed = _handed(m)
    timer = handed[("seam", "accessCodes", "create")]
    assert timer.handed_over == "setTimeout" and [a.kind for a in timer.args] == ["ref"]  # p, not the delay
    assert handed[("seam", "customers", "deleteData")].args[0].keys.keys() == {"reservation_keys"}
    assert handed[("seam", "locks", "unlockDoor")].handed_over == "setImmediate"
    assert handed[("seam", "accessGrants", "delete")].handed_over == "bind"
    # one call per hand-over: the bind a timer takes is not counted twice
    assert sum(c.chain == ("seam", "accessCodes", "create") for c in m.calls) == 1


def test_a_partial_bound_function_or_thread_made_and_thrown_away_runs_nothing():
    py = _parse(
        "a.py",
        """
        import threading
        from functools import partial

        def handler(seam):
            partial(seam.customers.push_data, customer_key="k")
            threading.Thread(target=seam.customers.delete_data)
            threading.Thread(target=seam.access_codes.create).start()
        """,
    )
    ts_module = _parse(
        "a.ts",
        """
        export function handler(seam: any) {
          seam.customers.pushData.bind(seam.customers, {});
          const kept = seam.customers.deleteData.bind(seam.customers, {});
        }
        """,
    )
    assert set(_handed(py)) == {("seam", "access_codes", "create")}
    assert set(_handed(ts_module)) == {("seam", "customers", "deleteData")}


def test_an_app_function_handed_over_by_attribute_runs_in_the_graph():
    m = _parse(
        "a.py",
        """
        import asyncio

        class Sync:
            def push(self):
                send()

        sync = Sync()

        def send():
            pass

        async def handler():
            await asyncio.to_thread(sync.push)
        """,
    )
    graph = CallGraph([m])
    assert {"Sync.push", "send"} <= _reached(graph, m, "handler")


# ----------------------------------------------------------------------------- coroutines
def test_a_python_coroutine_nothing_awaits_never_runs():
    m = _parse(
        "a.py",
        """
        import asyncio

        async def dropped(): pass
        async def awaited(): pass
        async def tasked(): pass
        async def gathered(): pass
        async def returned(): pass
        async def kept(): pass
        def plain(): pass

        async def handler():
            dropped()
            await awaited()
            asyncio.create_task(tasked())
            await asyncio.gather(gathered())
            plain()
            task = kept()
            await task
            return returned()
        """,
    )
    graph = CallGraph([m])
    reached = _reached(graph, m, "handler")
    assert "dropped" not in reached
    assert {"awaited", "tasked", "gathered", "plain", "kept", "returned"} <= reached
    handler = FnRef("a.py", next(i for i, f in enumerate(m.functions) if f.name == "handler"))
    assert [graph.name(t) for _c, t in graph.dropped_coroutine_calls(handler)] == ["dropped"]


def test_a_typescript_promise_nobody_awaits_still_runs():
    m = _parse(
        "a.ts",
        """
        async function sync() {}
        export async function handler() {
          sync();
          void sync();
        }
        """,
    )
    assert "sync" in _reached(CallGraph([m]), m, "handler")


# ----------------------------------------------------------------------------- computed names
def test_python_computed_method_names_from_literals_and_constants():
    m = _parse(
        "a.py",
        """
        OP = "create"
        TABLE = {"x": 1}

        def f(svc, name):
            getattr(svc.access_codes, "delete")(access_code_id="c")
            getattr(svc.access_codes, OP)(device_id="d")
            svc.codes[OP]()
            local = "update"
            getattr(svc, local)()
            getattr(svc, name)()
            getattr(svc, "not an identifier")()
        """,
    )
    chains = {c.chain for c in m.calls}
    assert {("svc", "access_codes", "delete"), ("svc", "access_codes", "create")} <= chains
    assert ("svc", "codes", "create") in chains and ("svc", "update") in chains
    assert not any(c[-1] in ("name", "not an identifier") for c in chains)


def test_typescript_computed_method_names_from_constants_and_constant_tables():
    m = _parse(
        "a.ts",
        """
        const CREATE = 'create';
        const OPS = { push: 'pushData' } as const;
        let mutable = 'update';
        export function f(seam: any, key: string) {
          const DEL = 'delete';
          seam.accessCodes[CREATE]({});
          seam.customers[OPS.push]({});
          seam.accessCodes[DEL]({});
          seam.accessCodes[key]({});
          new Seam().customers.deleteData({});
        }
        """,
    )
    chains = {c.chain for c in m.calls}
    assert ("seam", "accessCodes", "create") in chains and ("seam", "customers", "pushData") in chains
    assert ("seam", "accessCodes", "delete") in chains
    assert ("seam", "accessCodes", "[]") in chains  # a parameter is no constant
    assert ("Seam()", "customers", "deleteData") in chains


# ----------------------------------------------------------------------------- dead code, one way
ROUTES = """
from flask import Blueprint
from helpers import used

bp = Blueprint("b", __name__)

@bp.post("/x")
def create():
    used()
"""
HELPERS = """
def used():
    step()

def step():
    pass

def unused_public():
    via_unused()

def via_unused():
    pass
"""


def test_public_functions_nothing_reachable_calls_never_run_when_the_entry_points_are_known():
    routes, helpers = _parse("routes.py", ROUTES), _parse("helpers.py", HELPERS)
    graph = CallGraph([routes, helpers])
    names = {graph.name(r) for r in graph.entry_reach(entries_known=True)}
    assert {"create", "used", "step"} <= names
    assert "unused_public" not in names and "via_unused" not in names  # one way: nothing calls it
    assert FnRef("helpers.py", TOP) in graph.entry_reach(entries_known=True)  # imported: its top level runs
    # without the entry points, a public function may be called by another package
    assert {"unused_public", "via_unused"} <= {graph.name(r) for r in graph.entry_reach(entries_known=False)}


def test_a_module_nothing_loads_runs_nothing_not_even_its_top_level():
    orphan = _parse("scripts/warm.py", "from helpers import unused_public\nunused_public()\n")
    graph = CallGraph([_parse("routes.py", ROUTES), _parse("helpers.py", HELPERS), orphan])
    names = {graph.name(r) for r in graph.entry_reach(entries_known=True)}
    assert "unused_public" not in names


def test_a_fastapi_dependency_parameter_holds_what_the_dependency_returns():
    m = _parse(
        "a.py",
        """
        from fastapi import Depends, Security

        class Grants:
            def open(self):
                pass

        def get_grants():
            return Grants()

        async def create(body: dict, grants=Depends(get_grants), *, other=Security(get_grants)):
            grants.open()
        """,
    )
    create = next(f for f in m.functions if f.name == "create")
    assert [v.chain for v in create.bindings["grants"]] == [("get_grants",)]
    assert [v.chain for v in create.bindings["other"]] == [("get_grants",)]
    assert "Grants.open" in _reached(CallGraph([m]), m, "create")


def test_nextjs_pages_and_middleware_are_entry_points_lib_exports_are_not():
    page = _parse(
        "app/bookings/page.tsx",
        "import { list } from '@/lib/x';\nexport default async function Page() { return list(); }\n",
    )
    lib = _parse(
        "lib/x.ts",
        "export async function list() { return 1; }\nexport async function unused() { return 2; }\n",
    )
    route = _parse("app/api/x/route.ts", "export async function GET() { return Response.json({}); }\n")
    graph = CallGraph([page, lib, route])
    names = {graph.name(r) for r in graph.entry_reach(entries_known=True)}
    assert {"Page", "GET", "list"} <= names
    assert "unused" not in names
