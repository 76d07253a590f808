"""The changed files of one modified app, outlined, with the cross-file questions the checks ask.

- Which calls are Seam SDK calls (and are they real methods of that language's SDK)?
- Which functions does a function reach through the functions it calls (the wrapper rule)?
- What does an argument expression hold (following variables, spreads and small builder functions)?
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from skillassay.graders.rubric.sdk_surface import all_methods, all_namespaces, language_surface, snake
from skillassay.languages import parser_for
from skillassay.languages.base import Call, Function, Module, Value

# How far the wrapper rule follows calls: a function counts as containing an SDK call when the call is in its body
# or in a function it calls, up to this many wrapper functions deep (createReservation -> syncReservation -> pushData
# is 1). Only functions defined in changed or new files are followed; callees are matched by name.
MAX_WRAPPER_DEPTH = 3
# How many variables / builder functions a value is followed through.
MAX_VALUE_DEPTH = 6

_LANG_LABEL = {"python": "Python", "javascript": "JavaScript"}


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

@dataclass(frozen=True)
class FnRef:
    module: str  # module path
    index: int


@dataclass
class SdkCall:
    name: str  # canonical snake_case path, "customers.push_data"
    written: str  # as written in the source, "customers.pushData"
    module: Module
    call: Call
    problems: list[str] = field(default_factory=list)  # SDK surface problems; empty when the method is real

    @property
    def location(self) -> str:
        return f"{self.module.path}:{self.call.line}"

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def method(self) -> str:
        return self.name.rsplit(".", 1)[-1]


Ctx = tuple[Value, Module, "int | None"]


def _parse_file(root: Path, rel: str, source: bytes | None = None) -> Module | None:
    parse = parser_for(rel)
    if parse is None:
        return None
    source = source if source is not None else read_source(root, rel)
    return parse(source, rel) if source is not None else None


class Project:
    def __init__(self, modules: list[Module], root: Path | None = None, unchanged: list[str] | None = None):
        self.modules: dict[str, Module] = {}
        self.by_name: dict[str, list[FnRef]] = {}
        self.sdk_calls: list[SdkCall] = []
        self.unchanged_modules: set[str] = set()  # unchanged files parsed for a function search (see _search_unchanged)
        self._callees: dict[FnRef, list[FnRef]] = {}
        # function -> calls / SDK calls lexically inside it (nested functions included), built once per module
        self._calls_in: dict[FnRef, list[Call]] = {}
        self._sdk_in: dict[FnRef, list[SdkCall]] = {}
        self._calls_by_name: dict[str, list[tuple[Module, Call]]] = {}  # callee's last name -> calls
        self._resolved: dict[tuple[int, str, int | None], list[Ctx]] = {}
        for module in sorted(modules, key=lambda m: m.path):
            self._add(module)
        # Unchanged source files, searched only when an expected function is not in the changed files.
        self._root = root
        self._unchanged = [f for f in unchanged or [] if parser_for(f) is not None]
        self._searched: set[str] = set()

    def _add(self, module: Module, changed: bool = True) -> None:
        """Add an outlined file; SDK calls count only in changed files (an unchanged file is the app's own code)."""
        self.modules[module.path] = module
        if not changed:
            self.unchanged_modules.add(module.path)
        for i, fn in enumerate(module.functions):
            if fn.name:
                self.by_name.setdefault(fn.name, []).append(FnRef(module.path, i))
        for call in module.calls:
            self._calls_by_name.setdefault(call.chain[-1].removesuffix("()"), []).append((module, call))
            found = self._sdk_call(module, call) if changed else None
            if found is not None:
                self.sdk_calls.append(found)
            for index in module.enclosing(call.scope):
                ref = FnRef(module.path, index)
                self._calls_in.setdefault(ref, []).append(call)
                if found is not None:
                    self._sdk_in.setdefault(ref, []).append(found)
        self._callees.clear()
        self._resolved.clear()

    @classmethod
    def load(cls, root: Path, files: list[str], unchanged: list[str] | None = None) -> Project:
        modules = []
        for rel in sorted(files):
            module = _parse_file(root, rel)
            if module is not None:
                modules.append(module)
        return cls(modules, root, unchanged)

    def _search_unchanged(self, name: str) -> None:
        """Parse the unchanged files that mention ``name`` (a byte search first, so a miss stays cheap): an
        unchanged handler may reach a changed wrapper."""
        if self._root is None or name in self._searched:
            return
        self._searched.add(name)
        needle = name.encode()
        for rel in self._unchanged:
            if rel in self.modules:
                continue
            source = read_source(self._root, rel)
            if source is not None and needle in source:
                module = _parse_file(self._root, rel, source)
                if module is not None:
                    self._add(module, changed=False)

    # ------------------------------------------------------------------ functions
    def function(self, ref: FnRef) -> Function:
        return self.modules[ref.module].functions[ref.index]

    def describe(self, ref: FnRef) -> str:
        fn = self.function(ref)
        return f"{fn.qualname} ({ref.module}:{fn.start_line})"

    def find_functions(self, name: str) -> list[FnRef]:
        """Functions called ``name``, or whose qualified name is or ends with ``name`` (``Service.create``)."""
        if not self.by_name.get(name.rsplit(".", 1)[-1]):
            self._search_unchanged(name.rsplit(".", 1)[-1])
        out = list(self.by_name.get(name.rsplit(".", 1)[-1], []))
        if "." in name:
            out = [r for r in out if self.function(r).qualname == name or self.function(r).qualname.endswith("." + name)]
        return out

    def callees(self, ref: FnRef) -> list[FnRef]:
        """Functions (in the changed files, by name) that ``ref`` calls, or passes as a callback."""
        if ref in self._callees:
            return self._callees[ref]
        names: list[str] = []
        for call in self._calls_in.get(ref, []):
            names.append(call.chain[-1].removesuffix("()"))
            for arg in call.args:
                if arg.kind == "ref" and arg.chain:
                    names.append(arg.chain[-1])
        out: list[FnRef] = []
        seen = {ref}
        for name in names:
            for target in self.by_name.get(name, []):
                if target not in seen:
                    seen.add(target)
                    out.append(target)
        self._callees[ref] = out
        return out

    def reach(self, start: FnRef, max_depth: int = MAX_WRAPPER_DEPTH) -> list[tuple[FnRef, list[FnRef]]]:
        """Every function reachable from ``start`` (itself included), with the path, breadth first."""
        out = [(start, [start])]
        seen = {start}
        queue = deque([(start, [start])])
        while queue:
            ref, path = queue.popleft()
            if len(path) > max_depth:
                continue
            for nxt in self.callees(ref):
                if nxt not in seen:
                    seen.add(nxt)
                    out.append((nxt, path + [nxt]))
                    queue.append((nxt, path + [nxt]))
        return out

    def calls_in(self, ref: FnRef) -> list[SdkCall]:
        """SDK calls lexically inside the function (its nested callbacks included)."""
        return list(self._sdk_in.get(ref, []))

    def enclosing_named(self, sdk: SdkCall) -> list[str]:
        fns = sdk.module.functions
        return [fns[i].qualname for i in sdk.module.enclosing(sdk.call.scope) if fns[i].name]

    # ------------------------------------------------------------------ SDK calls
    def _lookup(self, module: Module, scope: int | None, name: str) -> list[Value]:
        for index in module.enclosing(scope):
            values = module.functions[index].bindings.get(name)
            if values:
                return values
        return module.bindings.get(name, [])

    def _expand_alias(self, module: Module, call: Call) -> tuple[str, ...]:
        """``c.pushData()`` after ``const c = seam.customers`` -> ``seam.customers.pushData``."""
        chain = call.chain
        for _ in range(3):
            refs = [v for v in self._lookup(module, call.scope, chain[0]) if v.kind == "ref" and v.chain]
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
        if not knows_seam:
            return None  # e.g. an ORM's ``db.customers.create``: not the Seam SDK
        name = f"{namespace}.{snakes[-1]}"
        if name not in all_methods() and not any("seam" in seg.lower() for seg in receiver):
            return None  # a method neither SDK has, on a receiver that does not say it is Seam
        written = ".".join(chain[start:])
        return SdkCall(name=name, written=written, module=module, call=call, problems=self._surface_problems(
            module, name, chain[start:]))

    @staticmethod
    def _surface_problems(module: Module, name: str, written: tuple[str, ...]) -> list[str]:
        language = module.sdk_style
        surface = language_surface(language)
        label = module.sdk_label or f"{_LANG_LABEL.get(language, language)} SDK ({surface['package']} {surface['version']})"
        entry = surface["methods"].get(name)
        if entry is None:
            return [f"`{'.'.join(written)}` is not a method of the {label}"]
        namespace = name.rsplit(".", 1)[0].split(".")
        spelled = [camel(s) if language == "javascript" else s for s in namespace] + [entry["name"]]
        if list(written) != spelled:
            return [f"the {label} has no `{'.'.join(written)}`; its method is `{'.'.join(spelled)}`"]
        return []

    def surface_params(self, sdk: SdkCall) -> list[str]:
        entry = language_surface(sdk.module.sdk_style)["methods"].get(sdk.name)
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
            bound = self._lookup(module, scope, name)
            if not bound:
                passed = self._arguments_for(module, scope, name, depth)
                return passed if passed else [ctx]
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
        """A parameter's values: the matching argument at every call of the function (by name) in the changed files."""
        for index in module.enclosing(scope):
            fn = module.functions[index]
            if fn.name is None or name not in fn.params:
                continue
            position = fn.params.index(name)
            out: list[Ctx] = []
            for caller, call in self._calls_by_name.get(fn.name, []):
                if name in call.kwargs:
                    arg = call.kwargs[name]
                elif position < len(call.args):
                    arg = call.args[position]
                else:
                    continue
                out.extend(self.resolve((arg, caller, call.scope), depth + 1))
            return out
        return []

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
        """The parameters object of an SDK call: the first argument in JavaScript, the keyword arguments in Python."""
        call = sdk.call
        if sdk.module.sdk_style == "python":
            return Value("object", call.line, keys=dict(call.kwargs), spreads=list(call.kw_spreads)), sdk.module, call.scope
        first = call.args[0] if call.args else Value("other", call.line)
        return first, sdk.module, call.scope
