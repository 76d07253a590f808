"""Python, read with the standard library's ``ast`` (comments never reach the tree; strings stay strings)."""

from __future__ import annotations

import ast

from skillassay.languages import pyparse
from skillassay.languages.base import Call, Function, ImportRef, Module, Mount, Route, Value

_ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
# Router objects whose own prefix applies to the routes declared on them: Flask's Blueprint(url_prefix=...),
# FastAPI's APIRouter(prefix=...).
_ROUTER_PREFIX_ARG = {"Blueprint": "url_prefix", "APIRouter": "prefix"}


def _chain(node: ast.AST) -> tuple[str, ...]:
    """``seam.customers.push_data`` -> ("seam", "customers", "push_data"); () when not a plain chain."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        inner = _chain(node.value)
        return inner + (node.attr,) if inner else ()
    if isinstance(node, ast.Call):
        inner = _chain(node.func)
        return inner[:-1] + (inner[-1] + "()",) if inner else ()
    if isinstance(node, ast.Await):
        return _chain(node.value)
    if isinstance(node, ast.Subscript):
        inner = _chain(node.value)
        return inner + ("[]",) if inner else ()
    return ()


def _str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class _Outliner(ast.NodeVisitor):
    def __init__(self, path: str):
        self.module = Module(path=path, language="python")
        self.scope: int | None = None
        self.classes: list[str] = []
        self.prefixes = self.module.router_prefixes  # blueprint / router variable -> its own prefix
        parts = path.split("/")[:-1]
        self.package = parts  # the folder of this file, for relative imports
        self._lambda_index: dict[int, int] = {}  # id(ast.Lambda) -> function index (set when visited)

    # ------------------------------------------------------------------ values
    def value(self, node: ast.AST | None) -> Value:
        if node is None:
            return Value("other")
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Dict):
            out = Value("object", line)
            for key, val in zip(node.keys, node.values):
                if key is None:
                    out.spreads.append(self.value(val))
                elif (name := _str(key)) is not None:
                    out.keys[name] = self.value(val)
            return out
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return Value("array", line, items=[self.value(e) for e in node.elts if not isinstance(e, ast.Starred)])
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return Value("array", line, items=[self.value(node.elt)])
        if isinstance(node, ast.Call):
            chain = _chain(node.func)
            if chain == ("dict",):
                out = Value("object", line)
                for kw in node.keywords:
                    if kw.arg is None:
                        out.spreads.append(self.value(kw.value))
                    else:
                        out.keys[kw.arg] = self.value(kw.value)
                for arg in node.args:
                    out.spreads.append(self.value(arg))
                return out
            if chain in (("list",), ("tuple",)) and len(node.args) == 1:
                return self.value(node.args[0])
            if chain == ("map",) and len(node.args) == 2:  # map(to_seam, rs): an array of to_seam's return value
                fn = self.value(node.args[0])
                if fn.kind == "func" and fn.func is not None:
                    return Value("array", line, items=list(self.module.functions[fn.func].returns))
                if fn.kind == "ref" and fn.chain:
                    return Value("array", line, items=[Value("call", line, chain=fn.chain)])
            args = [self.value(a) for a in node.args] + [self.value(k.value) for k in node.keywords]
            return Value("call", line, chain=chain, args=args)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return Value("ref", line, chain=_chain(node))
        if isinstance(node, ast.Await):
            return self.value(node.value)
        if isinstance(node, ast.Lambda):
            return Value("func", line, func=self._lambda_index.get(id(node)))
        if (text := _str(node)) is not None:
            return Value("str", line, text=text)
        return Value("other", line)

    # ------------------------------------------------------------------ scopes
    def _bind(self, name: str, value: Value) -> None:
        table = self.module.bindings if self.scope is None else self.module.functions[self.scope].bindings
        table.setdefault(name, []).append(value)

    def _decision(self, text: str, line: int) -> None:
        target = self.module.decision_strings if self.scope is None else self.module.functions[self.scope].decision_strings
        target.append((text, line))

    def _enter(self, name: str | None, node: ast.AST) -> int:
        qual = ".".join(self.classes + [name]) if name else "<anonymous>"
        fn = Function(name=name, qualname=qual, start_line=node.lineno, end_line=node.end_lineno or node.lineno,
                      parent=self.scope)
        self.module.functions.append(fn)
        return len(self.module.functions) - 1

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        index = self._enter(node.name, node)
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        params = [a.arg for a in args]
        if self.classes and params and params[0] in ("self", "cls") and self.scope is None:
            params = params[1:]
        self.module.functions[index].params = params
        for deco in node.decorator_list:
            self._route_decorator(deco, index)
        outer, self.scope = self.scope, index
        saved, self.classes = self.classes, self.classes + [node.name]
        for stmt in node.body:
            self.visit(stmt)
        self.scope, self.classes = outer, saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        index = self._enter(None, node)
        self._lambda_index[id(node)] = index
        outer, self.scope = self.scope, index
        self.module.functions[index].returns.append(self.value(node.body))
        self.visit(node.body)
        self.scope = outer

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.classes.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.classes.pop()

    # ------------------------------------------------------------------ statements
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.module.import_sources.append(alias.name)
            local = alias.asname or alias.name.split(".")[0]
            self.module.imports[local] = alias.name
            # `import a.b` binds `a`; `import a.b as x` binds the module a.b
            stem = alias.name.replace(".", "/") if alias.asname else alias.name.split(".")[0]
            self.module.import_refs[local] = [ImportRef(stem, None, fuzzy=True)]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = "." * node.level + (node.module or "")
        self.module.import_sources.append(source)
        if node.level:  # relative to this file's package; absolute imports may start at a source root (src/)
            base = self.package[: len(self.package) - (node.level - 1)] if node.level - 1 <= len(self.package) else None
            parts = None if base is None else base + (node.module.split(".") if node.module else [])
            fuzzy = False
        else:
            parts, fuzzy = node.module.split(".") if node.module else None, True
        for alias in node.names:
            local = alias.asname or alias.name
            self.module.imports[local] = source
            if parts is not None and alias.name != "*":
                # `from a import b`: b is the module a/b, or a name defined in a
                refs = [ImportRef("/".join(parts + [alias.name]), None, fuzzy)]
                if parts:
                    refs.append(ImportRef("/".join(parts), alias.name, fuzzy))
                self.module.import_refs[local] = refs

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        for target in node.targets:
            self._assign(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        if node.value is not None:
            self._assign(node.target, node.value)

    def _assign(self, target: ast.AST, value_node: ast.AST) -> None:
        value = self.value(value_node)
        if isinstance(target, ast.Name):
            self._bind(target.id, value)
            kind = _chain(value_node.func)[-1:] if isinstance(value_node, ast.Call) else ()
            if kind and kind[0] in _ROUTER_PREFIX_ARG and self.scope is None:
                for kw in value_node.keywords:
                    if kw.arg == _ROUTER_PREFIX_ARG[kind[0]] and (prefix := _str(kw.value)) is not None:
                        self.prefixes[target.id] = prefix.rstrip("/")
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = _str(target.slice)
            if key is not None:  # payload["reservations"] = [...] adds a key to payload
                self._bind(target.value.id, Value("object", target.lineno, keys={key: value}))
        elif isinstance(target, ast.Attribute):
            chain = _chain(target)
            if chain:
                self._bind(".".join(chain), value)

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        if self.scope is not None and node.value is not None:
            self.module.functions[self.scope].returns.append(self.value(node.value))

    def visit_Name(self, node: ast.Name) -> None:
        if self.scope is not None and isinstance(node.ctx, ast.Load):
            self.module.functions[self.scope].names.add(node.id)

    # ------------------------------------------------------------------ decisions: where event types are handled
    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
                for elt in right.elts:
                    if (text := _str(elt)) is not None:
                        self._decision(text, elt.lineno)
        for operand in operands:
            if (text := _str(operand)) is not None:
                self._decision(text, operand.lineno)

    def visit_MatchValue(self, node: ast.MatchValue) -> None:
        if (text := _str(node.value)) is not None:
            self._decision(text, node.lineno)

    def visit_Dict(self, node: ast.Dict) -> None:
        self.generic_visit(node)
        for key in node.keys:
            if (text := _str(key)) is not None:
                self._decision(text, key.lineno)

    # ------------------------------------------------------------------ calls and routes
    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        chain = _chain(node.func)
        if not chain:
            return
        call = Call(chain=chain, line=node.lineno, scope=self.scope, args=[self.value(a) for a in node.args])
        for kw in node.keywords:
            if kw.arg is None:
                call.kw_spreads.append(self.value(kw.value))
            else:
                call.kwargs[kw.arg] = self.value(kw.value)
        self.module.calls.append(call)
        if len(chain) == 2 and chain[1] == "update" and (node.keywords or (len(node.args) == 1 and isinstance(node.args[0], ast.Dict))):
            # payload.update({...}) / payload.update(k=v) adds keys to payload
            added = self.value(node.args[0]) if node.args else Value("object", node.lineno)
            for kw in node.keywords:
                if kw.arg is not None:
                    added.keys[kw.arg] = self.value(kw.value)
            self._bind(chain[0], added)
        if chain[-1] in ("startswith", "endswith"):
            for arg in node.args:
                if (text := _str(arg)) is not None:
                    self._decision(text, arg.lineno)
        if chain[-1] in ("add_url_rule", "add_api_route") and (path := self._path_arg(node)) is not None:
            # Flask: add_url_rule(rule, endpoint, view_func); FastAPI: add_api_route(path, endpoint)
            flask = chain[-1] == "add_url_rule"
            handler = next((k.value for k in node.keywords if k.arg == ("view_func" if flask else "endpoint")), None)
            if handler is None and len(node.args) > (2 if flask else 1):
                handler = node.args[2 if flask else 1]
            methods = self._methods(node) or ["GET"]
            for method in methods:
                self._add_route(chain, method, path, node.lineno, [self.value(handler)] if handler else [])
        if chain[-1] in ("include_router", "register_blueprint") and len(chain) == 2 and node.args:
            child = _chain(node.args[0])
            arg = "prefix" if chain[-1] == "include_router" else "url_prefix"
            given = next((k.value for k in node.keywords if k.arg == arg), None)
            prefix = _str(given) if given is not None else ""
            if child and prefix is not None:
                self.module.mounts.append(Mount(
                    parent=chain[0], child=child, prefix=prefix.rstrip("/"), line=node.lineno,
                    replaces_prefix=chain[-1] == "register_blueprint" and given is not None,
                ))

    def _methods(self, call: ast.Call) -> list[str]:
        for kw in call.keywords:
            if kw.arg == "methods" and isinstance(kw.value, (ast.List, ast.Tuple, ast.Set)):
                return sorted({s.upper() for e in kw.value.elts if (s := _str(e))})
        return []

    @staticmethod
    def _path_arg(call: ast.Call) -> str | None:
        """The route path: the first positional argument, or ``path=`` / ``rule=``."""
        if call.args:
            return _str(call.args[0])
        return next((_str(k.value) for k in call.keywords if k.arg in ("path", "rule")), None)

    def _add_route(self, chain: tuple[str, ...], method: str, path: str, line: int, handlers: list[Value]) -> None:
        router = chain[0] if len(chain) == 2 else None
        prefix = self.prefixes.get(router, "") if router else ""
        self.module.routes.append(Route(method, prefix + path, line, handlers, router=router, own_prefix=prefix))

    def _route_decorator(self, deco: ast.AST, index: int) -> None:
        if not isinstance(deco, ast.Call):
            return
        chain = _chain(deco.func)
        path = self._path_arg(deco)
        if len(chain) < 2 or path is None:
            return
        verb = chain[-1]
        if verb == "route":
            methods = self._methods(deco) or ["GET"]
        elif verb in _ROUTE_METHODS:
            methods = [verb.upper()]
        elif verb == "api_route":
            methods = self._methods(deco) or ["ANY"]
        else:
            return
        handler = Value("func", deco.lineno, func=index)
        for method in methods:
            self._add_route(chain, method, path, deco.lineno, [handler])


def parse(source: bytes, path: str) -> Module:
    try:
        tree = pyparse.parse(source, filename=path)
        outliner = _Outliner(path)
        outliner.visit(tree)
    except (SyntaxError, ValueError, RecursionError):
        return Module(path=path, language="python")  # a file that does not parse grades as empty
    return outliner.module

