"""One modified app, outlined, with the cross-file questions the checks ask.

- Which calls are Seam calls: SDK calls (and are they real methods of that language's SDK?) and raw HTTP
  requests to Seam's API (``rawhttp.py``)? Only calls in files the change wrote count: the rest is the app's
  own code.
- Which functions does a function reach, through the call graph of the whole app (``languages.callgraph``)?
  Built once per grade; code that never runs is in it nowhere.
- What does an argument expression hold (following variables, spreads and small builder functions)?
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from skillassay import stacks
from skillassay.languages import parser_for
from skillassay.languages.base import Call, Function, Module, Value
from skillassay.languages.callgraph import TOP, CallGraph, FnRef, Reach
from skillassay.languages.nextjs import next_route_path
from skillassay.seam.rubric import php_sdk
from skillassay.seam.rubric.sdk_surface import all_methods, all_namespaces, language_surface, snake

# How many variables / builder functions a value is followed through.
MAX_VALUE_DEPTH = 6
# Source files parsed per app at most (bundles and vendored trees beyond this are not the agent's edit).
MAX_FILES = 5000


def _family_label(sdk_family: str) -> str:
    """ "Python", "JavaScript": the label of the first stack language whose code calls that SDK family."""
    return next(
        (x.label for s in stacks.all_stacks() for x in s.syntaxes if x.sdk_family == sdk_family), sdk_family
    )


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


# Larger files are bundles or generated code, not an agent's edit: not parsed.
MAX_SOURCE_BYTES = 2_000_000


def read_source(root: Path, rel: str) -> bytes | None:
    """The file's bytes, or None for a symlink (never followed), an oversized or an unreadable file."""
    path = root / rel
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


@dataclass
class SdkCall:
    """A Seam API call: through an SDK (``kind="sdk"``), or a raw HTTP request to a Seam route
    (``kind="http"``, counted at the call that gives it its route: the client call itself, or a wrapper's
    call)."""

    name: str  # canonical snake_case path, "customers.push_data"
    written: str  # as written in the source, "customers.pushData" (for HTTP: "POST /customers/push_data")
    module: Module
    call: Call
    problems: list[str] = field(default_factory=list)  # SDK surface problems; empty when the method is real
    kind: str = "sdk"  # "sdk" | "http"
    client: str | None = None  # HTTP: the client that sends it ("requests.post", "fetch")
    route: str | None = None  # HTTP: the route ("/customers/push_data")
    body: Ctx | None = None  # HTTP: the JSON body
    query: list[str] = field(default_factory=list)  # HTTP: parameter names in the query string
    via: list[str] = field(default_factory=list)  # HTTP: wrappers the route was passed through

    @property
    def location(self) -> str:
        return f"{self.module.path}:{self.call.line}"

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def method(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def scope(self) -> FnRef:
        return FnRef(self.module.path, TOP if self.call.scope is None else self.call.scope)

    @property
    def label(self) -> str:
        """How evidence names the call: ``customers.pushData`` or ``requests.post POST
        /customers/push_data``.
        """
        handed = f", handed to {self.call.handed_over}" if self.call.handed_over else ""
        if self.kind == "http":
            via = f" via {' -> '.join(self.via)}" if self.via else ""
            return f"{self.client} {self.written}{via}{handed}"
        return f"{self.written}{handed}"


Ctx = tuple[Value, Module, "int | None"]


# the last name of an HTTP client call (requests.post, fetch, axios, https.request...): checked before the
# Seam spec is loaded for raw HTTP
_HTTP_NAMES = frozenset(
    {
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "request",
        "fetch",
        "urlopen",
        "Request",
        "axios",
        "got",
        "ky",
        "head",
        "options",
    }
)


def _parse_file(root: Path, rel: str, source: bytes | None = None) -> Module | None:
    parse = parser_for(rel)
    if parse is None:
        return None
    source = source if source is not None else read_source(root, rel)
    return parse(source, rel) if source is not None else None


# Unchanged files holding one of these may declare routes or mount routers (Express, Flask, FastAPI).
_ROUTE_MARKERS = re.compile(
    rb"\.(get|post|put|patch|delete|all|use|route|api_route|add_url_rule|add_api_route|"
    rb"include_router|register_blueprint)\(|\bRouter\(|APIRouter\(|Blueprint\("
)


# files the framework loads before any request, which nothing requires or imports: Rails' routes (the app's
# entry points) and initializers (what they assign at the top, a client in a constant, any file may use), and
# Laravel's route files
_FRAMEWORK_LOADED = re.compile(r"config/(routes|initializers/[^/]+)\.rb$|routes/(api|web)\.php$")


def _module_stem(rel: str) -> str:
    stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
    for tail in ("/index", "/__init__"):
        if stem.endswith(tail):
            return stem[: -len(tail)]
    return stem


def connected(
    root: Path,
    parsed: dict[str, Module],
    candidates: list[str],
    *,
    routes: bool = True,
    names: list[str] | None = None,
) -> dict[str, Module]:
    """The unchanged source files the grade needs, parsed: those that declare routes or mount routers (where
    test endpoints' handlers are, when ``routes``; Next.js route files always), that define one of
    ``names`` (the answer key's placement functions) not defined in a parsed file, and, transitively, every
    file one of those imports: so the paths from the app's routes through unchanged code into the changed
    code, and on into unchanged wrappers, are in the call graph. Others (most files of a large repository)
    are never parsed: the cost follows the change, not the repository (plus one byte search per file when
    routes or names are looked for)."""
    texts: dict[str, bytes | None] = {}

    def text(rel: str) -> bytes:
        if rel not in texts:
            texts[rel] = read_source(root, rel)
        return texts[rel] or b""

    # module stem -> path, to resolve imports against (find_module's rule, indexed)
    exact: dict[str, str] = {}
    suffixes: dict[str, list[str]] = {}

    def resolve(stem: str, fuzzy: bool) -> str | None:
        if not exact and candidates:  # built on the first import looked up
            for rel in candidates:
                module_stem = _module_stem(rel)
                exact.setdefault(module_stem, rel)
                parts = module_stem.split("/")
                for i in range(1, len(parts)):
                    suffixes.setdefault("/".join(parts[i:]), []).append(rel)
        if stem in exact:
            return exact[stem]
        return min(suffixes.get(stem, []), default=None) if fuzzy else None

    defined = {fn.name for m in parsed.values() for fn in m.functions if fn.name}
    missing = sorted({n.rsplit(".", 1)[-1] for n in names or []} - defined)
    pattern = (
        re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in missing) + rb")\b") if missing else None
    )

    def imports(modules) -> list[str]:
        out = []
        for module in modules:
            for refs in module.import_refs.values():
                for ref in refs:
                    target = resolve(ref.stem, ref.fuzzy) or (
                        resolve(f"{ref.stem}/{ref.name}", ref.fuzzy) if ref.name else None
                    )
                    if target is not None:
                        out.append(target)
        return out

    queue = [
        rel
        for rel in candidates
        if (("app/" in rel or "pages/" in rel) and next_route_path(rel) is not None)
        or _FRAMEWORK_LOADED.match(rel)
        or (routes and _ROUTE_MARKERS.search(text(rel)))
        or (pattern is not None and pattern.search(text(rel)))
    ]
    queue += imports(parsed.values())
    found: dict[str, Module] = {}
    while queue:
        fresh = []
        for rel in queue:
            if rel in found or rel in parsed or len(parsed) + len(found) >= MAX_FILES:
                continue
            module = _parse_file(root, rel, text(rel))
            if module is not None:
                found[rel] = module
                fresh.append(module)
        queue = imports(fresh)
    return found


def parse_app(root: Path, files: list[str]) -> dict[str, Module]:
    """The outlines of those ``files`` under ``root`` that a language reads (path -> Module)."""
    out: dict[str, Module] = {}
    for rel in [f for f in files if parser_for(f) is not None][:MAX_FILES]:
        module = _parse_file(root, rel)
        if module is not None:
            out[rel] = module
    return out


def _ruby_keywords_as_hash(module: Module, params: list[str], position: int, call: Call) -> bool:
    """Ruby: keywords passed to a method whose last parameter is positional (``def open(body)`` called as
    ``open(device_ids: ids, ...)``) arrive as one Hash in that parameter."""
    return (
        module.language == "ruby"
        and bool(call.kwargs)
        and position == len(params) - 1 == len(call.args)
        and not set(call.kwargs) & set(params)
    )


class Project:
    """Every parsed source file of one app, its call graph, and its Seam calls (in ``changed`` files only)."""

    def __init__(self, modules: list[Module], changed: set[str] | None = None, entries: bool | None = None):
        """``entries``: whether the app's entry points (its routes) are among ``modules``, so that code
        nothing reachable from them calls is dead (``CallGraph.entry_reach``); None: when any module
        declares a route or mounts a router."""
        self.modules: dict[str, Module] = {m.path: m for m in sorted(modules, key=lambda m: m.path)}
        self.changed: set[str] = set(self.modules) if changed is None else set(changed) & set(self.modules)
        self.unchanged_modules: set[str] = set(self.modules) - self.changed  # parsed only to follow calls
        self.graph = CallGraph(self.modules.values())
        if entries is None:
            entries = any(m.routes or m.mounts for m in self.modules.values())
        self.entries_known = entries
        self.by_name = self.graph.by_name
        self._calls_by_name: dict[str, list[tuple[Module, Call]]] = {}
        self._resolved: dict[tuple[int, str, int | None], list[Ctx]] = {}
        for module in self.modules.values():
            for call in module.calls:
                self._calls_by_name.setdefault(call.chain[-1].removesuffix("()"), []).append((module, call))
        self.sdk_calls: list[SdkCall] = []  # live Seam calls in the changed files, SDK and raw HTTP
        self.dead_calls: list[SdkCall] = []  # Seam calls written where they never run (for the evidence)
        for path in sorted(self.changed):
            module = self.modules[path]
            for call in module.calls:
                found = self._sdk_call(module, call)
                if found is not None:
                    (self.sdk_calls if self.live(found) else self.dead_calls).append(found)
        self._add_raw_http()

    @classmethod
    def load(
        cls,
        root: Path,
        written: list[str],
        unchanged: list[str] | None = None,
        *,
        routes: bool = True,
        names: list[str] | None = None,
    ) -> Project:
        """Parse ``written`` (the files the change wrote) and the unchanged files connected to them
        (``connected``; ``routes``: also every file that declares routes, where test endpoints' handlers
        are found); Seam calls count only in ``written``."""
        wanted = [f for f in sorted(written) if parser_for(f) is not None][:MAX_FILES]
        modules = {rel: m for rel in wanted if (m := _parse_file(root, rel)) is not None}
        rest = [f for f in sorted(unchanged or []) if parser_for(f) is not None]
        modules.update(connected(root, modules, rest, routes=routes, names=names))
        entries = routes and any(m.routes or m.mounts for m in modules.values())
        return cls(list(modules.values()), set(wanted), entries=entries)

    def _add_raw_http(self) -> None:
        has_client = any(
            call.chain[-1].removesuffix("()") in _HTTP_NAMES
            for path in self.modules
            for call in self.modules[path].calls
        )
        if not has_client:
            return  # no HTTP client call anywhere: the Seam spec is not even loaded
        from skillassay.seam.rubric.rawhttp import RawHttp, route_method

        methods = all_methods()
        for request in RawHttp(self).requests():
            if request.module.path not in self.changed:
                continue
            name = route_method(request.route)
            method = request.http_method or "POST"
            found = SdkCall(
                name=name,
                written=f"{method} {request.route}",
                module=request.module,
                call=request.call,
                problems=[] if name in methods else [f"`{request.route}` has no SDK method"],
                kind="http",
                client=request.client,
                route=request.route,
                body=request.body,
                query=request.query,
                via=request.via,
            )
            (self.sdk_calls if self.live(found) else self.dead_calls).append(found)

    # ------------------------------------------------------------------ functions
    def function(self, ref: FnRef) -> Function:
        return self.modules[ref.module].functions[ref.index]

    def describe(self, ref: FnRef) -> str:
        return self.graph.describe(ref)

    def find_functions(self, name: str) -> list[FnRef]:
        """Functions called ``name``, or whose qualified name is or ends with ``name``
        (``Service.create``).
        """
        out = list(self.by_name.get(name.rsplit(".", 1)[-1], []))
        if "." in name:
            out = [
                r
                for r in out
                if self.function(r).qualname == name or self.function(r).qualname.endswith("." + name)
            ]
        return [r for r in out if not self.function(r).dead]

    def reach(self, starts: list[FnRef]) -> Reach:
        return self.graph.reach(starts)

    def reached_calls(self, reach: Reach, name: str | None = None) -> list[SdkCall]:
        """The live Seam calls (of method ``name``) made in functions of ``reach``."""
        return [c for c in self.sdk_calls if c.scope in reach and (name is None or c.name == name)]

    def chain_text(self, reach: Reach, sdk: SdkCall) -> str:
        return " -> ".join(self.graph.name(r) for r in reach.path(sdk.scope))

    def live(self, sdk: SdkCall) -> bool:
        """A call that may run: not in dead code, and in a function something refers to (or at top level)."""
        if sdk.call.dead:
            return False
        if self.graph.is_entry(sdk.scope, self.entries_known):  # without routes every module runs
            return True
        return sdk.scope in self.graph.entry_reach(self.entries_known)

    def enclosing_named(self, sdk: SdkCall) -> list[str]:
        fns = sdk.module.functions
        return [fns[i].qualname for i in sdk.module.enclosing(sdk.call.scope) if fns[i].name]

    # ------------------------------------------------------------------ for raw HTTP
    def bound(self, module: Module, scope: int | None, name: str, attribute: str | None = None) -> list[Ctx]:
        """What a name is bound to from ``scope`` (``this``/``self`` with ``attribute``: what the class's
        methods assign to that attribute)."""
        if name in ("this", "self") and attribute:
            key = f"{name}.{attribute}"
            out: list[Ctx] = []
            cls = next(
                (module.functions[i].cls for i in module.enclosing(scope) if module.functions[i].cls), None
            )
            for i, fn in enumerate(module.functions):
                if cls is not None and fn.cls == cls:
                    out.extend((v, module, i) for v in fn.bindings.get(key, []))
            info = module.classes.get(cls) if cls else None
            if info is not None:
                out.extend((v, module, None) for v in info.fields.get(attribute, []))
            return out
        for index in module.enclosing(scope):
            values = module.functions[index].bindings.get(name)
            if values:
                return [(v, module, index) for v in values]
        local: list[Ctx] = [(v, module, None) for v in module.bindings.get(name, [])]
        return local or self._global_constant(module, name)

    def _global_constant(self, module: Module, name: str) -> list[Ctx]:
        """Ruby: a constant no file requires, assigned at the top of another file of the app (an initializer's
        ``SEAM = Seam::Client.new(...)``: Rails loads ``config/initializers`` before any request, and a
        top-level constant is visible everywhere)."""
        if module.language != "ruby" or not name[:1].isupper():
            return []
        return [
            (v, other, None)
            for other in self.modules.values()
            if other is not module and other.language == "ruby"
            for v in other.bindings.get(name, [])
        ]

    def resolve_chain(self, module: Module, scope: int | None, chain: tuple[str, ...]) -> list[Ctx]:
        """What a name chain holds: a binding of the whole chain, else the head's value and then its keys
        (``ROUTES["push"]``, ``config.seam.base``), else an imported constant."""
        joined = ".".join(chain)
        direct = self.bound(module, scope, joined)
        if direct:
            return direct
        if chain[0] in ("this", "self") and len(chain) >= 2:
            current = self.bound(module, scope, chain[0], chain[1])
            rest = chain[2:]
        else:
            current = self.resolve((Value("ref", chain=chain[:1]), module, scope))
            rest = chain[1:]
            if current == [] or all(v.kind == "ref" and v.chain == chain[:1] for v, _m, _s in current):
                current = self.imported_value(module, chain[0])
        for key in rest:
            current = [v for ctx in current for v in self.key_values(ctx, key)]
        return current

    def imported_value(self, module: Module, name: str) -> list[Ctx]:
        from skillassay.languages.routes import find_module

        for ref in module.import_refs.get(name, []):
            if ref.name is None:
                continue
            target = find_module(self.modules, ref)
            if target is not None:
                local = target.exports.get(ref.name, ref.name)
                values = target.bindings.get(local, [])
                if values:
                    return [(v, target, None) for v in values]
        return []

    def param_owner(self, module: Module, scope: int | None, name: str) -> int | None:
        """The function (index) whose parameter ``name`` is, seen from ``scope``; None when it is not one."""
        for index in module.enclosing(scope):
            fn = module.functions[index]
            if name in fn.bindings:
                return None
            if name in fn.params or name == fn.kwargs_param:
                return index
        return None

    def call_sites(self, module: Module, index: int) -> list[tuple[Module, Call]]:
        """The calls that may run function ``index`` of ``module`` (resolved through the call graph)."""
        target = FnRef(module.path, index)
        name = module.functions[index].name
        if not name:
            return []
        out = []
        for caller, call in self._calls_by_name.get(name, []):
            if call.dead:
                continue
            if any(t == target for t, _how in self.graph.call_targets(caller, call)):
                out.append((caller, call))
        return out

    def object_keys(self, value: Value | None, module: Module, scope: int | None) -> list[str]:
        """The keys of the object(s) a value holds (``params={...}``, ``new URLSearchParams({...})``)."""
        if value is None:
            return []
        if value.kind == "call" and value.chain[-1:] == ("URLSearchParams",) and value.args:
            value = value.args[0]
        keys: list[str] = []
        for found, _m, _s in self.resolve((value, module, scope)):
            if found.kind == "object":
                keys.extend(k for k in found.keys if k not in keys)
        return keys

    def written_body(self, module: Module, call: Call) -> Value | None:
        """node's http(s).request: the body written with ``req.write(...)``/``req.end(...)`` on its result."""
        names = [
            n
            for n, values in self.bound_names(module, call.scope)
            if any(v.span == call.span for v in values)
        ]
        for other in module.calls:
            if (
                other.scope == call.scope
                and len(other.chain) == 2
                and other.chain[0] in names
                and other.chain[1] in ("write", "end")
                and other.args
            ):
                return other.args[0]
        return None

    def bound_names(self, module: Module, scope: int | None) -> list[tuple[str, list[Value]]]:
        table = module.functions[scope].bindings if scope is not None else module.bindings
        return list(table.items())

    # ------------------------------------------------------------------ SDK calls
    def _expand_alias(self, module: Module, call: Call) -> tuple[str, ...]:
        """``c.pushData()`` after ``const c = seam.customers`` -> ``seam.customers.pushData``."""
        chain = call.chain
        for _ in range(3):
            refs = [v for v in module.lookup(call.scope, chain[0]) if v.kind == "ref" and v.chain]
            if len(chain) < 2 or not refs or refs[0].chain[0] == chain[0]:
                break
            chain = refs[0].chain + chain[1:]
        return chain

    def _sdk_call(self, module: Module, call: Call) -> SdkCall | None:
        chain = self._expand_alias(module, call)
        if len(chain) < 2 or chain[-1].endswith("()"):
            return None
        snakes = [snake(s) for s in chain]
        namespaces = all_namespaces()
        for start in range(len(chain) - 1):
            namespace = ".".join(snakes[start:-1])
            if namespace in namespaces:
                break
        else:
            return None
        receiver = chain[:start]
        knows_seam = any("seam" in source.lower() for source in module.import_sources) or any(
            "seam" in seg.lower() for seg in receiver
        )
        if not knows_seam and not self._seam_client(module, call.scope, receiver):
            return None  # e.g. an ORM's ``db.customers.create``: not the Seam SDK
        name = f"{namespace}.{snakes[-1]}"
        if name not in all_methods() and not any("seam" in seg.lower() for seg in receiver):
            return None  # a method neither SDK has, on a receiver that does not say it is Seam
        written = ".".join(chain[start:])
        return SdkCall(
            name=name,
            written=written,
            module=module,
            call=call,
            problems=self._surface_problems(module, name, chain[start:]),
        )

    def _seam_client(self, module: Module, scope: int | None, chain: tuple[str, ...], depth: int = 0) -> bool:
        """Whether a receiver holds a Seam client made elsewhere, whatever its name: a variable, an attribute
        set in the class, a parameter (the arguments its callers pass, a constructor's included) or an import
        from the app's own module, followed to a ``Seam(...)``/``new SeamHttp(...)``/
        ``SeamHttp.fromApiKey(...)`` made in a module that imports a Seam package (``export const door = new
        Seam()`` in ``lib/``)."""
        if depth > 4 or not chain:
            return False
        head = chain[0].removesuffix("()")
        if head in ("this", "self") and len(chain) >= 2:
            found = self.bound(module, scope, head, chain[1])
        else:
            found = self.resolve((Value("ref", chain=(head,)), module, scope))
            found = [c for c in found if c[0].chain != (head,)]
            found = found or self.imported_value(module, head)
        for value, where, at in found:
            inner = value.chain[1:] if value.chain[:1] == ("new",) else value.chain
            if not inner:
                continue
            if value.kind == "call" and self._seam_made(where, inner):
                return True
            if value.kind in ("ref", "call") and self._seam_client(where, at, inner, depth + 1):
                return True
        return False

    @staticmethod
    def _seam_made(module: Module, chain: tuple[str, ...]) -> bool:
        """``Seam(...)``, ``SeamHttp.fromApiKey(...)``, ``Client(...)`` imported from a Seam package."""
        source = module.imports.get(chain[0].removesuffix("()"), "")
        return "seam" in source.lower() or (
            "seam" in chain[0].lower() and any("seam" in s.lower() for s in module.import_sources)
        )

    @staticmethod
    def _surface_problems(module: Module, name: str, written: tuple[str, ...]) -> list[str]:
        language = module.sdk_style
        surface = language_surface(language)
        label = (
            module.sdk_label or f"{_family_label(language)} SDK ({surface['package']} {surface['version']})"
        )
        entry = surface["methods"].get(name)
        if entry is None:
            return [f"`{'.'.join(written)}` is not a method of the {label}"]
        namespace = name.rsplit(".", 1)[0].split(".")
        spelled = [camel(s) if language == "javascript" else s for s in namespace] + [entry["name"]]
        if list(written) != spelled:
            return [f"the {label} has no `{'.'.join(written)}`; its method is `{'.'.join(spelled)}`"]
        return []

    def surface_params(self, sdk: SdkCall) -> list[str]:
        style = "python" if sdk.kind == "http" else sdk.module.sdk_style  # HTTP names are the Python SDK's
        entry = language_surface(style)["methods"].get(sdk.name)
        return list(entry["params"]) if entry else []

    # ------------------------------------------------------------------ values
    def resolve(self, ctx: Ctx, depth: int = 0) -> list[Ctx]:
        """Concrete values an expression may hold: refs follow local then module bindings, calls to a function
        defined in the changed files follow its return values. Memoised, and cut on cycles, so a value reached
        along many paths is followed once."""
        value, module, scope = ctx
        if depth > MAX_VALUE_DEPTH:
            return []
        key = (id(value), module.path, scope)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = []  # a cycle back to this value adds nothing
        out = self._resolve(ctx, depth)
        self._resolved[key] = out
        return out

    def _resolve(self, ctx: Ctx, depth: int) -> list[Ctx]:
        value, module, scope = ctx
        if value.kind == "ref" and value.chain:
            name = ".".join(value.chain)
            bound = module.lookup(scope, name)
            if not bound:
                passed = self._arguments_for(module, scope, name, depth)
                return passed or [ctx]
            out: list[Ctx] = []
            for v in bound:
                if v is value:
                    continue
                out.extend(self.resolve((v, module, scope), depth + 1))
            return out
        if value.kind == "call" and value.chain:
            targets = self.by_name.get(value.chain[-1].removesuffix("()"), [])
            if targets:
                out = []
                for ref in targets:
                    fn = self.function(ref)
                    for ret in fn.returns:
                        out.extend(self.resolve((ret, self.modules[ref.module], ref.index), depth + 1))
                return out
        return [ctx]

    def _arguments_for(self, module: Module, scope: int | None, name: str, depth: int) -> list[Ctx]:
        """A parameter's values: the matching argument at every call of the function (by name) in the
        changed files.
        """
        for index in module.enclosing(scope):
            fn = module.functions[index]
            if fn.name is not None and name == fn.kwargs_param:
                return self._keywords_for(fn, depth)
            if fn.name is None or name not in fn.params:
                continue
            position = fn.params.index(name)
            out: list[Ctx] = []
            callee = fn.name
            # new Service(client), Service(client)
            if fn.name in ("constructor", "__init__", "__construct") and fn.cls:
                callee = fn.cls.rsplit(".", 1)[-1]
            for caller, call in self._calls_by_name.get(callee, []):
                if name in call.kwargs:
                    arg = call.kwargs[name]
                elif position < len(call.args):
                    arg = call.args[position]
                elif _ruby_keywords_as_hash(module, fn.params, position, call):
                    arg = Value("object", call.line, keys=dict(call.kwargs))
                else:
                    continue
                out.extend(self.resolve((arg, caller, call.scope), depth + 1))
            return out
        return []

    def _keywords_for(self, fn: Function, depth: int) -> list[Ctx]:
        """A ``**opts`` parameter's values: at every call of the function (by name), the keyword arguments no
        other parameter takes, and what the call spreads into them (``new.call(*args, **opts)`` forwards its
        own)."""
        out: list[Ctx] = []
        for caller, call in self._calls_by_name.get(fn.name or "", []):
            if not call.kwargs and not call.kw_spreads:
                continue
            extra = {k: v for k, v in call.kwargs.items() if k not in fn.params}
            value = Value("object", call.line, keys=extra, spreads=list(call.kw_spreads))
            out.append((value, caller, call.scope))
        return out

    def key_values(self, ctx: Ctx, key: str, depth: int = 0) -> list[Ctx]:
        """Values under ``key`` of the object(s) ``ctx`` holds, through spreads."""
        out: list[Ctx] = []
        if depth > MAX_VALUE_DEPTH:
            return out
        for value, module, scope in self.resolve(ctx):
            if value.kind != "object":
                continue
            if key in value.keys:
                out.append((value.keys[key], module, scope))
            for spread in value.spreads:
                out.extend(self.key_values((spread, module, scope), key, depth + 1))
        return out

    def items(self, ctx: Ctx) -> list[Ctx]:
        out: list[Ctx] = []
        for value, module, scope in self.resolve(ctx):
            if value.kind == "array":
                out.extend((item, module, scope) for item in value.items)
        return out

    def argument(self, sdk: SdkCall) -> Ctx:
        """The parameters object of a call: the first argument in JavaScript, the keyword arguments in Python,
        the JSON body of a raw HTTP request."""
        call = sdk.call
        if sdk.kind == "http":
            return sdk.body if sdk.body is not None else (Value("other", call.line), sdk.module, call.scope)
        if sdk.module.language == "php":
            return self._php_arguments(sdk)
        if sdk.module.sdk_style == "python":
            return (
                Value("object", call.line, keys=dict(call.kwargs), spreads=list(call.kw_spreads)),
                sdk.module,
                call.scope,
            )
        first = call.args[0] if call.args else Value("other", call.line)
        return first, sdk.module, call.scope

    def _php_arguments(self, sdk: SdkCall) -> Ctx:
        """PHP: the named arguments, and the positional ones named by the SDK method's parameter order
        (``php_sdk``); an argument that is ``null`` is no parameter (the SDK sends none it is given null for),
        and a spread (``...$args``) is a parameters array only when its keys are strings (PHP 8.1), so a list
        spread names nothing."""
        call = sdk.call
        named = dict(zip(php_sdk.parameter_order(sdk.name), call.args, strict=False))
        named.update(call.kwargs)
        keys = {k: v for k, v in named.items() if not self._null((v, sdk.module, call.scope))}
        return Value("object", call.line, keys=keys, spreads=list(call.kw_spreads)), sdk.module, call.scope

    def _null(self, ctx: Ctx) -> bool:
        """Whether an expression is ``null`` wherever it comes from (``$code = null; create($d, $code)``)."""
        found = self.resolve(ctx)
        return bool(found) and all(v.kind == "null" for v, _m, _s in found)
