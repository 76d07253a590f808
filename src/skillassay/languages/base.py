"""What every language module extracts from one source file: a small, language-neutral outline.

A language module turns source text into a ``Module``: the functions (with line ranges and local bindings),
every call (receiver chain and arguments), routes, and the string literals that sit in decision positions. The
checks work on this outline only, so a new language is one new module (listed in ``skillassay.languages``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

ValueKind = Literal["object", "array", "ref", "call", "func", "str", "template", "null", "other"]
Span = tuple[int, int]  # byte offsets [start, end) in the file


@dataclass
class Value:
    """An expression, as far as the checks care about it.

    ``object``: ``keys`` (literal keys) and ``spreads`` (``...base`` / ``**base``); ``array``: ``items`` (for
    a ``.map(x => ({...}))`` or a comprehension, the one element template); ``ref``: a name chain
    (``seam.customers``); ``call``: ``chain`` of the callee and ``args``; ``func``: ``func``, an index into
    ``Module.functions``; ``str``: ``text``; ``template``: a string put together (f-string, template literal,
    ``a + "/b"``), ``items`` its parts in order (``str`` values for the literal text); ``null``: the literal
    ``null`` of a language that reads it (PHP: an SDK argument given ``null`` is no parameter). ``span``:
    where the expression is written; ``key_spans``: for an object literal, where each key's whole entry
    (``key: value``) is written.
    """

    kind: ValueKind
    line: int = 0
    keys: dict[str, Value] = field(default_factory=dict)
    spreads: list[Value] = field(default_factory=list)
    items: list[Value] = field(default_factory=list)
    chain: tuple[str, ...] = ()
    args: list[Value] = field(default_factory=list)
    func: int | None = None
    text: str = ""
    span: Span | None = None
    key_spans: dict[str, Span] = field(default_factory=dict)


@dataclass
class Call:
    """A call expression. ``chain`` is the callee as segments: ``this.seam.customers.pushData`` ->
    ``("this", "seam", "customers", "pushData")``; a call inside the chain keeps its name with ``()``
    (``getSeam().customers.pushData`` -> ``("getSeam()", "customers", "pushData")``)."""

    chain: tuple[str, ...]
    line: int
    args: list[Value] = field(default_factory=list)
    kwargs: dict[str, Value] = field(default_factory=dict)  # Python keyword arguments
    kw_spreads: list[Value] = field(default_factory=list)  # Python ``**payload``
    # innermost enclosing function (index into Module.functions), None at module level
    scope: int | None = None
    # Code that can never run: behind a constant-false condition (``if False:``, ``if (false)``, ``false &&
    # f()``, ``a if False else b``) or after ``return``/``raise``/``throw`` in the same block. Graders treat
    # it as absent.
    dead: bool = False
    span: Span | None = None  # the whole call expression
    callee_span: Span | None = None  # the callee (``seam.customers.pushData``)
    stmt: Span | None = None  # the innermost statement holding the call
    stmt_kind: str = ""  # "expression" (a bare call statement), "declaration", "return", "other"
    kw_spans: dict[str, Span] = field(default_factory=dict)  # Python: each keyword argument's ``k=v``
    # A function handed over to run later (``asyncio.to_thread(seam.x.create, ...)``, ``setTimeout(fn,
    # 0, a)``): the runner's name; the call stands for the runner calling it (``languages/handover.py``)
    handed_over: str = ""
    # Python: the call is a whole expression statement and not awaited, so a coroutine it makes is dropped
    # and never runs. Languages where an un-awaited promise runs anyway (TypeScript) leave it False.
    dropped: bool = False


@dataclass
class Function:
    """A function, method or callback: where it is, its parameters and what its body binds, reads and
    returns."""

    name: str | None  # None for an anonymous function (a callback)
    qualname: str  # "ReservationService.create", "createReservation", "<anonymous>"
    start_line: int
    end_line: int
    parent: int | None = None  # lexically enclosing function
    params: list[str] = field(default_factory=list)  # positional parameter names (self/cls left out)
    bindings: dict[str, list[Value]] = field(default_factory=dict)  # local name -> values assigned to it
    returns: list[Value] = field(default_factory=list)
    # compared / switched / dispatched on
    decision_strings: list[tuple[str, int]] = field(default_factory=list)
    names: set[str] = field(default_factory=set)  # identifiers the body reads
    cls: str | None = None  # for a method: the (qualified) name of its class
    param_types: dict[str, tuple[str, ...]] = field(default_factory=dict)  # annotated class of a parameter
    kwargs_param: str | None = None  # Python ``**body``: the keyword arguments no parameter takes
    decorated: bool = False  # a framework may call it (Python decorators, TypeScript decorators)
    exported: bool = False  # exported from its module (another package may call it)
    dead: bool = False  # defined where code never runs (see Call.dead)
    span: Span | None = None
    is_async: bool = False  # Python ``async def``: calling it only makes a coroutine (see Call.dropped)


@dataclass
class Route:
    """An HTTP route declared in this file. ``path`` is as the framework spells it (``/reservations/<rid>``,
    ``/reservations/{rid}``, ``/api/reservations/[id]``) with the prefixes known in this file applied;
    mounts declared in other files are applied by ``languages.routes.mounted_routes``."""

    method: str  # "POST", "GET", ... or "ANY"
    path: str
    line: int
    handlers: list[Value] = field(default_factory=list)  # func values or refs to functions by name
    # the variable it is declared on (`bp` in `@bp.post`); None for file-based routes
    router: str | None = None
    # that router's own prefix, already part of ``path`` (APIRouter(prefix=), url_prefix=)
    own_prefix: str = ""


@dataclass
class ImportRef:
    """Where an imported name may come from, as a path relative to the app root without extension."""

    stem: str  # "routers/reservations", "app/api/webhooks/handlers"
    name: str | None  # the name imported from that module; None for the module itself
    fuzzy: bool = False  # from a path alias (`@/lib/x`): matches any module path that ends with ``stem``


@dataclass
class Mount:
    """A router mounted under a prefix: ``app.include_router(reservations.router, prefix="/api")``."""

    parent: str  # the variable it is mounted on ("app", "api_router")
    child: tuple[str, ...]  # the mounted router, as written: ("reservations", "router")
    prefix: str
    line: int
    # Flask's register_blueprint(url_prefix=...) replaces the blueprint's own prefix
    replaces_prefix: bool = False


@dataclass
class ClassInfo:
    """A class declared in this file: its bases and class-level fields."""

    name: str  # qualified, as ``Function.cls`` spells it
    line: int
    bases: list[tuple[str, ...]] = field(default_factory=list)  # as written: ("BaseService",), ("abc", "ABC")
    fields: dict[str, list[Value]] = field(default_factory=dict)  # class-level attributes / fields -> values
    span: Span | None = None
    # its methods run only when a route or a call names them, though it extends a framework's class (a Rails
    # controller: the router picks the action)
    routed: bool = False


@dataclass
class Module:
    """The outline of one source file: its functions, calls, bindings, imports, routes and classes."""

    path: str  # relative, POSIX
    language: str  # "python", "javascript" (TypeScript too), or a plugin language's name ("ruby")
    # Which official SDK's names and calling convention this language's Seam SDK shares, for the SDK surface
    # check: "python" (snake_case methods, keyword arguments: also Ruby's and PHP's SDKs) or "javascript"
    # (camelCase methods, one parameters object). Empty: the same as ``language``.
    sdk: str = ""
    # how evidence names that SDK ("Ruby SDK (gem seam)"); empty: the official SDK's label
    sdk_label: str = ""
    functions: list[Function] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    bindings: dict[str, list[Value]] = field(default_factory=dict)  # module-level names
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module it comes from
    import_sources: list[str] = field(default_factory=list)  # every module imported
    # local name -> app modules it may be
    import_refs: dict[str, list[ImportRef]] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)
    router_prefixes: dict[str, str] = field(default_factory=dict)  # router variable -> its own prefix
    decision_strings: list[tuple[str, int]] = field(default_factory=list)  # at module level
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    # exported name -> local name ("default" -> "router")
    exports: dict[str, str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)  # identifiers the top-level code reads
    size: int = 0  # bytes of source
    # True when the outline records every call and reference (``Function.names``, ``exported``, ``dead``...),
    # so a function nothing refers to is dead code. A language module that does not (a plugin's) leaves it
    # False: then every function of the file counts as one that may run.
    references_complete: bool = False

    def bind(self, scope: int | None, name: str, value: Value) -> None:
        """``name`` may hold ``value``: at module level (``scope`` None) or in function ``scope``."""
        table = self.bindings if scope is None else self.functions[scope].bindings
        table.setdefault(name, []).append(value)

    def decide(self, scope: int | None, text: str, line: int) -> None:
        """A string a decision compares against, at module level or in function ``scope``."""
        target = self.decision_strings if scope is None else self.functions[scope].decision_strings
        target.append((text, line))

    @property
    def sdk_style(self) -> str:
        return self.sdk or self.language

    def enclosing(self, index: int | None) -> list[int]:
        """``index`` and every function lexically around it, innermost first."""
        out = []
        while index is not None:
            out.append(index)
            index = self.functions[index].parent
        return out

    def lookup(self, scope: int | None, name: str) -> list[Value]:
        """What ``name`` is bound to as seen from ``scope``: the innermost function binding it, else the
        module.
        """
        for index in self.enclosing(scope):
            values = self.functions[index].bindings.get(name)
            if values:
                return values
        return self.bindings.get(name, [])


Parser = Callable[[bytes, str], Module]
