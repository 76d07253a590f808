"""Which function calls which, across the files of one app: the call graph the rubric's reachability checks
walk.

Built once from the outlines (``languages.base.Module``) of every parsed file. A node is a function
(``FnRef``) or a module's top-level code (index ``TOP``). An edge goes from a function to each function it may
run:

- a call by name, resolved lexically (a nested function, then the module's own), then through the file's
  imports (``import_refs``, following the other module's exports), and only then to any function of that name
  in the app;
- a method call, resolved through what the receiver holds: ``this``/``self`` (the enclosing class and its
  bases), an attribute set in the class (``this.client = new SeamGateway()``, ``self.gateway = gateway`` with
  the parameter's type or the arguments its callers pass), a variable or import bound to ``new
  Service()``/``Service()``, a module, an object literal's function; an unknown receiver falls back to the
  app's functions and methods of that name (never for the ubiquitous names of built-in types: ``push``,
  ``get``, ``json``...), a package's object to none;
- a function passed or read by name (``router.post('/x', handler)``, ``asyncHandler(fn)``, ``{create:
  createX}``);
- an anonymous function to the function it is written in (a callback is assumed to run); a *named* nested
  function only when something refers to it;
- a class's instantiation to its constructor.

Code that never runs is no node and no edge: calls marked ``dead`` by the language module (a branch behind a
constant-false condition, statements after ``return``/``raise``) are left out, and so are functions defined
there. A function nothing refers to is not reached from anywhere. See docs/rubric.md ("Reachability").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from skillassay.languages.base import Call, Function, Module, Value
from skillassay.languages.routes import find_module

TOP = -1  # FnRef.index of a module's top-level code

# Method names of built-in types (arrays, maps, strings, promises, responses, dicts, lists): a call of one of
# these on a receiver nothing is known about is never taken for a call of the app's own function of that name.
BUILTIN_METHODS = frozenset(
    {
        "push",
        "pop",
        "shift",
        "unshift",
        "slice",
        "splice",
        "concat",
        "map",
        "flatMap",
        "filter",
        "forEach",
        "reduce",
        "find",
        "findIndex",
        "some",
        "every",
        "includes",
        "indexOf",
        "join",
        "split",
        "sort",
        "reverse",
        "fill",
        "flat",
        "keys",
        "values",
        "entries",
        "get",
        "set",
        "has",
        "add",
        "delete",
        "clear",
        "then",
        "catch",
        "finally",
        "toString",
        "toISOString",
        "trim",
        "replace",
        "replaceAll",
        "startsWith",
        "endsWith",
        "toLowerCase",
        "toUpperCase",
        "json",
        "text",
        "send",
        "status",
        "end",
        "write",
        "on",
        "once",
        "emit",
        "log",
        "error",
        "warn",
        "info",
        "debug",
        "append",
        "extend",
        "insert",
        "remove",
        "items",
        "copy",
        "update",
        "setdefault",
        "format",
        "strip",
        "lower",
        "upper",
        "startswith",
        "endswith",
        "encode",
        "decode",
        "read",
        "close",
        "open",
        "dumps",
        "loads",
        "isoformat",
        "strftime",
        "now",
        "parse",
        "stringify",
        "assign",
        "freeze",
        "from",
        "isArray",
        "resolve",
        "reject",
        "all",
        "race",
        "call",
        "apply",
        "bind",
        "next",
        "use",
        "listen",
        "route",
        "post",
        "put",
        "patch",
        "head",
        "options",
        "getTime",
    }
)
_CONSTRUCTORS = ("constructor", "__init__", "__post_init__", "__construct")
MAX_VALUE_STEPS = 6


# Next.js files the framework runs by their names (their exports are entry points): app/**/page.tsx,
# layout.tsx..., pages/**, middleware.ts
_NEXT_FILES = frozenset(
    {"page", "layout", "template", "default", "loading", "error", "not-found", "middleware"}
)


def _framework_file(module: Module) -> bool:
    if module.language != "javascript":
        return False
    parts = module.path.split("/")
    stem = parts[-1].split(".", 1)[0]
    return "pages" in parts[:-1] or stem in _NEXT_FILES


@dataclass(frozen=True)
class FnRef:
    """A function of the app: its module's path and its index there (``TOP``: the module's top level)."""

    module: str  # module path
    index: int  # index into Module.functions; TOP (-1) for the module's top-level code


@dataclass(frozen=True)
class Edge:
    """One way a function leads to another: a call, a method call, a reference, a callback, a constructor."""

    target: FnRef
    call: Call | None  # the call that makes it (None: a callback inside, a reference by name)
    how: str  # "call", "method", "reference", "callback", "constructor"


@dataclass(frozen=True)
class _Class:
    """A class of the app, by its module and qualified name."""

    module: str
    name: str  # qualified class name, as Function.cls spells it


@dataclass
class Reach:
    """The result of ``CallGraph.reach``: each reached function with the edge (None for a start) and the
    function it was first reached from."""

    edge: dict[FnRef, Edge | None] = field(default_factory=dict)
    parent: dict[FnRef, FnRef] = field(default_factory=dict)

    def __contains__(self, ref: object) -> bool:
        return ref in self.edge

    def __iter__(self):
        return iter(self.edge)

    def path(self, target: FnRef) -> list[FnRef]:
        """The chain of functions from a start to ``target``."""
        out = [target]
        while out[-1] in self.parent and len(out) < 256:
            out.append(self.parent[out[-1]])
        return list(reversed(out))


class CallGraph:
    def __init__(self, modules: Iterable[Module]):
        self.modules: dict[str, Module] = {m.path: m for m in sorted(modules, key=lambda m: m.path)}
        self.by_name: dict[str, list[FnRef]] = {}  # function name -> functions (methods included)
        self._methods: dict[tuple[str, str], dict[str, int]] = {}  # (module, class) -> method name -> index
        self._classes_by_name: dict[str, list[_Class]] = {}
        self._calls_in: dict[FnRef, list[Call]] = {}  # live calls whose innermost scope is the function
        self._children: dict[FnRef, list[int]] = {}  # nested functions (their parent's)
        self._edges: dict[FnRef, list[Edge]] = {}
        self._calls_by_name: dict[str, list[tuple[Module, Call]]] = {}
        self._entry_reach: dict[bool, Reach] = {}
        self._entries: dict[str, set[FnRef]] = {}  # module -> its entry points (no routes)
        self._plain_functions: dict[tuple[str, str], list[int]] = {}  # (module, name) -> function indexes
        for module in self.modules.values():
            self._index(module)

    # ------------------------------------------------------------------ index
    def _index(self, module: Module) -> None:
        path = module.path
        for i, fn in enumerate(module.functions):
            if fn.name:
                self.by_name.setdefault(fn.name, []).append(FnRef(path, i))
            if fn.cls and fn.name:
                self._methods.setdefault((path, fn.cls), {})[fn.name] = i
            elif fn.name:  # a function that is no method, by name (``_named``)
                self._plain_functions.setdefault((path, fn.name), []).append(i)
            self._children.setdefault(FnRef(path, TOP if fn.parent is None else fn.parent), []).append(i)
        for name in module.classes:
            self._classes_by_name.setdefault(name.rsplit(".", 1)[-1], []).append(_Class(path, name))
        for call in module.calls:
            if call.dead:
                continue
            self._calls_in.setdefault(FnRef(path, TOP if call.scope is None else call.scope), []).append(call)
            self._calls_by_name.setdefault(call.chain[-1].removesuffix("()"), []).append((module, call))

    def _top_functions(self, module: Module, name: str) -> list[FnRef]:
        """A module's top-level functions (no methods) called ``name``."""
        return [
            FnRef(module.path, i)
            for i in self._plain_functions.get((module.path, name), [])
            if module.functions[i].parent is None
        ]

    def function(self, ref: FnRef) -> Function | None:
        return None if ref.index == TOP else self.modules[ref.module].functions[ref.index]

    def describe(self, ref: FnRef) -> str:
        fn = self.function(ref)
        if fn is None:
            return f"{ref.module} (top level)"
        return f"{fn.qualname} ({ref.module}:{fn.start_line})"

    def name(self, ref: FnRef) -> str:
        fn = self.function(ref)
        return f"<{ref.module}>" if fn is None else fn.qualname

    def calls_in(self, ref: FnRef) -> list[Call]:
        """The live calls written directly in this function (not in functions nested in it)."""
        return self._calls_in.get(ref, [])

    def scope_of(self, module: Module, call: Call) -> FnRef:
        return FnRef(module.path, TOP if call.scope is None else call.scope)

    def is_coroutine_function(self, ref: FnRef) -> bool:
        fn = self.function(ref)
        return fn is not None and fn.is_async

    def dropped_coroutine_calls(self, ref: FnRef) -> list[tuple[Call, FnRef]]:
        """The calls in this function that make a coroutine nothing awaits (the function never runs)."""
        module = self.modules[ref.module]
        return [
            (call, target)
            for call in self.calls_in(ref)
            if call.dropped
            for target, _how in self.call_targets(module, call)
            if self.is_coroutine_function(target)
        ]

    def is_dead_function(self, ref: FnRef) -> bool:
        fn = self.function(ref)
        return fn is not None and fn.dead

    # ------------------------------------------------------------------ edges
    def edges(self, ref: FnRef) -> list[Edge]:
        found = self._edges.get(ref)
        if found is None:
            found = self._edges[ref] = self._build_edges(ref)
        return found

    def _build_edges(self, ref: FnRef) -> list[Edge]:
        if self.is_dead_function(ref):
            return []
        module = self.modules[ref.module]
        scope = None if ref.index == TOP else ref.index
        out: dict[FnRef, Edge] = {}

        def add(target: FnRef, call: Call | None, how: str) -> None:
            if target != ref and target not in out and not self.is_dead_function(target):
                out[target] = Edge(target, call, how)

        for index in self._children.get(ref, []):  # callbacks written inline are assumed to run
            child = module.functions[index]
            if child.name is None and not child.cls:
                add(FnRef(module.path, index), None, "callback")
        for call in self.calls_in(ref):
            for target, how in self.call_targets(module, call):
                if call.dropped and self.is_coroutine_function(target):
                    continue  # a coroutine nothing awaits never runs
                add(target, call, how)
            for arg in [*call.args, *call.kwargs.values()]:  # a function handed over runs later
                for target in self.value_functions(module, scope, arg):
                    add(target, call, "reference")
        fn = self.function(ref)
        names = fn.names if fn is not None else module.names
        called = {c.chain[0] for c in self.calls_in(ref) if len(c.chain) == 1}
        for name in sorted(names - called):  # read by name: stored in a table, returned, passed on
            for target in self._named(module, scope, name, fallback=False):
                add(target, None, "reference")
        return list(out.values())

    def call_targets(self, module: Module, call: Call) -> list[tuple[FnRef, str]]:
        """The app's functions a call may run, with how it was resolved."""
        chain = call.chain
        scope = call.scope
        if chain[0] == "new":
            chain = chain[1:]
            if not chain:
                return []
            return [(t, "constructor") for t in self._construct(self._classes_at(module, scope, chain))]
        last = chain[-1]
        if last.endswith("()") or last == "[]":
            return []
        if len(chain) == 1:
            classes = self._classes_at(module, scope, chain)
            if classes:
                return [(t, "constructor") for t in self._construct(classes)]
            return [(t, "call") for t in self._named(module, scope, last, fallback=True)]
        return [(t, "method") for t in self._method(module, scope, chain[:-1], last)]

    # ------------------------------------------------------------------ names
    def _named(self, module: Module, scope: int | None, name: str, *, fallback: bool) -> list[FnRef]:
        """Functions a bare name may stand for, from ``scope`` in ``module``."""
        named = self._plain_functions.get((module.path, name), [])
        for index in [*module.enclosing(scope), None]:  # a nested function first, then the module's own
            local = [i for i in named if module.functions[i].parent == index]
            if local:
                return [FnRef(module.path, i) for i in local]
        for value in module.lookup(scope, name):  # const handler = otherFunction
            if value.kind == "func" and value.func is not None:
                return [FnRef(module.path, value.func)]
        imported = self._imported(module, name)
        if imported is not None:
            return imported
        if name in module.imports:  # from a package: not the app's code
            return []
        if not fallback:
            return []
        return [r for r in self.by_name.get(name, []) if not self.modules[r.module].functions[r.index].cls]

    def _imported(self, module: Module, name: str) -> list[FnRef] | None:
        """What an imported name refers to in the app's own modules; None when it is not an import of one."""
        refs = module.import_refs.get(name)
        if not refs:
            return None
        out: list[FnRef] = []
        for ref in refs:
            if ref.name is None:
                continue  # a module, not a function
            target = find_module(self.modules, ref)
            if target is None:
                continue
            local = target.exports.get(ref.name, ref.name)
            found = self._top_functions(target, local)
            if not found:
                for value in target.bindings.get(local, []):
                    if value.kind == "func" and value.func is not None:
                        found.append(FnRef(target.path, value.func))
            out.extend(found)
        return out

    def value_functions(self, module: Module, scope: int | None, value: Value, depth: int = 0) -> list[FnRef]:
        """Functions a value passed as an argument stands for (a function literal, a name, a wrapped
        function).
        """
        if depth > 2:
            return []
        if value.kind == "func" and value.func is not None:
            return [FnRef(module.path, value.func)]
        if value.kind == "ref" and value.chain:
            if len(value.chain) == 1:
                return self._named(module, scope, value.chain[0], fallback=True)
            return self._method(module, scope, value.chain[:-1], value.chain[-1], fallback=False)
        if value.kind == "call":  # asyncHandler(fn), wrap(this.handle.bind(this))
            out: list[FnRef] = []
            for arg in value.args:
                out.extend(self.value_functions(module, scope, arg, depth + 1))
            return out
        return []

    # ------------------------------------------------------------------ classes and receivers
    def _classes_at(self, module: Module, scope: int | None, chain: tuple[str, ...]) -> list[_Class]:
        """The app's classes a name chain names (``Service``, ``services.Service``, an imported class)."""
        if len(chain) == 1:
            name = chain[0]
            if name in module.classes:
                return [_Class(module.path, name)]
            for ref in module.import_refs.get(name, []):
                if ref.name is None:
                    continue
                target = find_module(self.modules, ref)
                local = target.exports.get(ref.name, ref.name) if target is not None else None
                if target is not None and local in target.classes:
                    return [_Class(target.path, local)]
            if name in module.imports or any(v.kind != "ref" for v in module.lookup(scope, name)):
                return []
            return list(self._classes_by_name.get(name, [])) if name[:1].isupper() else []
        head = self._module_of(module, chain[:-1])
        if head is not None and chain[-1] in head.classes:
            return [_Class(head.path, chain[-1])]
        return []

    def _module_of(self, module: Module, chain: tuple[str, ...]) -> Module | None:
        """The app module a name chain names (``import * as svc``, ``from app import services``)."""
        for ref in module.import_refs.get(chain[0], []):
            stem = "/".join([ref.stem, *chain[1:]])
            if ref.name is not None:
                stem = "/".join([ref.stem, ref.name, *chain[1:]])
            target = find_module(self.modules, type(ref)(stem, None, ref.fuzzy))
            if target is not None:
                return target
        return None

    def _construct(self, classes: list[_Class]) -> list[FnRef]:
        out = []
        for cls in classes:
            methods = self._class_methods(cls)
            for name in _CONSTRUCTORS:
                if name in methods:
                    out.append(methods[name])
        return out

    def _class_methods(self, cls: _Class, depth: int = 0) -> dict[str, FnRef]:
        """Methods of a class, its bases' included (the class's own win)."""
        module = self.modules[cls.module]
        own = {n: FnRef(cls.module, i) for n, i in self._methods.get((cls.module, cls.name), {}).items()}
        if depth > 5:
            return own
        info = module.classes.get(cls.name)
        merged: dict[str, FnRef] = {}
        for base in info.bases if info is not None else []:
            for parent in self._classes_at(module, None, base):
                merged.update(self._class_methods(parent, depth + 1))
        merged.update(own)
        return merged

    def _external_bases(self, cls: _Class) -> bool:
        """A subclass of a framework's class, whose methods the framework may call (unless it is routed)."""
        module = self.modules[cls.module]
        info = module.classes.get(cls.name)
        return bool(
            info and not info.routed and any(not self._classes_at(module, None, b) for b in info.bases)
        )

    def _method(
        self, module: Module, scope: int | None, receiver: tuple[str, ...], name: str, fallback: bool = True
    ) -> list[FnRef]:
        kinds = self.receiver(module, scope, receiver)
        out: list[FnRef] = []
        unknown = False
        for kind in kinds:
            if isinstance(kind, _Class):
                target = self._class_methods(kind).get(name)
                if target is not None:
                    out.append(target)
            elif isinstance(kind, Module):
                local = kind.exports.get(name, name)
                out.extend(self._top_functions(kind, local))
                for value in kind.bindings.get(local, []):
                    if value.kind == "func" and value.func is not None:
                        out.append(FnRef(kind.path, value.func))
            elif isinstance(kind, tuple):  # an object literal: (value, module, scope)
                value, where, at = kind
                member = value.keys.get(name)
                if member is not None:
                    out.extend(self.value_functions(where, at, member))
            elif kind == "unknown":
                unknown = True
        if unknown and fallback and not out and name not in BUILTIN_METHODS:
            out = [r for r in self.by_name.get(name, []) if not self.is_dead_function(r)]
        return out

    def receiver(self, module: Module, scope: int | None, chain: tuple[str, ...], depth: int = 0) -> list:
        """What a receiver chain may hold: ``_Class`` (an instance, or the class itself), ``Module``, an
        object literal ``(value, module, scope)``, ``"external"`` (a package's object) or ``"unknown"``."""
        if depth > MAX_VALUE_STEPS or not chain:
            return ["unknown"]
        head = chain[0]
        if head in ("this", "self", "cls"):
            cls = self._enclosing_class(module, scope)
            if cls is None:
                return ["unknown"]
            if len(chain) == 1:
                return [cls]
            found = self._attribute(cls, chain[1], depth)
            return self._walk(found, chain[2:], depth)
        if head == "super":
            cls = self._enclosing_class(module, scope)
            info = self.modules[cls.module].classes.get(cls.name) if cls else None
            bases = [c for b in (info.bases if info else []) for c in self._classes_at(module, None, b)]
            return self._walk(bases or ["unknown"], chain[1:], depth)
        if head.endswith("()"):
            name = head[:-2]
            found = []
            for target in self._named(module, scope, name, fallback=True):  # getService().x: what it returns
                where = self.modules[target.module]
                for ret in where.functions[target.index].returns:
                    found.extend(self._value_kinds(where, target.index, ret, depth + 1))
            classes = self._classes_at(module, scope, (name,))
            found.extend(classes)
            return self._walk(found or ["unknown"], chain[1:], depth)
        bound = module.lookup(scope, head)
        if bound:
            found = []
            for value in bound:
                found.extend(self._value_kinds(module, scope, value, depth + 1))
            return self._walk(found, chain[1:], depth)
        param = self._param(module, scope, head)
        if param is not None:
            return self._walk(param, chain[1:], depth)
        classes = self._classes_at(module, scope, (head,))
        if classes:
            return self._walk(classes, chain[1:], depth)
        target_module = self._module_of(module, (head,))
        if target_module is not None:
            return self._walk([target_module], chain[1:], depth)
        imported = self._imported_binding(module, head, depth)
        if imported is not None:
            return self._walk(imported, chain[1:], depth)
        if head in module.imports:
            return ["external"]
        return ["unknown"]

    def _walk(self, kinds: list, rest: tuple[str, ...], depth: int) -> list:
        """Follow the remaining attribute names of a chain from what its head holds."""
        for name in rest:
            nxt: list = []
            for kind in kinds:
                if isinstance(kind, _Class):
                    nxt.extend(self._attribute(kind, name, depth))
                elif isinstance(kind, Module):
                    target = self._module_of_child(kind, name)
                    if target is not None:
                        nxt.append(target)
                    elif name in kind.classes:
                        nxt.append(_Class(kind.path, name))
                    else:
                        local = kind.exports.get(name, name)
                        for value in kind.bindings.get(local, []):
                            nxt.extend(self._value_kinds(kind, None, value, depth + 1))
                elif isinstance(kind, tuple):
                    value, where, at = kind
                    member = value.keys.get(name)
                    if member is not None:
                        nxt.extend(self._value_kinds(where, at, member, depth + 1))
                elif kind == "external":
                    nxt.append("external")
            kinds = nxt or ["unknown"]
        return kinds or ["unknown"]

    def _module_of_child(self, module: Module, name: str) -> Module | None:
        stem = module.path.rsplit(".", 1)[0]
        for tail in ("/__init__", "/index"):
            stem = stem.removesuffix(tail)
        from skillassay.languages.base import ImportRef

        return find_module(self.modules, ImportRef(f"{stem}/{name}", None))

    def _value_kinds(self, module: Module, scope: int | None, value: Value, depth: int) -> list:
        if depth > MAX_VALUE_STEPS:
            return ["unknown"]
        if value.kind == "object":
            return [(value, module, scope)]
        if value.kind == "ref" and value.chain:
            return self.receiver(module, scope, value.chain, depth + 1)
        if value.kind == "call" and value.chain:
            chain = value.chain[1:] if value.chain[0] == "new" else value.chain
            if not chain:
                return ["unknown"]
            classes = self._classes_at(module, scope, chain) if len(chain) <= 2 else []
            if classes:
                return list(classes)
            if len(chain) == 1:
                found: list = []
                for target in self._named(module, scope, chain[0], fallback=False):
                    where = self.modules[target.module]
                    for ret in where.functions[target.index].returns:
                        found.extend(self._value_kinds(where, target.index, ret, depth + 1))
                if found:
                    return found
                if chain[0] in module.imports and chain[0] not in module.import_refs:
                    return ["external"]
            elif self.receiver(module, scope, chain[:1], depth + 1) == ["external"]:
                return ["external"]
            return ["unknown"]
        return ["unknown"]

    def _param(self, module: Module, scope: int | None, name: str) -> list | None:
        """What a parameter holds: its annotated class, else the arguments its callers pass (by name)."""
        for index in module.enclosing(scope):
            fn = module.functions[index]
            if name not in fn.params:
                continue
            annotated = fn.param_types.get(name)
            if annotated:
                classes = self._classes_at(module, index, annotated)
                if classes:
                    return list(classes)
                if annotated[0] in module.imports and annotated[0] not in module.import_refs:
                    return ["external"]
            return ["unknown"]
        return None

    def _imported_binding(self, module: Module, name: str, depth: int) -> list | None:
        for ref in module.import_refs.get(name, []):
            if ref.name is None:
                continue
            target = find_module(self.modules, ref)
            if target is None:
                continue
            local = target.exports.get(ref.name, ref.name)
            if local in target.classes:
                return [_Class(target.path, local)]
            values = target.bindings.get(local, [])
            if values:
                out: list = []
                for value in values:
                    out.extend(self._value_kinds(target, None, value, depth + 1))
                return out
        return None

    def _enclosing_class(self, module: Module, scope: int | None) -> _Class | None:
        for index in module.enclosing(scope):
            fn = module.functions[index]
            if fn.cls:
                return _Class(module.path, fn.cls)
        return None

    def _attribute(self, cls: _Class, name: str, depth: int) -> list:
        """What ``this.<name>``/``self.<name>`` holds in a class: a method, or what its methods assign to
        it.
        """
        module = self.modules[cls.module]
        found: list = []
        for key in (f"this.{name}", f"self.{name}"):
            for method_ref in self._class_methods(cls).values():
                fn = self.modules[method_ref.module].functions[method_ref.index]
                for value in fn.bindings.get(key, []):
                    found.extend(
                        self._value_kinds(self.modules[method_ref.module], method_ref.index, value, depth + 1)
                    )
        info = module.classes.get(cls.name)
        if info is not None and name in info.fields:  # a class field: `client = new Seam()` / `client: Seam`
            for value in info.fields[name]:
                found.extend(self._value_kinds(module, None, value, depth + 1))
        return found or ["unknown"]

    # ------------------------------------------------------------------ reachability
    def reach(self, starts: Iterable[FnRef]) -> Reach:
        """Every function reachable from ``starts`` (themselves included), breadth first."""
        found = Reach()
        queue: deque[FnRef] = deque()
        for start in starts:
            if start not in found.edge and not self.is_dead_function(start):
                found.edge[start] = None
                queue.append(start)
        while queue:
            ref = queue.popleft()
            for edge in self.edges(ref):
                if edge.target not in found.edge:
                    found.edge[edge.target] = edge
                    found.parent[edge.target] = ref
                    queue.append(edge.target)
        return found

    def entry_reach(self, entries_known: bool) -> Reach:
        """Every function that may run when the app runs: reached from its entry points. With
        ``entries_known`` (the app's routes were parsed), the entry points are the route handlers and the
        top-level code of the modules that declare routes or mount routers; a module's top-level code runs
        once something reached imports it (or one of its functions is reached), and with it its decorated
        functions (a framework registers them), its constructors and dunder methods, and the methods of its
        classes that extend a framework's. An exported or public function is no entry point: one nothing
        reachable calls never runs. Without ``entries_known``, every module is loaded and its exported and
        public functions are entry points too (another package may call them). A file whose language
        module does not record references (a plugin's) has all its functions as entry points. Cached."""
        cached = self._entry_reach.get(entries_known)
        if cached is not None:
            return cached
        found = Reach()
        queue: deque[FnRef] = deque()
        loaded: set[str] = set()

        def start(ref: FnRef) -> None:
            if ref not in found.edge and not self.is_dead_function(ref):
                found.edge[ref] = None
                queue.append(ref)

        def load(module: Module) -> None:
            if module.path in loaded:
                return
            loaded.add(module.path)
            start(FnRef(module.path, TOP))
            for ref in self._module_entries(module, exported=not entries_known):
                start(ref)
            for refs in module.import_refs.values():
                for imported in refs:
                    target = find_module(self.modules, imported)
                    if target is not None:
                        load(target)

        for module in self.modules.values():
            if not entries_known or module.routes or module.mounts or not module.references_complete:
                load(module)
            elif _framework_file(module):  # Next.js renders pages and runs middleware by their file names
                load(module)
                for i, fn in enumerate(module.functions):
                    if fn.exported:
                        start(FnRef(module.path, i))
        while queue:
            ref = queue.popleft()
            load(self.modules[ref.module])
            for edge in self.edges(ref):
                if edge.target not in found.edge:
                    found.edge[edge.target] = edge
                    found.parent[edge.target] = ref
                    queue.append(edge.target)
        self._entry_reach[entries_known] = found
        return found

    def is_entry(self, ref: FnRef, entries_known: bool) -> bool:
        """Whether, without ``entries_known``, a function is an entry point itself (one of ``entry_reach``'s
        starts: every module runs then): a shortcut that spares walking the whole graph. With the entry
        points known, only ``entry_reach`` decides."""
        if entries_known:
            return False
        if ref.index == TOP:
            return True
        entries = self._entries.get(ref.module)
        if entries is None:
            module = self.modules[ref.module]
            entries = self._entries[ref.module] = set(self._module_entries(module, exported=True))
        return ref in entries

    def _module_entries(self, module: Module, *, exported: bool) -> list[FnRef]:
        """The functions of a loaded module that may run with nothing in the app calling them."""
        out: list[FnRef] = []
        for route in module.routes:
            for handler in route.handlers:
                out.extend(self.value_functions(module, None, handler))
                if handler.kind == "ref" and len(handler.chain) == 1:  # an exported route handler by name
                    out.extend(r for r in self.by_name.get(handler.chain[0], []) if r.module == module.path)
        for i, fn in enumerate(module.functions):
            if fn.dead:
                continue
            if (
                not module.references_complete
                or fn.decorated
                or (exported and fn.exported)
                or (fn.cls and fn.name and (fn.name in _CONSTRUCTORS or fn.name.startswith("__")))
                or (fn.cls and fn.name and self._external_bases(_Class(module.path, fn.cls)))
            ):
                out.append(FnRef(module.path, i))
        return out

    def referenced(self, ref: FnRef) -> bool:
        """Whether anything could ever run this function: something calls or names it, it is a method of a
        class something uses (or of a framework's subclass), it is decorated, exported, or a callback
        inside code that runs. A function nothing refers to is dead code."""
        fn = self.function(ref)
        if fn is None:
            return True
        if fn.dead:
            return False
        if fn.decorated or fn.exported or not self.modules[ref.module].references_complete:
            return True
        if fn.name is None:
            return fn.parent is None or self.referenced(FnRef(ref.module, fn.parent))
        if fn.cls and (
            fn.name in _CONSTRUCTORS
            or fn.name.startswith("__")
            or self._external_bases(_Class(ref.module, fn.cls))
        ):
            return True
        return ref in self._referenced_set()

    def _referenced_set(self) -> set[FnRef]:
        cached = getattr(self, "_refs", None)
        if cached is not None:
            return cached
        refs: set[FnRef] = set()
        for module in self.modules.values():
            for i, _fn in enumerate([None, *module.functions]):
                source = FnRef(module.path, i - 1)
                for edge in self.edges(source):
                    if edge.target != source:
                        refs.add(edge.target)
            for route in module.routes:
                for handler in route.handlers:
                    refs.update(self.value_functions(module, None, handler))
        self._refs = refs
        return refs
