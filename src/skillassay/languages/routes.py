"""Routes across files: a router declared in one module and mounted under a prefix in another.

A language module records, per file, the routes (with the router variable they hang on), the mounts
(``app.include_router(reservations.router, prefix="/api")``, ``app.register_blueprint(bp, url_prefix=...)``)
and where imported names come from (``ImportRef``). ``mounted_routes`` joins them: each route's path gets the
prefixes of every mount chain that reaches its router, in whatever files were parsed. A router mounted nowhere
in the parsed files keeps the path its own file gives it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from skillassay.languages.base import ImportRef, Module, Route

_MAX_MOUNT_DEPTH = 8  # routers mounted in routers mounted in ...; deeper (or cyclic) chains stop here


@functools.cache  # asked for every parsed module at every import looked up
def _stem(path: str) -> str:
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    for tail in ("/index", "/__init__"):
        if stem.endswith(tail):
            return stem[: -len(tail)]
    return stem


def find_module(modules: dict[str, Module], ref: ImportRef) -> Module | None:
    """The parsed module an import points at: same stem (``routers/reservations`` for
    ``routers/reservations.py`` or ``routers/reservations/__init__.py``), or for an alias any module whose
    stem ends with it."""
    exact = [m for m in modules.values() if _stem(m.path) == ref.stem]
    if exact:
        return min(exact, key=lambda m: m.path)
    if ref.fuzzy:
        ends = sorted(
            (m for m in modules.values() if _stem(m.path).endswith("/" + ref.stem)), key=lambda m: m.path
        )
        return ends[0] if ends else None
    return None


def resolve_name(
    modules: dict[str, Module], module: Module, chain: tuple[str, ...]
) -> tuple[Module, str] | None:
    """The (module, variable) a name chain written in ``module`` refers to: a local variable, an imported one
    (``from routers.reservations import router``), or an attribute of an imported module
    (``reservations.router``, ``routers.reservations.router``)."""
    if not chain:
        return None
    if len(chain) == 1 and chain[0] not in module.import_refs:
        return module, chain[0]
    for ref in module.import_refs.get(chain[0], []):
        if ref.name is None:  # a module: the rest of the chain is submodules, then the variable
            if len(chain) < 2:
                # `const router = require('./routes')`: what the module exports as a whole (module.exports =
                # x)
                found = find_module(modules, ref)
                if found is not None and "default" in found.exports:
                    return found, found.exports["default"]
                continue
            target = ImportRef("/".join([ref.stem, *chain[1:-1]]), None, ref.fuzzy)
            found = find_module(modules, target)
            if found is not None:
                return found, found.exports.get(chain[-1], chain[-1])
        elif len(chain) == 1:
            found = find_module(modules, ref)
            if found is not None:  # `import router from './x'`: the name `export default router` gives
                return found, found.exports.get(ref.name, ref.name)
    return None


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    joined = prefix + path
    while "//" in joined:
        joined = joined.replace("//", "/")
    return joined


@dataclass(frozen=True)
class MountedRoute:
    """A route with the full path the mounts that reach its router give it."""

    module: Module
    route: Route  # as its own file declares it
    path: str  # with the prefixes of the mounts that reach it


def mounted_routes(modules: Iterable[Module]) -> list[MountedRoute]:
    """Every route of ``modules``, its path completed by the mounts found in ``modules`` (one entry per
    distinct mounted path). Which files are parsed changes the paths, never the routes: compare routes by
    ``route.path`` (the file's own view) and show ``path``. Deterministic: modules in path order."""
    by_path = {m.path: m for m in sorted(modules, key=lambda m: m.path)}
    parents: dict[tuple[str, str], list[tuple[Module, int]]] = {}
    for module in by_path.values():
        for index, mount in enumerate(module.mounts):
            target = resolve_name(by_path, module, mount.child)
            if target is not None:
                parents.setdefault((target[0].path, target[1]), []).append((module, index))

    def expand(module: Module, var: str, path: str, own_prefix: str, depth: int) -> list[str]:
        found = parents.get((module.path, var), [])
        if not found or depth >= _MAX_MOUNT_DEPTH:
            return [path]
        out: list[str] = []
        for parent_module, index in found:
            mount = parent_module.mounts[index]
            rest = path[len(own_prefix) :] if mount.replaces_prefix and path.startswith(own_prefix) else path
            full = _join(parent_module.router_prefixes.get(mount.parent, ""), _join(mount.prefix, rest))
            out.extend(
                expand(
                    parent_module,
                    mount.parent,
                    full,
                    parent_module.router_prefixes.get(mount.parent, ""),
                    depth + 1,
                )
            )
        return out

    result: list[MountedRoute] = []
    for module in by_path.values():
        for route in module.routes:
            paths = (
                [route.path]
                if route.router is None
                else expand(module, route.router, route.path, route.own_prefix, 0)
            )
            result.extend(MountedRoute(module, route, path) for path in dict.fromkeys(paths))
    return result


_PARAM = re.compile(r"^(:\w+\??|<[^>]+>|\{[^}]+\}|\[[^\]]+\]|\*\w*)$")


def _segments(path: str) -> list[str]:
    return [p for p in path.split("?", maxsplit=1)[0].split("/") if p]


def path_matches(route_path: str, url_path: str) -> bool:
    """Whether a route declared as ``route_path`` (``/reservations/:id``, ``<int:rid>``, ``{rid}``, ``[id]``,
    ``[...slug]``) answers ``url_path`` (an eval's endpoint, ``/api/reservations/{{RESERVATION_ID}}``: a
    template segment matches any parameter segment)."""
    route, url = _segments(route_path), _segments(url_path)
    for i, seg in enumerate(route):
        catch_all = seg.startswith(("[...", "[[...", "*")) or seg in ("*", "(.*)")
        if catch_all:
            return True
        if i >= len(url):
            return False
        if _PARAM.match(seg):
            continue
        if "{{" in url[i] or seg != url[i]:
            return False
    return len(route) == len(url)


def endpoint_routes(mounted: list[MountedRoute], method: str, url_path: str) -> list[MountedRoute]:
    """The routes answering ``method url_path`` (a route for any method answers every method)."""
    method = method.upper()
    return [m for m in mounted if m.route.method in (method, "ANY") and path_matches(m.path, url_path)]
