"""Seam's HTTP API called directly, without an SDK: found, and mapped onto the SDK method it stands for.

A request counts when an HTTP client sends it (Python: requests, httpx, aiohttp, urllib, http.client;
JavaScript/TypeScript: fetch, axios, got, ky, undici, node's http/https) to a URL whose path is a route of
Seam's OpenAPI document (``seam/emulator/spec.load_spec``, the copy the emulator validates against; its route
paths are read from ``data/seam_routes.json``):
``/customers/push_data`` is ``customers.push_data``, so answer keys name SDK methods whatever the agent used.
The URL may be a literal, a constant, an f-string or template literal, a concatenation (``BASE +
"/customers/push_data"``, ``urljoin``, ``new URL(path, base)``), or come from a small wrapper's parameter
(``seam_post("/customers/push_data", body)``): then the request is counted at each call of the wrapper, with
that call's path and body (up to ``MAX_WRAPPERS`` wrappers deep); a Guzzle client's ``base_uri`` is resolved
against it as Guzzle does (``resolve_reference``: another service's base makes a path no Seam call), Laravel's
``Http::baseUrl`` as Laravel does (``laravel_base_url``). The JSON
body's keys are the parameters (``json=``, ``data=json.dumps(...)``, ``body: JSON.stringify(...)``, axios's
data, got's ``json``), and so are a query string's (``params=``, ``?k=v``, ``new URLSearchParams({...})``) for
routes called with GET or DELETE.
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from skillassay import stacks
from skillassay.languages.base import Call, Module, Value

MAX_WRAPPERS = 3  # wrapper(path) -> helper(path) -> client: how many functions a path may be passed through

# the HTTP client libraries (first segment of the import source) are the stacks'
# (``SourceSyntax.http_clients``), by the SDK family a module's code calls
HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options"}
_CLIENT_FACTORIES = {
    "Session",
    "Client",
    "AsyncClient",
    "ClientSession",
    "PoolManager",
    "create",
    "extend",
    "HTTPSConnection",
    "HTTPConnection",
    "Agent",
    "Pool",
}
_HOLE = "\x00"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
_Ctx = tuple[Value, Module, "int | None"]
_Parts = list[tuple[str, object]]


# The route paths of the shipped OpenAPI document, written beside it by scripts/export_seam_openapi.py (a
# test holds the two equal): parsing the 2 MB document to know its route names cost a rubric run ~50 ms.
ROUTES_FILE = Path(__file__).parent / "data" / "seam_routes.json"


def render_routes(version: str, routes: Iterable[str]) -> str:
    """The text of ``ROUTES_FILE`` for the document of ``@seamapi/types`` ``version``."""
    return json.dumps({"types_version": version, "routes": sorted(routes)}, indent=1) + "\n"


@functools.cache
def seam_routes() -> frozenset[str]:
    """The route paths of the Seam API (``/customers/push_data``), as the shipped OpenAPI document has."""
    return frozenset(json.loads(ROUTES_FILE.read_text(encoding="utf-8"))["routes"])


@functools.cache
def _namespaces() -> frozenset[str]:
    from skillassay.seam.rubric.sdk_surface import all_namespaces

    return frozenset(n.split(".")[0] for n in all_namespaces())


def _could_be_seam(path: str) -> bool:
    """A cheap first look (the SDK surface is already loaded): does any segment name a Seam namespace?"""
    return any(seg in _namespaces() for seg in re.split(r"[/\x00]", path))


def route_method(route: str) -> str:
    """``/customers/push_data`` -> ``customers.push_data``."""
    return ".".join(p for p in route.strip("/").split("/") if p)


@dataclass
class ClientCall:
    """An HTTP client call as written: which client, and the expressions holding its URL, method, body,
    query.
    """

    client: str  # "requests.post", "fetch", "axios.post", "https.request"
    method: str | None  # "POST", ... when known
    url: Value | None
    body: Value | None = None
    query: Value | None = None
    # the base URLs of the client instances it may be called on (Guzzle's ``base_uri``), each resolved
    # against the call's URL; None for an instance made without one. Empty: not known, the URL alone
    bases: list[_Ctx | None] = field(default_factory=list)
    # how a base and a URL are joined: RFC 3986 (Guzzle) or Laravel's ``Http::baseUrl`` (one ``/`` between)
    join: Literal["rfc3986", "laravel"] = "rfc3986"


@dataclass
class RawRequest:
    """A request to one Seam route, at the call that makes it (the client call, or the wrapper call it is
    counted at)."""

    route: str
    client: str
    http_method: str | None
    module: Module  # where it is counted
    call: Call
    body: tuple[Value, Module, int | None] | None
    query: list[str] = field(default_factory=list)  # parameter names in the URL's query string
    via: list[str] = field(default_factory=list)  # wrapper functions it was passed through ("seam_post")


def _lib_of(source: str) -> str:
    return (
        source.split(".", maxsplit=1)[0].split("/", maxsplit=1)[0] if not source.startswith("@") else source
    )


def _unwrap_body(value: Value | None) -> Value | None:
    """``json.dumps(x)``, ``JSON.stringify(x)``, ``json.dumps(x).encode()``,
    ``Buffer.from(JSON.stringify(x))`` -> x.
    """
    for _ in range(4):
        if value is None or value.kind != "call":
            return value
        name = value.chain[-1] if value.chain else ""
        if name in ("dumps", "stringify", "encode", "from", "bytes") and value.args:
            value = value.args[0]
            continue
        if name == "encode" and len(value.chain) > 1:  # json.dumps(x).encode(): chain ends in "dumps()"
            return value
        return value
    return value


def _option(options: Value | None, *names: str) -> Value | None:
    if options is None or options.kind != "object":
        return None
    for name in names:
        if name in options.keys:
            return options.keys[name]
    return None


def _method_text(value: Value | None) -> str | None:
    if value is not None and value.kind == "str":
        return value.text.upper()
    return None


def _set_body(module: Module, call: Call) -> Value | None:
    """The body a Ruby request object is given after it is made (``request = Net::HTTP::Post.new(uri)``, then
    ``request.body = payload.to_json``): the setter's value bound to the same local in the same method."""
    if call.scope is None:
        return None
    for values in module.functions[call.scope].bindings.values():
        if any(v.kind == "call" and v.chain == call.chain and v.line == call.line for v in values):
            bodies = [v.keys["body"] for v in values if v.kind == "object" and "body" in v.keys]
            if bodies:
                return bodies[-1]
    return None


def _included_client(module: Module, call: Call, receiver: tuple[str, ...]) -> str | None:
    """A Ruby class that includes an HTTP client module (``include HTTParty``) and calls it on itself
    (``self.class.post`` in an instance method, ``self.post`` or ``post`` in a class method): the client."""
    if call.scope is None or receiver not in (("self", "class"), ("self",)):
        return None
    info = module.classes.get(module.functions[call.scope].cls or "")
    if info is None:
        return None
    libs = stacks.http_clients(module.sdk_style)
    for base in info.bases:
        lib = _RUBY_INCLUDED.get(base[-1]) if base else None
        if lib is not None and lib in libs:
            return lib
    return None


_RUBY_INCLUDED = {"HTTParty": "httparty"}  # client modules a class includes to call them as its own methods


class RawHttp:
    """Finds raw Seam requests in a project (``graders.rubric.project.Project``)."""

    def __init__(self, project):
        self.project = project

    # ------------------------------------------------------------------ which calls are HTTP client calls
    def _origin(
        self, module: Module, scope: int | None, chain: tuple[str, ...], depth: int = 0
    ) -> str | None:
        """The HTTP library a receiver chain comes from (``requests``, ``axios``, ``fetch``...), if any."""
        if not chain or depth > 5:
            return None
        head = chain[0].removesuffix("()")
        if head == "fetch" and len(chain) == 1:
            return "fetch"
        if head in ("globalThis", "window", "global") and len(chain) > 1 and chain[1] == "fetch":
            return "fetch"
        libs = stacks.http_clients(module.sdk_style)
        source = module.imports.get(head)
        # imported from the app's own module: what it exports (``export const api = axios.create()``)
        exported = self.project.imported_value(module, head) if source is not None else []
        if source is not None and not exported:
            lib = _lib_of(source)
            if lib in libs or source in libs:
                return source if source in libs else lib
            return None
        if exported:
            values = exported
        else:
            values = self.project.bound(
                module,
                scope,
                chain[0] if not chain[0].endswith("()") else head,
                chain[1] if chain[0] in ("this", "self") and len(chain) > 1 else None,
            )
        for ctx in values:
            value, where, at = ctx
            if value.kind == "call" and value.chain:
                inner = value.chain[1:] if value.chain[0] == "new" else value.chain
                origin = self._origin(where, at, inner, depth + 1)
                if origin is not None:
                    return origin
            elif value.kind == "ref" and value.chain:
                origin = self._origin(where, at, value.chain, depth + 1)
                if origin is not None:
                    return origin
        return None

    def client_call(self, module: Module, call: Call) -> ClientCall | None:
        chain = call.chain
        if not chain:
            return None
        last = chain[-1].removesuffix("()")
        receiver = chain[:-1]
        python = module.language == "python"
        if python:
            return self._python_call(module, call, chain, last, receiver)
        if module.language == "ruby":
            return self._ruby_call(module, call, chain, last, receiver)
        if module.language == "php":
            return self._php_call(module, call, last, receiver)
        return self._js_call(module, call, chain, last, receiver)

    def _ruby_call(self, module, call, chain, last, receiver) -> ClientCall | None:
        """Faraday (``conn.post(path, body)``, ``Faraday.post``), Net::HTTP (``Net::HTTP.post(uri, body)``,
        ``Net::HTTP::Post.new(uri)``), HTTParty (``HTTParty.post(url, body: ...)``) and their kin."""
        args, kw = call.args, call.kwargs
        first = args[0] if args else kw.get("url")
        second = args[1] if len(args) > 1 else None
        if chain[0] == "new":  # Net::HTTP::Post.new(uri): the request object, sent later
            verb = chain[-1].lower()
            if chain[1:3] == ("Net", "HTTP") and len(chain) == 4 and verb in HTTP_VERBS:
                return ClientCall(f"Net::HTTP::{chain[-1]}", verb.upper(), first, _set_body(module, call))
            return None
        if not receiver:
            return None
        origin = (
            self._origin(module, call.scope, receiver)
            or self._returned_origin(module, receiver)
            or _included_client(module, call, receiver)
        )
        if origin is None:
            return None
        if origin == "net/http":
            if last in ("post", "post_form", "put", "patch"):
                return ClientCall(f"Net::HTTP.{last}", last.split("_")[0].upper(), first, second)
            if last in ("get", "get_response"):
                return ClientCall(f"Net::HTTP.{last}", "GET", first)
            return None
        if last not in HTTP_VERBS:
            return None
        if origin == "httparty":
            return ClientCall(f"HTTParty.{last}", last.upper(), first, kw.get("body"), kw.get("query"))
        sends_body = last in ("post", "put", "patch")
        return ClientCall(
            f"{origin}.{last}",
            last.upper(),
            first,
            (second or kw.get("body")) if sends_body else None,
            None if sends_body else second or kw.get("params"),
        )

    def _php_call(self, module, call, last, receiver) -> ClientCall | None:
        """Guzzle (``$client->post($url, ['json' => [...]])``, ``$client->request('POST', $url, [...])``, on a
        ``new Client(...)`` a variable or property holds or a parameter typed ``Client``) and Laravel's
        ``Http`` facade (``Http::withToken($t)->post($url, [...])``: the array is the JSON body, or a GET's
        query)."""
        if not receiver:
            return None
        origin = (
            self._origin(module, call.scope, receiver)
            or self._typed_origin(module, call.scope, receiver)
            or self._returned_origin(module, receiver)
        )
        if origin is None:
            return None
        args = call.args
        name = last.removesuffix("Async")
        if name in ("request", "send") and len(args) >= 2:
            method, url, options = _method_text(args[0]), args[1], args[2] if len(args) > 2 else None
        elif name in HTTP_VERBS and args:
            method, url, options = name.upper(), args[0], args[1] if len(args) > 1 else None
        else:
            return None
        laravel = "facades" in origin
        client = f"{'Http' if laravel else 'Guzzle'}.{last}"
        bases = (
            self._base_url(module, call.scope, receiver, call.span[0] if call.span else None)
            if laravel
            else self._guzzle_bases(module, call.scope, receiver)
        )
        join: Literal["rfc3986", "laravel"] = "laravel" if laravel else "rfc3986"
        if laravel and name not in ("request", "send"):
            sends_body = method not in ("GET", "HEAD")  # get($url, $query); delete($url, $data) sends JSON
            body, query = (options, None) if sends_body else (None, options)
            return ClientCall(client, method, url, body, query, bases, join)
        body = _option(options, "json", "form_params") or _unwrap_body(_option(options, "body"))
        return ClientCall(client, method, url, body, _option(options, "query"), bases, join)

    def _base_url(
        self, module: Module, scope: int | None, chain: tuple[str, ...], start: int | None, depth: int = 0
    ) -> list[_Ctx | None]:
        """``Http::baseUrl($base)->...->post($url)``: the argument of the chain's last ``baseUrl`` call (among
        the module's calls, the one that starts where the chain does, at ``start``), or of the one a variable
        or property holds (``$api = Http::baseUrl($base)->withToken($t); $api->post(...)``)."""
        if "baseUrl()" in chain and start is not None:
            at = len(chain) - 1 - chain[::-1].index("baseUrl()")
            inner = (*chain[:at], "baseUrl")
            for other in module.calls:
                if other.chain == inner and other.span is not None and other.span[0] == start and other.args:
                    return [(other.args[0], module, other.scope)]
            return []
        if depth > 3 or not chain or not (len(chain) == 1 or (chain[0] == "this" and len(chain) == 2)):
            return []
        out: list[_Ctx | None] = []
        for value, where, at in self.project.bound(
            module, scope, chain[0], chain[1] if len(chain) == 2 else None
        ):
            if value.kind == "call" and value.chain[-1:] == ("baseUrl",) and value.args:
                out.append((value.args[0], where, at))
            elif value.kind == "call" and value.span is not None:
                out.extend(self._base_url(where, at, value.chain, value.span[0], depth + 1))
        return out

    def _guzzle_bases(
        self, module: Module, scope: int | None, receiver: tuple[str, ...]
    ) -> list[_Ctx | None]:
        """The ``base_uri`` of each ``new Client([...])`` the receiver may hold (None for one made without
        it); empty when no construction is found (a client the container injects)."""
        out: list[_Ctx | None] = []
        for value, where, at in self._constructions(module, scope, receiver):
            if _lib_of(self._origin(where, at, value.chain[1:]) or "") != "guzzlehttp":
                continue
            config = (value.args[0], where, at) if value.args else None
            found = self.project.key_values(config, "base_uri") if config is not None else []
            out.extend(found or [None])
        return out

    def _constructions(
        self, module: Module, scope: int | None, chain: tuple[str, ...], depth: int = 0
    ) -> list[_Ctx]:
        """The ``new X(...)`` calls a receiver may hold: a variable or property bound to one (or to a name
        that is), a parameter given one by its callers, a method of the class returning one
        (``$this->client()``, ``??=`` included)."""
        if depth > 4 or not chain:
            return []
        method = chain[-1].removesuffix("()") if chain[-1].endswith("()") else None
        if method is not None and (len(chain) == 1 or chain[0] in ("this", "self")) and len(chain) <= 2:
            values = [
                (v, module, i)
                for i, fn in enumerate(module.functions)
                if fn.name == method
                for v in fn.returns
            ]
        elif chain[0] in ("this", "self") and len(chain) == 2:
            values = self.project.bound(module, scope, chain[0], chain[1])
        elif len(chain) == 1:
            values = self.project.resolve((Value("ref", chain=chain), module, scope))
        else:
            return []
        out: list[_Ctx] = []
        for value, where, at in values:
            if value.kind == "call" and value.chain[:1] == ("new",):
                out.append((value, where, at))
            elif value.kind == "ref" and value.chain and value.chain != chain:
                out.extend(self._constructions(where, at, value.chain, depth + 1))
        return out

    def _typed_origin(self, module: Module, scope: int | None, receiver: tuple[str, ...]) -> str | None:
        """A receiver whose class its parameter's type names (``__construct(private Client $http)``,
        ``function send(Client $client)``): the HTTP library that class is imported from."""
        if receiver[:1] == ("this",) and len(receiver) == 2:
            cls = next(
                (module.functions[i].cls for i in module.enclosing(scope) if module.functions[i].cls), None
            )
            typed = [f.param_types.get(receiver[1]) for f in module.functions if f.cls == cls and cls]
        elif len(receiver) == 1:
            typed = [module.functions[i].param_types.get(receiver[0]) for i in module.enclosing(scope)]
        else:
            return None
        for annotated in typed:
            if annotated:
                origin = self._origin(module, scope, annotated[:1])
                if origin is not None:
                    return origin
        return None

    def _returned_origin(self, module: Module, receiver: tuple[str, ...]) -> str | None:
        """A Ruby receiver that is a method of the app (``connection.post`` with ``def connection;
        Faraday.new(...); end``): the client its return value is made by."""
        # Ruby's `self.connection` / `connection`; PHP's `$this->client()` (the chain keeps the call's `()`)
        name = receiver[-1] if receiver[:1] in (("self",), ("this",)) and len(receiver) == 2 else None
        name = (name or (receiver[0] if len(receiver) == 1 else "")).removesuffix("()") or None
        for index, fn in enumerate(module.functions):
            if fn.name != name:
                continue
            for value in fn.returns:
                if value.kind == "call" and value.chain:
                    inner = value.chain[1:] if value.chain[0] == "new" else value.chain
                    if (origin := self._origin(module, index, inner)) is not None:
                        return origin
        return None

    def _python_call(self, module, call, chain, last, receiver) -> ClientCall | None:
        if len(chain) == 1:
            source = module.imports.get(last, "")
            lib = _lib_of(source)
            if lib not in stacks.http_clients(module.sdk_style):
                return None
            origin: str | None = lib
        else:
            origin = self._origin(module, call.scope, receiver)
            if origin is None:
                return None
        kw = call.kwargs
        args = call.args
        if last == "urlopen":  # urlopen(url_or_request, data=...)
            target = args[0] if args else kw.get("url")
            if target is not None and target.kind == "call" and target.chain[-1:] == ("Request",):
                return None  # counted at the Request(...) call
            data = kw.get("data") or (args[1] if len(args) > 1 else None)
            return ClientCall(
                "urllib.request.urlopen", "POST" if data is not None else "GET", target, _unwrap_body(data)
            )
        if last == "Request" and origin == "urllib":
            url = args[0] if args else kw.get("url")
            data = kw.get("data") or (args[1] if len(args) > 1 else None)
            method: str | None = _method_text(kw.get("method")) or ("POST" if data is not None else "GET")
            return ClientCall("urllib.request.Request", method, url, _unwrap_body(data))
        if last == "request":
            method = _method_text(args[0] if args else kw.get("method"))
            url = args[1] if len(args) > 1 else kw.get("url")
            body = kw.get("json") or _unwrap_body(
                kw.get("data")
                or kw.get("content")
                or kw.get("body")
                or (args[2] if len(args) > 2 and origin == "http" else None)
            )
            return ClientCall(f"{origin}.request", method, url, body, kw.get("params"))
        if last in HTTP_VERBS:
            url = args[0] if args else kw.get("url")
            body = kw.get("json") or _unwrap_body(kw.get("data") or kw.get("content"))
            return ClientCall(f"{origin}.{last}", last.upper(), url, body, kw.get("params"))
        return None

    def _js_call(self, module, call, chain, last, receiver) -> ClientCall | None:
        args = call.args
        if len(chain) == 1 or (len(chain) == 2 and chain[0] in ("globalThis", "window", "global")):
            origin = (
                "fetch"
                if last == "fetch"
                and (
                    last not in module.imports
                    or _lib_of(module.imports[last]) in stacks.http_clients(module.sdk_style)
                )
                else None
            )
            if origin is None:
                source = module.imports.get(last)
                lib = _lib_of(source) if source else None
                if lib in ("axios", "got", "ky", "undici") or source == "undici":
                    origin = lib
                else:
                    bound = self._origin(module, call.scope, (last,))
                    if bound is None:
                        return None
                    origin = bound
            assert origin is not None  # fetch, a known client library, or a bound origin
            return self._js_generic(origin, last if origin != "fetch" else "fetch", args, call, module)
        origin = self._origin(module, call.scope, receiver)
        if origin is None:
            return None
        return self._js_generic(origin, last, args, call, module)

    def _js_generic(
        self, origin: str, name: str, args: list[Value], call: Call, module: Module
    ) -> ClientCall | None:
        first = args[0] if args else None
        second = args[1] if len(args) > 1 else None
        third = args[2] if len(args) > 2 else None
        if origin in ("fetch", "node-fetch", "cross-fetch", "isomorphic-fetch") or (
            origin == "undici" and name == "fetch"
        ):
            return ClientCall(
                "fetch",
                _method_text(_option(second, "method")) or "GET",
                first,
                _unwrap_body(_option(second, "body")),
            )
        if origin == "undici":
            return ClientCall(
                f"undici.{name}",
                _method_text(_option(second, "method")) or "GET",
                first,
                _unwrap_body(_option(second, "body")),
            )
        if origin in ("http", "https", "node:http", "node:https"):
            if name not in ("request", "get"):
                return None
            options = first if first is not None and first.kind == "object" else second
            url = first if first is not None and first.kind != "object" else _option(options, "path")
            method = _method_text(_option(options, "method")) or "GET"
            return ClientCall(
                f"{origin.removeprefix('node:')}.{name}", method, url, self.project.written_body(module, call)
            )
        if origin == "axios":
            if name in ("axios", "request") or name == "default":
                config = first if first is not None and first.kind == "object" else second
                url = _option(config, "url") if first is None or first.kind == "object" else first
                return ClientCall(
                    "axios",
                    _method_text(_option(config, "method")) or "GET",
                    url,
                    _option(config, "data"),
                    _option(config, "params"),
                )
            if name in ("post", "put", "patch"):
                return ClientCall(f"axios.{name}", name.upper(), first, second, _option(third, "params"))
            if name in ("get", "delete", "head", "options"):
                return ClientCall(
                    f"axios.{name}", name.upper(), first, _option(second, "data"), _option(second, "params")
                )
            return None
        if origin in ("got", "ky"):
            options = second
            if name in HTTP_VERBS:
                method = name.upper()
            elif name in (origin, "default"):
                method = _method_text(_option(options, "method")) or "GET"
            else:
                return None
            body = _option(options, "json") or _unwrap_body(_option(options, "body"))
            return ClientCall(
                f"{origin}.{name}" if name in HTTP_VERBS else origin,
                method,
                first,
                body,
                _option(options, "searchParams"),
            )
        if origin == "superagent" and name in HTTP_VERBS:
            return ClientCall(f"superagent.{name}", name.upper(), first, None)
        return None

    # ------------------------------------------------------------------ URLs
    def _parts(self, ctx, env: dict, depth: int = 0) -> list[list[tuple[str, object]]]:
        """The alternatives a URL expression may spell, each a list of parts: ("text", str) or ("hole", what),
        where ``what`` is ``(module, function index, parameter name)`` for a parameter no call binds yet
        (None for anything else unknown)."""
        value, module, scope = ctx
        if depth > 8:
            return [[("hole", None)]]
        if value.kind == "str":
            return [[("text", value.text)]]
        if value.kind == "template":
            alternatives: list[list[tuple[str, object]]] = [[]]
            for part in value.items:
                options = self._parts((part, module, scope), env, depth + 1)[:6]
                alternatives = [a + o for a in alternatives for o in options][:12]
            return alternatives
        if value.kind == "ref" and value.chain:
            name = value.chain[0]
            owner = self.project.param_owner(module, scope, name) if len(value.chain) == 1 else None
            if owner is not None and not self.project.bound(module, scope, name):
                key = (module.path, owner, name)
                if key in env:
                    return self._parts(env[key], {k: v for k, v in env.items() if k != key}, depth + 1)
                return [[("hole", (module, owner, name))]]
            bound = self.project.resolve_chain(module, scope, value.chain)
            out = []
            for found in bound[:6]:
                if found[0] is value:
                    continue
                out.extend(self._parts(found, env, depth + 1))
            return out or [[("hole", None)]]
        if value.kind == "call" and value.chain[-1:] == ("URLSearchParams",):
            keys = self.project.object_keys(value, module, scope)
            return [[("query", keys)]]
        if value.kind == "call" and value.chain:
            last = value.chain[-1]
            if (last in ("urljoin", "join") and len(value.args) >= 2 and last == "urljoin") or (
                value.chain[:1] == ("new",) and value.chain[-1] == "URL" and len(value.args) >= 2
            ):
                base, path = (
                    (value.args[0], value.args[1]) if last == "urljoin" else (value.args[1], value.args[0])
                )
                return self._parts(
                    (Value("template", items=[base, Value("str", text="/"), path]), module, scope),
                    env,
                    depth + 1,
                )
            if value.chain[:1] == ("new",) and value.chain[-1] == "URL" and value.args:
                return self._parts((value.args[0], module, scope), env, depth + 1)
            if (
                last in ("rstrip", "strip", "trim", "replace", "removesuffix", "toString", "format")
                and len(value.chain) == 1
                and value.args
            ):
                return [[("hole", None)]]
            # a function building the URL: follow its return values
            out = []
            for found in self.project.resolve((value, module, scope))[:6]:
                if found[0] is value:
                    continue
                out.extend(self._parts(found, env, depth + 1))
            return out or [[("hole", None)]]
        return [[("hole", None)]]

    @staticmethod
    def _route_in(parts: list[tuple[str, object]]) -> tuple[str | None, list[str]]:
        """The Seam route a URL spells (its path's end), and the parameter names of a literal query string."""
        text = "".join(cast(str, p[1]) if p[0] == "text" else _HOLE for p in parts)
        path, _, query = text.partition("?")
        given = [k for p in parts if p[0] == "query" for k in cast("list[str]", p[1])]
        path = path.split("#")[0]
        host = re.match(r"^[a-z]+://([^/]*)", path)
        if host and _HOLE not in host.group(1):
            name = host.group(1).lower()
            if "seam" not in name and not name.startswith(("localhost", "127.", "0.0.0.0", "[::1]")):
                return None, []  # another service's API
        if not _could_be_seam(path):
            return None, []  # no Seam namespace in the path: the spec need not even be loaded
        routes = seam_routes()
        candidates = [
            r
            for r in routes
            if path.endswith((r, r + "/"))
            or (path.endswith(r.lstrip("/")) and (len(path) == len(r) - 1 or path[-len(r)] in (_HOLE, "/")))
        ]
        if not candidates:
            return None, []
        route = max(candidates, key=len)
        keys = re.findall(r"(?:^|&)([A-Za-z_][A-Za-z0-9_\[\].]*)=", query.replace(_HOLE, ""))
        return route, [k.removesuffix("[]") for k in keys] + given

    # ------------------------------------------------------------------ the requests
    def requests(self) -> list[RawRequest]:
        out: list[RawRequest] = []
        seen: set[tuple[str, int, str]] = set()
        for module in self.project.modules.values():
            for call in module.calls:
                if call.dead:
                    continue
                client = self.client_call(module, call)
                if client is None or client.url is None:
                    continue
                for request in self._lift(module, call, client, module, call, {}, [], 0):
                    key = (request.module.path, id(request.call), request.route)
                    if key not in seen:
                        seen.add(key)
                        out.append(request)
        return out

    def _lift(
        self,
        module: Module,
        call: Call,
        client: ClientCall,
        at_module: Module,
        at_call: Call,
        env: dict,
        via: list[str],
        depth: int,
    ) -> list[RawRequest]:
        """The requests a client call makes, counted at ``at_call`` (itself, or the wrapper call that gives it
        its path), with ``env`` binding the wrappers' parameters to the arguments of that call."""
        assert client.url is not None  # calls without a URL are not lifted
        found: list[RawRequest] = []
        holes: list[tuple[Module, int, str]] = []
        for parts in self._based(client, self._parts((client.url, module, call.scope), env)[:12]):
            route, query = self._route_in(parts)
            if route is not None:
                body = self._body(client.body, module, call.scope, env)
                names = list(query) + self.project.object_keys(client.query, module, call.scope)
                found.append(
                    RawRequest(
                        route, client.client, client.method, at_module, at_call, body, names, list(via)
                    )
                )
            else:
                holes.extend(p[1] for p in parts if p[0] == "hole" and p[1] and p[1] not in holes)  # type: ignore[misc]
        if found or not holes or depth >= MAX_WRAPPERS:
            return found
        # the path comes from a parameter of a function: count the request at that function's callers
        owner_module, fn_index, _name = holes[0]
        fn = owner_module.functions[fn_index]
        for caller_module, caller_call in self.project.call_sites(owner_module, fn_index):
            if caller_call.dead:
                continue
            new_env = dict(env)
            for position, name in enumerate(fn.params):
                arg = caller_call.kwargs.get(name)
                if arg is None and position < len(caller_call.args):
                    arg = caller_call.args[position]
                if arg is not None:
                    new_env[(owner_module.path, fn_index, name)] = (arg, caller_module, caller_call.scope)
            if fn.kwargs_param:  # def call(self, path, **body): the other keyword arguments are the body
                extra = {k: v for k, v in caller_call.kwargs.items() if k not in fn.params}
                new_env[(owner_module.path, fn_index, fn.kwargs_param)] = (
                    Value("object", caller_call.line, keys=extra, spreads=list(caller_call.kw_spreads)),
                    caller_module,
                    caller_call.scope,
                )
            found.extend(
                self._lift(
                    module, call, client, caller_module, caller_call, new_env, [*via, fn.qualname], depth + 1
                )
            )
        return found

    def _based(self, client: ClientCall, urls: list[_Parts]) -> list[_Parts]:
        """The URLs a request goes to: each of the call's resolved against each base URL of its client."""
        if not client.bases:
            return urls
        out: list[_Parts] = []
        for base in client.bases:
            if base is None:
                out.extend(urls)
                continue
            for resolved in self.project.resolve(base)[:6]:
                for parts in self._parts(resolved, {})[:6]:
                    # a hole of the base is no parameter of the function making the request
                    known = [(kind, None if kind == "hole" else what) for kind, what in parts]
                    join = resolve_reference if client.join == "rfc3986" else laravel_base_url
                    out.extend(join(known, url) for url in urls)
        return out[:12]

    def _body(self, body: Value | None, module: Module, scope: int | None, env: dict):
        if body is None:
            return None
        body = _unwrap_body(body)
        for _ in range(MAX_WRAPPERS + 1):
            if body is None or body.kind != "ref" or len(body.chain) != 1:
                break
            # the body handed in by the caller: that call's own value, not every caller's
            owner = self.project.param_owner(module, scope, body.chain[0])
            key = (module.path, owner, body.chain[0])
            if owner is None or key not in env:
                break
            value, module, scope = env[key]
            body = _unwrap_body(value)
        return (body, module, scope) if body is not None else None


# ---------------------------------------------------------------------- base URLs
def _spelled(parts: _Parts) -> str:
    return "".join(cast(str, what) if kind == "text" else _HOLE for kind, what in parts)


def _cut(parts: _Parts, end: int) -> _Parts:
    """The parts spelling the first ``end`` characters of ``_spelled(parts)``."""
    out: _Parts = []
    for kind, what in parts:
        if end <= 0:
            break
        if kind == "text":
            text = cast(str, what)[:end]
            out.append(("text", text))
            end -= len(text)
        else:
            out.append((kind, what))
            end -= 1
    return out


def resolve_reference(base: _Parts, ref: _Parts) -> _Parts:
    """A request's URL against its client's base URL, as RFC 3986 (5.2) resolves a reference and Guzzle its
    ``base_uri``: an absolute URL is itself; ``//host/x`` takes the base's scheme; ``/x`` replaces the base's
    path; ``x`` replaces what follows the base path's last ``/`` (``https://h`` + ``x`` is ``https://h/x``).
    A URL that starts with something unknown may be absolute: it is left as it is."""
    base_text, ref_text = _spelled(base), _spelled(ref)
    if not base_text or ref_text.startswith(_HOLE) or _SCHEME.match(ref_text):
        return ref
    if _HOLE not in base_text + ref_text:
        return [("text", urllib.parse.urljoin(base_text, ref_text))]
    authority = _AUTHORITY.match(base_text)
    path_end = len(re.split(r"[?#]", base_text, maxsplit=1)[0])
    origin = authority.end() if authority else min(path_end, (base_text + "/").index("/"))
    if ref_text.startswith("//"):
        return [("text", base_text.split(":", 1)[0] + ":"), *ref] if authority else ref
    if ref_text.startswith("/"):
        return [*_cut(base, origin), *ref]
    if not ref_text or ref_text.startswith(("?", "#")):
        return [*_cut(base, path_end), *ref]
    slash = base_text.rfind("/", origin, path_end)
    if slash < 0:
        return [*_cut(base, origin), ("text", "/"), *ref]
    return [*_cut(base, slash + 1), *ref]


def laravel_base_url(base: _Parts, ref: _Parts) -> _Parts:
    """Laravel's ``Http::baseUrl``: the base without its trailing ``/``, one ``/``, the URL without its
    leading one, as Laravel 8 (the version the Laravel stack installs, ``PendingRequest::send``) joins them
    whatever the URL, an absolute one too (newer Laravel leaves that one as it is: then no Seam call is
    credited that Laravel 8 sends to the base's host). A URL starting with something unknown is left as it
    is."""
    base_text, ref_text = _spelled(base), _spelled(ref)
    if not base_text or ref_text.startswith(_HOLE):
        return ref
    head = [*base[:-1], ("text", cast(str, base[-1][1]).rstrip("/"))] if base[-1][0] == "text" else base
    tail = [("text", cast(str, ref[0][1]).lstrip("/")), *ref[1:]] if ref and ref[0][0] == "text" else ref
    return [*head, ("text", "/"), *tail]
