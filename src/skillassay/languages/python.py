"""Python, read with the standard library's ``ast`` (comments never reach the tree; strings stay strings)."""

from __future__ import annotations

import ast

from skillassay.languages import pyparse
from skillassay.languages.base import Call, Function, Module, Route, Value

_ROUTE_METHODS = {"get", "post", "put", "patch", "delete"}


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
        self.prefixes: dict[str, str] = {}  # blueprint variable -> url_prefix
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
            self.module.imports[alias.asname or alias.name.split(".")[0]] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = "." * node.level + (node.module or "")
        self.module.import_sources.append(source)
        for alias in node.names:
            self.module.imports[alias.asname or alias.name] = source

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
            if isinstance(value_node, ast.Call) and _chain(value_node.func)[-1:] == ("Blueprint",):
                for kw in value_node.keywords:
                    if kw.arg == "url_prefix" and (prefix := _str(kw.value)) is not None:
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
        if chain[-1] == "add_url_rule" and node.args and (path := _str(node.args[0])) is not None:
            handler = next((k.value for k in node.keywords if k.arg == "view_func"), None)
            if handler is None and len(node.args) > 2:
                handler = node.args[2]
            methods = self._methods(node) or ["GET"]
            for method in methods:
                self.module.routes.append(
                    Route(method, self._prefixed(chain, path), node.lineno, [self.value(handler)] if handler else [])
                )

    def _methods(self, call: ast.Call) -> list[str]:
        for kw in call.keywords:
            if kw.arg == "methods" and isinstance(kw.value, (ast.List, ast.Tuple, ast.Set)):
                return sorted({s.upper() for e in kw.value.elts if (s := _str(e))})
        return []

    def _prefixed(self, chain: tuple[str, ...], path: str) -> str:
        prefix = self.prefixes.get(chain[0], "") if len(chain) == 2 else ""
        return prefix + path

    def _route_decorator(self, deco: ast.AST, index: int) -> None:
        if not isinstance(deco, ast.Call) or not deco.args:
            return
        chain = _chain(deco.func)
        path = _str(deco.args[0])
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
            self.module.routes.append(Route(method, self._prefixed(chain, path), deco.lineno, [handler]))


def parse(source: bytes, path: str) -> Module:
    try:
        tree = pyparse.parse(source, filename=path)
        outliner = _Outliner(path)
        outliner.visit(tree)
    except (SyntaxError, ValueError, RecursionError):
        return Module(path=path, language="python")  # a file that does not parse grades as empty
    return outliner.module

