"""Python, read with the standard library's ``ast`` (comments never reach the tree; strings stay strings)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from itertools import accumulate

from skillassay.languages import bounds, pyparse
from skillassay.languages.base import Call, ClassInfo, Function, ImportRef, Module, Mount, Route, Span, Value
from skillassay.languages.handover import PYTHON_RUNNERS, add_handed_over

_ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
# Router objects whose own prefix applies to the routes declared on them: Flask's Blueprint(url_prefix=...),
# FastAPI's APIRouter(prefix=...).
_ROUTER_PREFIX_ARG = {"Blueprint": "url_prefix", "APIRouter": "prefix"}
# Decorators that change how a method is called, not who calls it.
_PLAIN_DECORATORS = {
    "staticmethod",
    "classmethod",
    "abstractmethod",
    "wraps",
    "override",
    "cache",
    "lru_cache",
    "cached_property",
}
_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _chain(node: ast.AST, names: Callable[[str], str | None] | None = None) -> tuple[str, ...]:
    """``seam.customers.push_data`` -> ("seam", "customers", "push_data"); () when not a plain chain.
    ``names``: the string a name is bound to, if a constant one, so ``getattr(svc, "create")``,
    ``getattr(svc, OP)`` and ``svc[OP]`` name ``create``."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        inner = _chain(node.value, names)
        return (*inner, node.attr) if inner else ()
    if isinstance(node, ast.Call):
        computed = _getattr_chain(node, names)
        if computed:
            return computed
        inner = _chain(node.func, names)
        return (*inner[:-1], inner[-1] + "()") if inner else ()
    if isinstance(node, ast.Await):
        return _chain(node.value, names)
    if isinstance(node, ast.Subscript):
        inner = _chain(node.value, names)
        key = _constant_str(node.slice, names)
        return inner + ((key,) if key is not None else ("[]",)) if inner else ()
    return ()


def _constant_str(node: ast.AST, names: Callable[[str], str | None] | None) -> str | None:
    """A string literal, or a name bound to one (a module constant, a local bound once)."""
    text = _str(node)
    if text is None and isinstance(node, ast.Name) and names is not None:
        text = names(node.id)
    return text


def _getattr_chain(node: ast.Call, names: Callable[[str], str | None] | None) -> tuple[str, ...]:
    """``getattr(svc.codes, "create")`` -> ("svc", "codes", "create"); () when the name is not constant."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2):
        return ()
    key = _constant_str(node.args[1], names)
    inner = _chain(node.args[0], names)
    return (*inner, key) if inner and key is not None and key.isidentifier() else ()


def _str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _annotation(node: ast.AST | None) -> tuple[str, ...]:
    """The class an annotation names: ``Foo``, ``mod.Foo``, ``"Foo"``, ``Optional[Foo]``, ``Foo | None``."""
    if node is None:
        return ()
    if (text := _str(node)) is not None:
        return tuple(text.split(".")) if text.replace(".", "").isidentifier() else ()
    if isinstance(node, ast.Subscript):
        return _annotation(node.slice)
    if isinstance(node, ast.BinOp):
        return _annotation(node.left) or _annotation(node.right)
    if isinstance(node, ast.Tuple):
        return next((c for c in map(_annotation, node.elts) if c), ())
    chain = _chain(node)
    return () if chain in (("None",), ("Any",)) else chain


def _every_node(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, as ``ast.walk`` gives them but in another order (without its generator per
    node)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _module_constants(tree: ast.Module) -> dict[str, object]:
    """Top-level names bound once to a literal and never assigned anywhere else (``SEAM_ENABLED = False``)."""
    assigned: dict[str, int] = {}
    for node in _every_node(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assigned[node.id] = assigned.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                assigned[name] = assigned.get(name, 0) + 2
    out: dict[str, object] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if isinstance(stmt.value, ast.Constant) and assigned.get(name) == 1:
                out[name] = stmt.value.value
    return out


class _Outliner(ast.NodeVisitor):
    def __init__(self, path: str, source: bytes = b"", constants: dict[str, object] | None = None):
        self.module = Module(path=path, language="python", size=len(source), references_complete=True)
        # the byte offset where each line starts (a loop over the bytes cost ~1 ms per 10 kB)
        self._line_starts = list(accumulate((len(line) + 1 for line in source.split(b"\n")[:-1]), initial=0))
        self.constants = constants or {}
        self.dead = 0  # > 0 while visiting code that never runs
        self.stmts: list[ast.stmt] = []  # statements around the node being visited, innermost last
        self.class_body: list[str | None] = [None]  # the class whose body is being visited directly
        self.scope: int | None = None
        self.classes: list[str] = []
        self.prefixes = self.module.router_prefixes  # blueprint / router variable -> its own prefix
        parts = path.split("/")[:-1]
        self.package = parts  # the folder of this file, for relative imports
        self._lambda_index: dict[int, int] = {}  # id(ast.Lambda) -> function index (set when visited)

    # ------------------------------------------------------------------ positions and dead code
    def span(self, node: ast.AST) -> Span | None:
        try:
            start = self._line_starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]  # no position: caught
            end = self._line_starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]  # as above
        except (AttributeError, IndexError, TypeError):
            return None
        return start, end

    def truth(self, node: ast.AST) -> bool | None:
        """The value a condition always has, or None (most conditions)."""
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.Name) and node.id in self.constants:
            return bool(self.constants[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.truth(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.truth(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return False if False in values else (True if all(v is True for v in values) else None)
            return True if True in values else (False if all(v is False for v in values) else None)
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.left, ast.Constant)
            and isinstance(node.comparators[0], ast.Constant)
        ):
            a, b, op = node.left.value, node.comparators[0].value, node.ops[0]
            if isinstance(op, (ast.Eq, ast.Is)):
                return a == b
            if isinstance(op, (ast.NotEq, ast.IsNot)):
                return a != b
        return None

    def visit_dead(self, nodes) -> None:
        self.dead += 1
        try:
            for node in nodes if isinstance(nodes, list) else [nodes]:
                self.visit(node)
        finally:
            self.dead -= 1

    def visit(self, node: ast.AST):
        if isinstance(node, ast.stmt):
            self.stmts.append(node)
            try:
                return super().visit(node)
            finally:
                self.stmts.pop()
        return super().visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        # as ast.NodeVisitor's, except that a block's statements after return/raise/continue/break never run
        for name in node._fields:  # ast.iter_fields, without a generator per node
            value = getattr(node, name, None)
            if isinstance(value, list):
                ended = False
                for item in value:
                    if not isinstance(item, ast.AST):
                        continue
                    if ended:
                        self.visit_dead(item)
                    else:
                        self.visit(item)
                    ended = ended or isinstance(item, _TERMINATORS)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        truth = self.truth(node.test)
        for block, runs in ((node.body, truth is not False), (node.orelse, truth is not True)):
            holder = ast.Module(body=block, type_ignores=[])
            if runs:
                self.generic_visit(holder)
            else:
                self.visit_dead(block)

    def visit_While(self, node: ast.While) -> None:
        self.visit(node.test)
        if self.truth(node.test) is False:
            self.visit_dead(node.body)
        else:
            self.generic_visit(ast.Module(body=node.body, type_ignores=[]))
        self.generic_visit(ast.Module(body=node.orelse, type_ignores=[]))

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        truth = self.truth(node.test)
        (self.visit if truth is not False else self.visit_dead)(node.body)
        (self.visit if truth is not True else self.visit_dead)(node.orelse)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        stop = not isinstance(node.op, ast.And)  # `False and x`, `True or x`: x never runs
        ended = False
        for value in node.values:
            (self.visit_dead if ended else self.visit)(value)
            ended = ended or self.truth(value) is stop

    # ------------------------------------------------------------------ values
    def value(self, node: ast.AST | None) -> Value:
        out = self._value(node)
        if node is not None and out.span is None:
            out.span = self.span(node)
        return out

    def _template(self, node: ast.AST) -> list[Value] | None:
        """The parts of a string put together: f-strings, ``a + "/b"``, ``"%s/b" % a``,
        ``"{}/b".format(a)``.
        """
        if isinstance(node, ast.JoinedStr):
            parts = []
            for piece in node.values:
                if isinstance(piece, ast.FormattedValue):
                    parts.append(self.value(piece.value))
                elif (text := _str(piece)) is not None:
                    parts.append(Value("str", getattr(piece, "lineno", 0), text=text))
            return parts
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # `base + route`: a concatenation (of strings, when it matters: a URL)
            left, right = self._template(node.left), self._template(node.right)
            return (left if left is not None else [self.value(node.left)]) + (
                right if right is not None else [self.value(node.right)]
            )
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and (fmt := _str(node.left)) is not None
        ):
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            pieces = fmt.split("%s")
            parts = [Value("str", node.lineno, text=pieces[0])]
            for i, chunk in enumerate(pieces[1:]):
                parts.append(self.value(args[i]) if i < len(args) else Value("other"))
                parts.append(Value("str", node.lineno, text=chunk))
            return parts
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and (fmt := _str(node.func.value)) is not None
        ):
            parts = []
            position = 0
            for literal, field_name, _spec, _conv in __import__("string").Formatter().parse(fmt):
                if literal:
                    parts.append(Value("str", node.lineno, text=literal))
                if field_name is None:
                    continue
                if field_name == "" or field_name.isdigit():
                    index = position if field_name == "" else int(field_name)
                    position += 1
                    parts.append(self.value(node.args[index]) if index < len(node.args) else Value("other"))
                else:
                    kw = next((k.value for k in node.keywords if k.arg == field_name), None)
                    parts.append(self.value(kw) if kw is not None else Value("other"))
            return parts
        return None

    def _value(self, node: ast.AST | None) -> Value:
        if node is None:
            return Value("other")
        line = getattr(node, "lineno", 0)
        parts = self._template(node)
        if parts is not None:
            return Value("template", line, items=parts)
        if isinstance(node, ast.Dict):
            out = Value("object", line)
            for key, val in zip(node.keys, node.values, strict=False):
                if key is None:
                    out.spreads.append(self.value(val))
                elif (name := _str(key)) is not None:
                    out.keys[name] = self.value(val)
                    start, end = self.span(key), self.span(val)
                    if start and end:
                        out.key_spans[name] = (start[0], end[1])
            return out
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return Value(
                "array", line, items=[self.value(e) for e in node.elts if not isinstance(e, ast.Starred)]
            )
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return Value("array", line, items=[self.value(node.elt)])
        if isinstance(node, ast.Call):
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "encode"
                and isinstance(node.func.value, ast.Call)
            ):
                return self.value(node.func.value)  # json.dumps(body).encode(): the text is what matters
            computed = _getattr_chain(node, self.constant_str)
            if computed:
                return Value("ref", line, chain=computed)
            chain = _chain(node.func, self.constant_str)
            if chain == ("dict",):
                out = Value("object", line)
                for kw in node.keywords:
                    if kw.arg is None:
                        out.spreads.append(self.value(kw.value))
                    else:
                        out.keys[kw.arg] = self.value(kw.value)
                        if (where := self.span(kw)) is not None:
                            out.key_spans[kw.arg] = where
                for arg in node.args:
                    out.spreads.append(self.value(arg))
                return out
            if chain in (("list",), ("tuple",)) and len(node.args) == 1:
                return self.value(node.args[0])
            # map(to_seam, rs): an array of to_seam's return value
            if chain == ("map",) and len(node.args) == 2:
                fn = self.value(node.args[0])
                if fn.kind == "func" and fn.func is not None:
                    return Value("array", line, items=list(self.module.functions[fn.func].returns))
                if fn.kind == "ref" and fn.chain:
                    return Value("array", line, items=[Value("call", line, chain=fn.chain)])
            args = [self.value(a) for a in node.args] + [self.value(k.value) for k in node.keywords]
            return Value("call", line, chain=chain, args=args)
        if isinstance(node, (ast.Name, ast.Attribute)) or (
            isinstance(node, ast.Subscript) and _constant_str(node.slice, self.constant_str)
        ):
            chain = _chain(node, self.constant_str)
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if isinstance(node, ast.Await):
            return self.value(node.value)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):  # `body or {}`: when it is given
            return self.value(node.values[0])
        if isinstance(node, ast.Lambda):
            return Value("func", line, func=self._lambda_index.get(id(node)))
        if (text := _str(node)) is not None:
            return Value("str", line, text=text)
        return Value("other", line)

    # ------------------------------------------------------------------ scopes
    def constant_str(self, name: str) -> str | None:
        """The string ``name`` is bound to, when it is bound to one string only: in the enclosing functions
        (innermost first), else a module constant."""
        for index in self.module.enclosing(self.scope):
            values = self.module.functions[index].bindings.get(name)
            if values:
                texts = {v.text for v in values if v.kind == "str"}
                return texts.pop() if len(texts) == 1 and len(values) == len(texts) else None
        value = self.constants.get(name)
        return value if isinstance(value, str) else None

    def _bind(self, name: str, value: Value) -> None:
        self.module.bind(self.scope, name, value)

    def _decision(self, text: str, line: int) -> None:
        self.module.decide(self.scope, text, line)

    def _enter(self, name: str | None, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
        qual = ".".join([*self.classes, name]) if name else "<anonymous>"
        fn = Function(
            name=name,
            qualname=qual,
            start_line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            parent=self.scope,
            cls=self.class_body[-1] if name else None,
            dead=self.dead > 0,
            span=self.span(node),
        )
        self.module.functions.append(fn)
        return len(self.module.functions) - 1

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        index = self._enter(node.name, node)
        fn = self.module.functions[index]
        fn.is_async = isinstance(node, ast.AsyncFunctionDef)
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        params = [a.arg for a in args]
        if fn.cls and params and params[0] in ("self", "cls"):
            params = params[1:]
        fn.params = params
        fn.param_types = {a.arg: t for a in args if (t := _annotation(a.annotation))}
        fn.kwargs_param = node.args.kwarg.arg if node.args.kwarg is not None else None
        self._injected(fn, node.args)
        fn.decorated = any(
            _chain(d.func if isinstance(d, ast.Call) else d)[-1:] not in [(p,) for p in _PLAIN_DECORATORS]
            for d in node.decorator_list
        )
        for deco in node.decorator_list:
            self._route_decorator(deco, index)
        outer, self.scope = self.scope, index
        saved, self.classes = self.classes, [*self.classes, node.name]
        self.class_body.append(None)
        self.generic_visit(ast.Module(body=node.body, type_ignores=[]))
        self.class_body.pop()
        self.scope, self.classes = outer, saved

    visit_AsyncFunctionDef = visit_FunctionDef

    @staticmethod
    def _injected(fn: Function, args: ast.arguments) -> None:
        """FastAPI's ``client=Depends(get_client)`` (also ``Security``): the parameter holds what the
        dependency returns, as if bound to ``get_client()``."""
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in pairs:
            if (
                isinstance(default, ast.Call)
                and _chain(default.func)[-1:] in (("Depends",), ("Security",))
                and default.args
                and (dependency := _chain(default.args[0]))
            ):
                fn.bindings.setdefault(arg.arg, []).append(Value("call", default.lineno, chain=dependency))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.class_body.append(None)
        index = self._enter(None, node)
        self.class_body.pop()
        self._lambda_index[id(node)] = index
        outer, self.scope = self.scope, index
        self.module.functions[index].returns.append(self.value(node.body))
        self.visit(node.body)
        self.scope = outer

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for base in node.bases:
            self.visit(base)
        qual = ".".join([*self.classes, node.name])
        info = ClassInfo(
            qual, node.lineno, bases=[c for b in node.bases if (c := _chain(b))], span=self.span(node)
        )
        if self.dead == 0:
            self.module.classes.setdefault(qual, info)
        for stmt in node.body:  # class attributes: `client = Seam()`, `client: Seam`
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        info.fields.setdefault(target.id, []).append(self.value(stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    info.fields.setdefault(stmt.target.id, []).append(self.value(stmt.value))
                elif t := _annotation(stmt.annotation):
                    info.fields.setdefault(stmt.target.id, []).append(Value("call", stmt.lineno, chain=t))
        self.classes.append(node.name)
        self.class_body.append(qual)
        self.generic_visit(ast.Module(body=node.body, type_ignores=[]))
        self.class_body.pop()
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
            base = (
                self.package[: len(self.package) - (node.level - 1)]
                if node.level - 1 <= len(self.package)
                else None
            )
            parts = None if base is None else base + (node.module.split(".") if node.module else [])
            fuzzy = False
        else:
            parts, fuzzy = node.module.split(".") if node.module else None, True
        for alias in node.names:
            local = alias.asname or alias.name
            self.module.imports[local] = source
            if parts is not None and alias.name != "*":
                # `from a import b`: b is the module a/b, or a name defined in a
                refs = [ImportRef("/".join([*parts, alias.name]), None, fuzzy)]
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
            if (
                kind
                and isinstance(value_node, ast.Call)
                and kind[0] in _ROUTER_PREFIX_ARG
                and self.scope is None
            ):
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

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if isinstance(item.optional_vars, ast.Name):  # `with httpx.Client() as client:`
                self._bind(item.optional_vars.id, self.value(item.context_expr))
        self.generic_visit(ast.Module(body=node.body, type_ignores=[]))

    visit_AsyncWith = visit_With

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        if self.scope is not None and node.value is not None:
            self.module.functions[self.scope].returns.append(self.value(node.value))

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and self.dead == 0:
            target = self.module.names if self.scope is None else self.module.functions[self.scope].names
            target.add(node.id)

    # --------------------------------------------------------------- decisions: where event types are handled
    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        for op, right in zip(node.ops, node.comparators, strict=False):
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
            if key is not None and (text := _str(key)) is not None:
                self._decision(text, key.lineno)

    # ------------------------------------------------------------------ calls and routes
    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        chain = _chain(node.func, self.constant_str)
        if not chain:
            return
        call = Call(
            chain=chain,
            line=node.lineno,
            scope=self.scope,
            args=[self.value(a) for a in node.args],
            dead=self.dead > 0,
            span=self.span(node),
            callee_span=self.span(node.func),
        )
        for kw in node.keywords:
            if kw.arg is None:
                call.kw_spreads.append(self.value(kw.value))
            else:
                call.kwargs[kw.arg] = self.value(kw.value)
                if (where := self.span(kw)) is not None:
                    call.kw_spans[kw.arg] = where
        if self.stmts:
            stmt = self.stmts[-1]
            call.stmt = self.span(stmt)
            call.dropped = isinstance(stmt, ast.Expr) and stmt.value is node  # not awaited, not kept
            call.stmt_kind = (
                "expression"
                if isinstance(stmt, ast.Expr)
                else "declaration"
                if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                else "return"
                if isinstance(stmt, ast.Return)
                else "other"
            )
        self.module.calls.append(call)
        if (
            len(chain) == 2
            and chain[1] == "update"
            and (node.keywords or (len(node.args) == 1 and isinstance(node.args[0], ast.Dict)))
        ):
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
            handler = next(
                (k.value for k in node.keywords if k.arg == ("view_func" if flask else "endpoint")), None
            )
            if handler is None and len(node.args) > (2 if flask else 1):
                handler = node.args[2 if flask else 1]
            methods = self._methods(node) or ["GET"]
            for method in methods:
                self._add_route(chain, method, path, node.lineno, [self.value(handler)] if handler else [])
        if chain[-1] in ("include_router", "register_blueprint") and len(chain) == 2 and node.args:
            child = _chain(node.args[0])
            prefix_kw = "prefix" if chain[-1] == "include_router" else "url_prefix"
            given = next((k.value for k in node.keywords if k.arg == prefix_kw), None)
            prefix = _str(given) if given is not None else ""
            if child and prefix is not None:
                self.module.mounts.append(
                    Mount(
                        parent=chain[0],
                        child=child,
                        prefix=prefix.rstrip("/"),
                        line=node.lineno,
                        replaces_prefix=chain[-1] == "register_blueprint" and given is not None,
                    )
                )

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

    def _add_route(
        self, chain: tuple[str, ...], method: str, path: str, line: int, handlers: list[Value]
    ) -> None:
        router = chain[0] if len(chain) == 2 else None
        prefix = self.prefixes.get(router, "") if router else ""
        self.module.routes.append(
            Route(method, prefix + path, line, handlers, router=router, own_prefix=prefix)
        )

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


def _mark_public(module: Module) -> None:
    """A module's public names may be imported and called from anywhere (another script, a framework, a test):
    top-level functions and the methods of top-level classes whose names do not start with ``_``."""
    public_classes = {name for name in module.classes if "." not in name and not name.startswith("_")}
    for fn in module.functions:
        if fn.name is None or fn.name.startswith("_") or fn.dead:
            continue
        if fn.parent is None and (fn.cls is None or fn.cls in public_classes):
            fn.exported = True


def parse(source: bytes, path: str) -> Module:
    """The file's outline; empty for a file that does not parse. Raises ``bounds.Unparsable`` for one beyond
    the parsers' bounds (too large, too deep for the parser or the outline's walk, out of memory)."""
    try:
        tree = pyparse.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return Module(path=path, language="python")  # a file that does not parse grades as empty
    with bounds.parsing(path):
        outliner = _Outliner(path, source, _module_constants(tree))
        outliner.visit(tree)
        add_handed_over(outliner.module, PYTHON_RUNNERS, python=True)
        _mark_public(outliner.module)
    return outliner.module
