"""The outline's reachability facts and the call graph over them: dead code, exports, Express mounts, method
calls resolved through classes, attributes, injected clients and imports, and the names of built-in methods
kept apart from the app's functions."""

from __future__ import annotations

import textwrap

from skillassay.languages import parser_for
from skillassay.languages.base import Module
from skillassay.languages.callgraph import CallGraph, FnRef
from skillassay.languages.routes import endpoint_routes, mounted_routes, path_matches


def _parse(path: str, source: str) -> Module:
    parse = parser_for(path)
    assert parse is not None
    return parse(textwrap.dedent(source).encode(), path)


def _dead_chains(module: Module) -> set[tuple[str, ...]]:
    return {c.chain for c in module.calls if c.dead}


def test_python_dead_code():
    m = _parse(
        "a.py",
        """
        ENABLED = False
        def f():
            if False:
                dead1()
            if not True:
                dead2()
            else:
                live1()
            x = dead3() if False else live2()
            ENABLED and dead4()
            while 0:
                dead5()
            return 1
            dead6()
        def g():
            raise ValueError()
            dead7()
    """,
    )
    assert _dead_chains(m) == {(f"dead{i}",) for i in range(1, 8)}
    assert {c.chain for c in m.calls if not c.dead} >= {("live1",), ("live2",), ("ValueError",)}


def test_typescript_dead_code_and_nested_functions():
    m = _parse(
        "a.ts",
        """
        export function f() {
          if (false) { dead1(); }
          if (!true) { dead2(); } else { live1(); }
          const x = false ? dead3() : live2();
          false && dead4();
          true || dead5();
          return 1;
          dead6();
        }
        function g() { throw new Error('x'); dead7(); }
        export const h = () => { if (0) { const inner = () => dead8(); } };
    """,
    )
    assert _dead_chains(m) == {(f"dead{i}",) for i in range(1, 9)}
    inner = next(f for f in m.functions if f.name == "inner")
    assert inner.dead


def test_exports_and_express_mounts_across_files():
    index = _parse(
        "src/index.ts",
        """
        import express from 'express';
        import api from './api';
        const app = express();
        app.use('/api', api);
        app.use('/hooks', require('./hooks'));
    """,
    )
    api = _parse(
        "src/api.ts",
        """
        import { Router } from 'express';
        import stays from './stays';
        const router = Router();
        router.use('/stays', stays);
        export default router;
    """,
    )
    stays = _parse(
        "src/stays.ts",
        """
        import { Router } from 'express';
        const r = Router();
        r.put('/:id', (req, res) => res.json({}));
        export default r;
    """,
    )
    hooks = _parse(
        "src/hooks.js",
        """
        const express = require('express');
        const hooks = express.Router();
        hooks.post('/seam', (req, res) => res.sendStatus(204));
        module.exports = hooks;
    """,
    )
    assert api.exports == {"default": "router"} and hooks.exports == {"default": "hooks"}
    mounted = mounted_routes([index, api, stays, hooks])
    assert {(m.route.method, m.path) for m in mounted} == {("PUT", "/api/stays/:id"), ("POST", "/hooks/seam")}
    assert [m.path for m in endpoint_routes(mounted, "put", "/api/stays/{{RESERVATION_ID}}")] == [
        "/api/stays/:id"
    ]
    assert not endpoint_routes(mounted, "DELETE", "/api/stays/{{RESERVATION_ID}}")


def test_path_matching_of_every_framework_spelling():
    for route in ("/a/:id", "/a/<rid>", "/a/<int:rid>", "/a/{rid}", "/a/[id]"):
        assert path_matches(route, "/a/{{RESERVATION_ID}}"), route
        assert path_matches(route, "/a/res-1"), route
    assert path_matches("/docs/[...slug]", "/docs/a/b")
    assert not path_matches("/a", "/a/{{X}}") and not path_matches("/a/b", "/a/{{X}}")


def _graph(files: dict[str, str]) -> tuple[CallGraph, dict[str, Module]]:
    modules = {path: _parse(path, src) for path, src in files.items()}
    return CallGraph(modules.values()), modules


def _reached(graph: CallGraph, modules: dict[str, Module], path: str, name: str) -> set[str]:
    start = next(FnRef(path, i) for i, f in enumerate(modules[path].functions) if f.name == name)
    return {graph.name(r) for r in graph.reach([start])}


def test_methods_resolved_through_injected_clients_and_module_instances():
    graph, modules = _graph(
        {
            "svc.py": """
            from gateway import Gateway

            class Service:
                def __init__(self, gateway: Gateway):
                    self.gateway = gateway

                def book(self, r):
                    items = []
                    items.append(r)
                    self.gateway.publish(r)

            service = Service(Gateway())
        """,
            "gateway.py": """
            class Gateway:
                def publish(self, r):
                    self._send(r)

                def _send(self, r):
                    pass

                def append(self, r):
                    pass
        """,
            "routes.py": """
            from svc import service

            def create(r):
                return service.book(r)
        """,
        }
    )
    reached = _reached(graph, modules, "routes.py", "create")
    assert {"create", "Service.book", "Gateway.publish", "Gateway._send"} <= reached
    assert "Gateway.append" not in reached  # `items.append` is a list's method


def test_a_named_nested_function_runs_only_when_referred_to():
    graph, modules = _graph(
        {
            "a.ts": """
        export async function handler() {
          const later = async () => { await push(); };
          const now = async () => { await drop(); };
          await now();
          [1].forEach(async () => { await cb(); });
        }
        async function push() {}
        async function drop() {}
        async function cb() {}
    """
        }
    )
    reached = _reached(graph, modules, "a.ts", "handler")
    assert "drop" in reached and "cb" in reached
    assert "later" not in reached and "push" not in reached
    unused = next(FnRef("a.ts", i) for i, f in enumerate(modules["a.ts"].functions) if f.name == "later")
    assert not graph.referenced(unused)


def test_module_constants_make_branches_dead_in_both_languages():
    py = _parse(
        "a.py",
        """
        SYNC = False
        def f():
            if SYNC:
                dead1()
    """,
    )
    ts_module = _parse(
        "a.ts",
        """
        export const SYNC_TO_SEAM = false;
        let mutable = false;
        export function f() {
          if (SYNC_TO_SEAM) { dead1(); }
          if (mutable) { live1(); }
        }
    """,
    )
    assert _dead_chains(py) == {("dead1",)}
    assert _dead_chains(ts_module) == {("dead1",)}
