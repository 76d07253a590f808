"""TypeScript, TSX and JavaScript, read with the tree-sitter grammars from PyPI.

Comments are separate nodes and strings are ``string`` nodes, so neither can look like a call.
"""

from __future__ import annotations

import functools
import posixpath
import threading
from collections.abc import Callable
from typing import cast

import tree_sitter as ts

from skillassay.languages import bounds, syntax_tree
from skillassay.languages.base import Call, ClassInfo, Function, ImportRef, Module, Mount, Route, Span, Value
from skillassay.languages.handover import JAVASCRIPT_RUNNERS, add_handed_over
from skillassay.languages.nextjs import JS_SOURCE_EXTENSIONS, next_route_path

_FUNCTION_TYPES = {
    "function_declaration",
    "generator_function_declaration",
    "function_expression",
    "function",
    "generator_function",
    "arrow_function",
    "method_definition",
}
_CLASS_TYPES = {"class_declaration", "class", "abstract_class_declaration"}
_WRAPPERS = {
    "await_expression",
    "parenthesized_expression",
    "as_expression",
    "satisfies_expression",
    "non_null_expression",
    "type_assertion",
}
_ROUTE_VERBS = {
    "get": "GET",
    "post": "POST",
    "put": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "all": "ANY",
}
_COMPARISONS = {"===", "==", "!==", "!="}
# Next.js route handlers: a route.ts exports one function per HTTP method it answers
_NEXT_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
_TERMINATORS = {"return_statement", "throw_statement", "break_statement", "continue_statement"}
_BLOCKS = {"statement_block", "program", "switch_case", "switch_default"}
_FALSY = {"false", "null", "undefined"}
_DECLARATIONS = {"lexical_declaration", "variable_declaration"}


def _span(node: ts.Node) -> Span:
    return node.start_byte, node.end_byte


def _truth(node: ts.Node | None, constants: dict[str, bool] | None = None) -> bool | None:
    """The value a condition always has, or None (most conditions). ``constants``: the module's top-level
    ``const NAME = <literal>`` bindings (a `const` cannot be assigned again)."""
    if node is None:
        return None
    node = _inner(node)
    kind = node.type
    if kind == "identifier" and constants and _text(node) in constants:
        return constants[_text(node)]
    if kind in _FALSY:
        return False
    if kind == "true":
        return True
    if kind == "number":
        try:
            return float(_text(node)) != 0
        except ValueError:
            return None
    if kind in ("string", "template_string") and _string(node) is not None:
        return bool(_string(node))
    if kind == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        if op is not None and _text(op) == "!":
            inner = _truth(arg, constants)
            return None if inner is None else not inner
        if op is not None and _text(op) == "void":
            return False
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        left = _truth(node.child_by_field_name("left"), constants)
        right = _truth(node.child_by_field_name("right"), constants)
        if op is not None and _text(op) == "&&":
            return False if False in (left, right) else (True if left is True and right is True else None)
        if op is not None and _text(op) == "||":
            return True if True in (left, right) else (False if left is False and right is False else None)
    return None


def _type_chain(node: ts.Node | None) -> tuple[str, ...]:
    """The class a type annotation names: ``Foo``, ``ns.Foo``, ``Foo<Bar>``, ``Foo | null``."""
    if node is None:
        return ()
    kind = node.type
    if kind == "type_annotation":
        return next((c for c in map(_type_chain, node.named_children) if c), ())
    if kind == "type_identifier":
        return (_text(node),)
    if kind == "nested_type_identifier":
        return tuple(_text(node).split("."))
    if kind == "generic_type":
        return _type_chain(
            node.child_by_field_name("name") or (node.named_children[0] if node.named_children else None)
        )
    if kind == "union_type":
        return next((c for c in map(_type_chain, node.named_children) if c), ())
    return ()


@functools.cache
def _language(grammar: str) -> ts.Language:
    if grammar == "javascript":
        return syntax_tree.grammar("tree_sitter_javascript", "language")
    return syntax_tree.grammar(
        "tree_sitter_typescript", "language_tsx" if grammar == "tsx" else "language_typescript"
    )


# a tree-sitter parser is not safe to share between threads (runs grade in parallel)
_PARSERS = threading.local()


def _parser(grammar: str) -> ts.Parser:
    cache = _PARSERS.__dict__.setdefault("by_grammar", {})
    if grammar not in cache:
        cache[grammar] = ts.Parser(_language(grammar))
    return cache[grammar]


def _text(node: ts.Node) -> str:
    return cast(bytes, node.text).decode("utf-8", "replace")  # parsed from bytes: always kept


def _field(node: ts.Node, name: str) -> ts.Node:
    """A field the grammar always gives ``node`` (a call's function, an assignment's left side)."""
    child = node.child_by_field_name(name)
    if child is None:
        raise AttributeError(f"{node.type} has no {name}")
    return child


def _inner(node: ts.Node) -> ts.Node:
    while node.type in _WRAPPERS:
        inner = next((c for c in node.named_children if not c.type.startswith("type")), None)
        if inner is None:
            break
        node = inner
    return node


def _string(node: ts.Node | None) -> str | None:
    """The text of a string literal (or a template literal without substitutions)."""
    if node is None:
        return None
    if node.type == "string":
        return "".join(
            _text(c) for c in node.named_children if c.type in ("string_fragment", "escape_sequence")
        )
    if node.type == "template_string" and not any(
        c.type == "template_substitution" for c in node.named_children
    ):
        return _text(node)[1:-1]
    return None


def import_ref(importer: str, specifier: str, name: str | None) -> ImportRef | None:
    """Where ``specifier`` imported from the file ``importer`` lives in the app: relative paths resolved, the
    usual path aliases (``@/lib/x``, ``~/lib/x``: tsconfig ``paths``, not read) matched by suffix; packages
    are None."""
    if specifier.startswith("."):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
        if joined.startswith(".."):
            return None
        stem, fuzzy = joined, False
    elif specifier.startswith(("@/", "~/")):
        stem, fuzzy = specifier[2:], True
    else:
        return None
    for ext in JS_SOURCE_EXTENSIONS:  # ESM imports name the compiled file: './seam.js' is seam.ts
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return ImportRef(stem.removesuffix("/index"), name, fuzzy)


def _chain(node: ts.Node, names: Callable[[ts.Node], str | None] | None = None) -> tuple[str, ...]:
    """``this.seam.customers.pushData`` -> ("this", "seam", "customers", "pushData"); () when not a plain
    chain. ``names``: the string an index expression is bound to, when constant (``svc[OP]``,
    ``svc[OPS.push]``)."""
    node = _inner(node)
    kind = node.type
    if kind in (
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
    ):
        return (_text(node),)
    if kind in ("this", "super"):
        return (kind,)
    if kind == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        inner = _chain(obj, names) if obj is not None else ()
        return (*inner, _text(prop)) if inner and prop is not None else ()
    if kind == "subscript_expression":
        obj = node.child_by_field_name("object")
        inner = _chain(obj, names) if obj is not None else ()
        index = node.child_by_field_name("index")
        key = _string(index)
        if key is None and index is not None and names is not None:
            key = names(index)
        return inner + ((key,) if key is not None else ("[]",)) if inner else ()
    if kind == "call_expression":
        fn = node.child_by_field_name("function")
        inner = _chain(fn, names) if fn is not None else ()
        return (*inner[:-1], inner[-1] + "()") if inner else ()
    if kind == "new_expression":  # new Seam().customers: what the constructor makes
        ctor = node.child_by_field_name("constructor")
        inner = _chain(ctor) if ctor is not None else ()
        return (*inner[:-1], inner[-1] + "()") if len(inner) == 1 else ()
    return ()


class _Outliner:
    def __init__(self, path: str, size: int = 0):
        self.module = Module(path=path, language="javascript", size=size, references_complete=True)
        self.scope: int | None = None
        self.classes: list[str] = []
        self.func_index: dict[int, int] = {}  # node id -> function index
        self.dead = 0  # > 0 while visiting code that never runs
        self.class_stack: list[str] = []  # qualified names of the classes being visited
        self.private: set[str] = set()  # methods declared `private`
        self.constants: dict[str, bool] = {}  # top-level `const NAME = <literal>`: its truth

    # ------------------------------------------------------------------ helpers
    def constant_str(self, node: ts.Node) -> str | None:
        """The string an index expression stands for when it is a name (or a constant object's key) bound to
        one string only: ``OP`` after ``const OP = 'create'``, ``OPS.push`` after ``const OPS = {push:
        'pushData'}``."""
        node = _inner(node)
        chain = _chain(node) if node.type in ("identifier", "member_expression") else ()
        if not chain or chain[0] in ("this", "super"):
            return None
        values = self.module.lookup(self.scope, chain[0])
        for key in chain[1:]:
            values = [v.keys[key] for v in values if v.kind == "object" and key in v.keys]
        texts = {v.text for v in values if v.kind == "str"}
        return texts.pop() if len(texts) == 1 and len(values) == 1 else None

    def _bind(self, name: str, value: Value) -> None:
        self.module.bind(self.scope, name, value)

    def _decision(self, node: ts.Node | None) -> None:
        text = _string(node)
        if text is None or node is None:
            return
        self.module.decide(self.scope, text, node.start_point[0] + 1)

    def value(self, node: ts.Node | None) -> Value:
        out = self._value(node)
        if node is not None and out.span is None:
            out.span = _span(node)
        return out

    def _template(self, node: ts.Node) -> list[Value] | None:
        """The parts of a string put together: `${base}/x` and base + '/x'."""
        if node.type == "template_string":
            parts = []
            for child in node.named_children:
                if child.type == "template_substitution":
                    parts.append(self.value(child.named_children[0] if child.named_children else None))
                elif child.type in ("string_fragment", "escape_sequence"):
                    parts.append(Value("str", child.start_point[0] + 1, text=_text(child)))
            return parts
        if node.type == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is None or _text(op) != "+":
                return None
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                return None
            lp = self._template(_inner(left))
            rp = self._template(_inner(right))
            return (lp if lp is not None else [self.value(left)]) + (
                rp if rp is not None else [self.value(right)]
            )
        return None

    def _value(self, node: ts.Node | None) -> Value:
        if node is None:
            return Value("other")
        node = _inner(node)
        line = node.start_point[0] + 1
        kind = node.type
        if (kind == "template_string" and _string(node) is None) or kind == "binary_expression":
            parts = self._template(node)
            if parts is not None:
                return Value("template", line, items=parts)
            op = node.child_by_field_name("operator")
            if op is not None and _text(op) in ("??", "||"):  # `body ?? {}`: what it holds when it is given
                return self.value(node.child_by_field_name("left"))
        if kind == "object":
            out = Value("object", line)
            for child in node.named_children:
                if child.type == "pair":
                    key = child.child_by_field_name("key")
                    name = (
                        _string(key)
                        if key is not None and key.type == "string"
                        else (
                            _text(key)
                            if key is not None and key.type in ("property_identifier", "number")
                            else None
                        )
                    )
                    if name is not None:
                        out.keys[name] = self.value(child.child_by_field_name("value"))
                        out.key_spans[name] = _span(child)
                elif child.type == "shorthand_property_identifier":
                    out.keys[_text(child)] = Value("ref", line, chain=(_text(child),), span=_span(child))
                    out.key_spans[_text(child)] = _span(child)
                elif child.type == "spread_element":
                    out.spreads.append(self.value(child.named_children[0] if child.named_children else None))
                elif child.type == "method_definition":
                    name_node = child.child_by_field_name("name")
                    if name_node is not None:
                        out.keys[_text(name_node)] = Value("func", line, func=self.func_index.get(child.id))
            return out
        if kind == "array":
            return Value(
                "array",
                line,
                items=[self.value(c) for c in node.named_children if c.type != "spread_element"],
            )
        if kind in ("identifier", "this", "member_expression", "subscript_expression"):
            chain = _chain(node, self.constant_str)
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if kind == "call_expression":
            chain = _chain(_field(node, "function"), self.constant_str)
            args_node = node.child_by_field_name("arguments")
            args = [self.value(a) for a in args_node.named_children] if args_node is not None else []
            if chain and chain[-1] in ("map", "flatMap") and args:
                if args[0].kind == "func" and args[0].func is not None:  # rs.map(r => ({...}))
                    return Value("array", line, items=list(self.module.functions[args[0].func].returns))
                if args[0].kind == "ref" and args[0].chain:  # rs.map(toSeamReservation): its return value
                    return Value("array", line, items=[Value("call", line, chain=args[0].chain)])
            if chain == ("Object", "assign") and args:  # Object.assign({}, base, {...}): one merged object
                return Value("object", line, spreads=args)
            return Value("call", line, chain=chain, args=args)
        if kind == "new_expression":
            ctor = node.child_by_field_name("constructor")
            args_node = node.child_by_field_name("arguments")
            args = [self.value(a) for a in args_node.named_children] if args_node is not None else []
            return Value("call", line, chain=("new",) + (_chain(ctor) if ctor is not None else ()), args=args)
        if kind in _FUNCTION_TYPES:
            return Value("func", line, func=self.func_index.get(node.id))
        text = _string(node)
        if text is not None:
            return Value("str", line, text=text)
        return Value("other", line)

    def _function_name(self, node: ts.Node) -> str | None:
        name = node.child_by_field_name("name")
        if name is not None:
            return _text(name)
        parent = node.parent
        while parent is not None and parent.type in _WRAPPERS:
            parent = parent.parent
        if parent is None:
            return None
        if parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            return _text(target) if target is not None and target.type == "identifier" else None
        if parent.type in ("pair", "public_field_definition", "field_definition"):
            key = (
                parent.child_by_field_name("key")
                or parent.child_by_field_name("name")
                or parent.child_by_field_name("property")
            )
            if key is not None:
                return _string(key) if key.type == "string" else _text(key)
        if parent.type == "assignment_expression":
            chain = _chain(_field(parent, "left"))
            return chain[-1] if chain else None
        if parent.type == "export_statement":
            return "default"
        if parent.type == "arguments" and parent.parent is not None:
            # const createReservation = asyncHandler(async (req, res) => {...}): the wrapped function takes
            # the name
            call = parent.parent
            holder = call.parent
            while holder is not None and holder.type in _WRAPPERS:
                holder = holder.parent
            if call.type == "call_expression" and holder is not None and holder.type == "variable_declarator":
                target = holder.child_by_field_name("name")
                if target is not None and target.type == "identifier":
                    return _text(target)
        return None

    # ------------------------------------------------------------------ the walk
    def visit(self, node: ts.Node) -> None:
        kind = node.type
        if kind in _FUNCTION_TYPES:
            self._function(node)
            return
        if kind in _CLASS_TYPES:
            self._class(node)
            return
        if kind == "if_statement":
            self._if(node)
            return
        if kind == "ternary_expression":
            condition = node.child_by_field_name("condition")
            if condition is not None:
                self.visit(condition)
            truth = _truth(condition, self.constants)
            for field_name, runs in (("consequence", truth is not False), ("alternative", truth is not True)):
                branch = node.child_by_field_name(field_name)
                if branch is not None:
                    self._visit_maybe_dead(branch, runs)
            return
        if (
            kind == "binary_expression"
            and (op := node.child_by_field_name("operator")) is not None
            and _text(op) in ("&&", "||", "??")
        ):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None:
                self.visit(left)
            stop = {"&&": False, "||": True}.get(_text(op))
            if right is not None:  # `false && f()`, `true || f()`: f never runs
                self._visit_maybe_dead(right, stop is None or _truth(left, self.constants) is not stop)
            return
        if (
            kind == "while_statement"
            and _truth(node.child_by_field_name("condition"), self.constants) is False
        ):
            condition = node.child_by_field_name("condition")
            if condition is not None:
                self.visit(condition)
            body = node.child_by_field_name("body")
            if body is not None:
                self._visit_maybe_dead(body, False)
            return
        if kind == "export_statement":
            self._export(node)
        self._children(node)  # post-order: values below are outlined before they are read
        if kind == "call_expression":
            self._call(node)
        elif kind == "new_expression":
            self._new(node)
        elif kind == "variable_declarator":
            self._declarator(node)
        elif kind == "assignment_expression":
            self._assignment(node)
        elif kind == "return_statement":
            if self.scope is not None and node.named_children:
                self.module.functions[self.scope].returns.append(self.value(node.named_children[0]))
        elif kind == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and _text(op) in _COMPARISONS:
                self._decision(node.child_by_field_name("left"))
                self._decision(node.child_by_field_name("right"))
        elif kind == "switch_case":
            self._decision(node.child_by_field_name("value"))
        elif kind == "pair":
            key = node.child_by_field_name("key")
            if key is not None and key.type == "string":
                self._decision(key)
        elif kind == "identifier":
            if self.dead == 0 and self._read(node):
                target = self.module.names if self.scope is None else self.module.functions[self.scope].names
                target.add(_text(node))
        elif kind == "import_statement":
            self._import(node)

    @staticmethod
    def _read(node: ts.Node) -> bool:
        """Whether an identifier is read (not the name a declaration, parameter or import introduces)."""
        parent = node.parent
        if parent is None:
            return True
        if parent.type in (
            "variable_declarator",
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "function_expression",
            "method_definition",
        ):
            return parent.child_by_field_name("name") != node
        if parent.type in (
            "required_parameter",
            "optional_parameter",
            "formal_parameters",
            "import_specifier",
            "import_clause",
            "namespace_import",
            "shorthand_property_identifier_pattern",
            "rest_pattern",
        ):
            return False
        if parent.type == "arrow_function":
            return parent.child_by_field_name("parameter") != node
        return True

    def _visit_maybe_dead(self, node: ts.Node, runs: bool) -> None:
        if runs:
            self.visit(node)
            return
        self.dead += 1
        try:
            self.visit(node)
        finally:
            self.dead -= 1

    def _if(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition, self.constants)
        consequence, alternative = (
            node.child_by_field_name("consequence"),
            node.child_by_field_name("alternative"),
        )
        if consequence is not None:
            self._visit_maybe_dead(consequence, truth is not False)
        if alternative is not None:
            self._visit_maybe_dead(alternative, truth is not True)

    def _children(self, node: ts.Node) -> None:
        ended = False
        block = node.type in _BLOCKS
        for child in node.named_children:
            if child.type == "comment":
                continue
            self._visit_maybe_dead(child, not ended)
            # a block's statements after return/throw/break/continue never run
            ended = ended or (block and child.type in _TERMINATORS)

    def _class(self, node: ts.Node) -> None:
        name_node = node.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else self._function_name(node) or "<class>"
        qual = ".".join([*self.classes, name])
        info = ClassInfo(qual, node.start_point[0] + 1, span=_span(node))
        for heritage in (c for c in node.named_children if c.type == "class_heritage"):
            for clause in heritage.named_children:
                if clause.type == "extends_clause":
                    value = clause.child_by_field_name("value")
                    chain = _chain(value) if value is not None else ()
                    if chain:
                        info.bases.append(chain)
        body = node.child_by_field_name("body")
        for member in body.named_children if body is not None else []:
            if member.type in ("public_field_definition", "field_definition"):
                key = member.child_by_field_name("name") or member.child_by_field_name("property")
                if key is None:
                    continue
                value = member.child_by_field_name("value")
                if value is not None and value.type not in _FUNCTION_TYPES:
                    info.fields.setdefault(_text(key), []).append(self.value(value))
                elif value is None and (t := _type_chain(member.child_by_field_name("type"))):
                    info.fields.setdefault(_text(key), []).append(
                        Value("call", member.start_point[0] + 1, chain=t)
                    )
        if self.dead == 0 and name != "<class>":
            self.module.classes.setdefault(qual, info)
        self.classes.append(name)
        self.class_stack.append(qual)
        self._children(node)
        self.class_stack.pop()
        self.classes.pop()

    def _method_class(self, node: ts.Node) -> str | None:
        """The class a function is a method of (a method, or an arrow function in a class field)."""
        parent = node.parent
        if node.type == "method_definition" and parent is not None and parent.type == "class_body":
            return self.class_stack[-1] if self.class_stack else None
        if (
            parent is not None
            and parent.type in ("public_field_definition", "field_definition")
            and parent.parent is not None
            and parent.parent.type == "class_body"
        ):
            return self.class_stack[-1] if self.class_stack else None
        return None

    @staticmethod
    def _decorated(node: ts.Node) -> bool:
        if any(c.type == "decorator" for c in node.children):
            return True
        sibling = node.prev_named_sibling
        return sibling is not None and sibling.type == "decorator"

    def _function(self, node: ts.Node) -> None:
        name = self._function_name(node)
        qual = ".".join([*self.classes, name]) if name else "<anonymous>"
        cls = self._method_class(node)
        fn = Function(
            name=name,
            qualname=qual,
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            parent=self.scope,
            cls=cls,
            dead=self.dead > 0,
            span=_span(node),
            decorated=self._decorated(node) if cls else False,
        )
        if (
            not cls
            and node.parent is not None
            and (node.parent.type == "object" or node.parent.type == "pair")
        ):
            fn.exported = True  # a member of an object literal: called through the object, wherever it goes
        holder = node if node.type == "method_definition" else node.parent
        if (
            cls
            and name
            and holder is not None
            and any(
                c.type == "accessibility_modifier" and _text(c) in ("private", "protected")
                for c in holder.children
            )
        ):
            self.private.add(name)
        self.module.functions.append(fn)
        index = len(self.module.functions) - 1
        self.func_index[node.id] = index
        fn.params, fn.param_types, properties = self._params(node)
        outer, self.scope = self.scope, index
        saved = self.classes
        if name:
            self.classes = [*self.classes, name]
        for prop in properties:  # constructor(private readonly seam: SeamService): this.seam = seam
            self._bind(f"this.{prop}", Value("ref", fn.start_line, chain=(prop,)))
        for child in node.named_children:
            if (
                child.type not in ("comment", "formal_parameters", "type_annotation")
                or child.type == "formal_parameters"
            ):
                self.visit(child)
        body = node.child_by_field_name("body")
        if node.type == "arrow_function" and body is not None and body.type != "statement_block":
            fn.returns.append(self.value(body))
        self.scope, self.classes = outer, saved

    @staticmethod
    def _params(node: ts.Node) -> tuple[list[str], dict[str, tuple[str, ...]], list[str]]:
        """Parameter names, their annotated classes, and the constructor's parameter properties."""
        single = node.child_by_field_name("parameter")  # x => ...
        if single is not None:
            return [_text(single)], {}, []
        params = node.child_by_field_name("parameters")
        out: list[str] = []
        types: dict[str, tuple[str, ...]] = {}
        properties: list[str] = []
        for p in params.named_children if params is not None else []:
            target = (
                p.child_by_field_name("pattern")
                if p.type in ("required_parameter", "optional_parameter")
                else p
            )
            if target is not None and target.type == "assignment_pattern":
                target = target.child_by_field_name("left")
            name = _text(target) if target is not None and target.type == "identifier" else ""
            out.append(name)
            if name and (t := _type_chain(p.child_by_field_name("type"))):
                types[name] = t
            if name and any(c.type in ("accessibility_modifier", "readonly") for c in p.children):
                properties.append(name)
        return out, types, properties

    def _export(self, node: ts.Node) -> None:
        """``export ...`` statements: which local names the module exports, and under which names."""
        exports = self.module.exports
        declaration = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if declaration is not None:
            if declaration.type in _FUNCTION_TYPES or declaration.type in _CLASS_TYPES:
                name = declaration.child_by_field_name("name")
                if name is not None:
                    exports["default" if is_default else _text(name)] = _text(name)
            elif declaration.type in _DECLARATIONS:
                for declarator in declaration.named_children:
                    target = (
                        declarator.child_by_field_name("name")
                        if declarator.type == "variable_declarator"
                        else None
                    )
                    if target is not None and target.type == "identifier":
                        exports[_text(target)] = _text(target)
            return
        value = node.child_by_field_name("value")
        if is_default and value is not None and _inner(value).type == "identifier":
            exports["default"] = _text(_inner(value))
            return
        if _string(node.child_by_field_name("source")) is not None:
            return  # a re-export: handled with the routes (import refs)
        for clause in (c for c in node.named_children if c.type == "export_clause"):
            for spec in clause.named_children:
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                if name is not None:
                    exports[_text(alias if alias is not None else name)] = _text(name)

    def _declarator(self, node: ts.Node) -> None:
        target, value_node = node.child_by_field_name("name"), node.child_by_field_name("value")
        if target is None or value_node is None:
            return
        if target.type == "identifier":
            value = self.value(value_node)
            self._bind(_text(target), value)
            inner = _inner(value_node)
            if inner.type == "call_expression" and _chain(_field(inner, "function")) == ("require",):
                args = inner.child_by_field_name("arguments")
                source = _string(args.named_children[0]) if args is not None and args.named_children else None
                if source is not None:
                    self.module.import_sources.append(source)
                    self.module.imports[_text(target)] = source
                    self._import_ref(_text(target), source, None)
        elif target.type == "object_pattern":  # const { customers } = seam
            base = _chain(value_node)
            for child in target.named_children:
                if child.type == "shorthand_property_identifier_pattern":
                    self._bind(
                        _text(child),
                        Value("ref", node.start_point[0] + 1, chain=(*base, _text(child)) if base else ()),
                    )
                elif child.type == "pair_pattern":
                    key, val = child.child_by_field_name("key"), child.child_by_field_name("value")
                    if key is not None and val is not None and val.type == "identifier":
                        self._bind(
                            _text(val),
                            Value("ref", node.start_point[0] + 1, chain=(*base, _text(key)) if base else ()),
                        )

    def _assignment(self, node: ts.Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return
        value = self.value(right)
        if left.type == "identifier":
            self._bind(_text(left), value)
        elif left.type in ("member_expression", "subscript_expression"):
            chain = _chain(left)
            if self.scope is None and chain == ("module", "exports"):  # module.exports = router / = { a, b }
                inner = _inner(right)
                if inner.type == "identifier":
                    self.module.exports["default"] = _text(inner)
                elif value.kind == "object":
                    for key, member in value.keys.items():
                        self.module.exports[key] = (
                            member.chain[-1] if member.kind == "ref" and member.chain else key
                        )
            elif (
                self.scope is None and len(chain) >= 2 and chain[:-1] in (("module", "exports"), ("exports",))
            ):
                inner = _inner(right)
                self.module.exports[chain[-1]] = _text(inner) if inner.type == "identifier" else chain[-1]
            if len(chain) == 2 and chain[0] != "this" and chain[1] != "[]":  # payload.reservations = [...]
                self._bind(chain[0], Value("object", node.start_point[0] + 1, keys={chain[1]: value}))
            if chain:
                self._bind(".".join(chain), value)

    def _import(self, node: ts.Node) -> None:
        source = _string(node.child_by_field_name("source"))
        if source is None:
            return
        self.module.import_sources.append(source)
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "import_specifier":
                name = n.child_by_field_name("name")
                alias = n.child_by_field_name("alias") or name
                if alias is not None:
                    self.module.imports[_text(alias)] = source
                    self._import_ref(_text(alias), source, _text(name) if name is not None else None)
            elif (
                n.type == "identifier"
                and n.parent is not None
                and n.parent.type in ("import_clause", "namespace_import")
            ):
                self.module.imports[_text(n)] = source
                self._import_ref(_text(n), source, "default" if n.parent.type == "import_clause" else None)
            else:
                stack.extend(n.named_children)

    def _import_ref(self, local: str, source: str, name: str | None) -> None:
        ref = import_ref(self.module.path, source, name)
        if ref is not None:
            self.module.import_refs[local] = [ref]

    # ------------------------------------------------------------------ file-based routes (Next.js)
    def file_routes(self, root: ts.Node) -> None:
        kind_path = next_route_path(self.module.path)
        if kind_path is None:
            return
        kind, url = kind_path
        for stmt in root.named_children:
            if stmt.type != "export_statement":
                continue
            line = stmt.start_point[0] + 1
            is_default = any(c.type == "default" for c in stmt.children)
            declaration = stmt.child_by_field_name("declaration")
            if kind == "pages":  # pages/api: the default export answers every method
                target = declaration if declaration is not None else stmt.child_by_field_name("value")
                if is_default and target is not None:
                    self.module.routes.append(Route("ANY", url, line, [self.value(target)]))
                continue
            if is_default:
                continue
            for method, handler in self._exported_handlers(stmt, declaration):
                self.module.routes.append(Route(method, url, line, [handler]))

    def _exported_handlers(self, stmt: ts.Node, declaration: ts.Node | None) -> list[tuple[str, Value]]:
        """(method, handler) for each HTTP-method name an ``export`` statement exports."""
        line = stmt.start_point[0] + 1
        out: list[tuple[str, Value]] = []
        if declaration is not None and declaration.type in _FUNCTION_TYPES:
            name = declaration.child_by_field_name("name")
            if name is not None and _text(name) in _NEXT_METHODS:
                out.append((_text(name), Value("func", line, func=self.func_index.get(declaration.id))))
        elif declaration is not None and declaration.type in ("lexical_declaration", "variable_declaration"):
            for declarator in declaration.named_children:
                if declarator.type != "variable_declarator":
                    continue
                target, value = (
                    declarator.child_by_field_name("name"),
                    declarator.child_by_field_name("value"),
                )
                if target is None or value is None:
                    continue
                if target.type == "identifier" and _text(target) in _NEXT_METHODS:
                    # export const POST = withAuth(async () => ...)
                    out.append((_text(target), self.value(value)))
                elif target.type == "object_pattern":  # export const { GET, POST } = handlers
                    base = _chain(value)
                    for prop in target.named_children:
                        if (
                            prop.type == "shorthand_property_identifier_pattern"
                            and _text(prop) in _NEXT_METHODS
                        ):
                            out.append(
                                (_text(prop), Value("ref", line, chain=(*base, _text(prop)) if base else ()))
                            )
        else:
            clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
            source = _string(stmt.child_by_field_name("source"))
            if source is not None:
                self.module.import_sources.append(source)
            for spec in clause.named_children if clause is not None else []:
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                if name is None:
                    continue
                exported = _text(alias if alias is not None else name)
                if exported not in _NEXT_METHODS:
                    continue
                if source is not None:  # export { handle as POST } from './handlers'
                    self.module.imports.setdefault(_text(name), source)
                    self._import_ref(_text(name), source, _text(name))
                out.append((exported, Value("ref", line, chain=(_text(name),))))
        return out

    def _call(self, node: ts.Node) -> None:
        fn_node = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        if fn_node is None:
            return
        chain = _chain(fn_node, self.constant_str)
        arg_nodes = (
            [a for a in args_node.named_children if a.type != "comment"] if args_node is not None else []
        )
        member = _inner(fn_node) if _inner(fn_node).type == "member_expression" else None
        prop = member.child_by_field_name("property") if member is not None else None
        # the method name even when the receiver is no name chain (an array literal)
        method = chain[-1] if chain else (_text(prop) if prop is not None else "")
        if method in ("startsWith", "endsWith", "includes", "has") and arg_nodes:
            self._decision(arg_nodes[0])
        # ['access_code.set_on_device', ...].includes(type)
        if method in ("includes", "has") and member is not None:
            obj = member.child_by_field_name("object")
            if obj is not None and _inner(obj).type == "array":
                for item in _inner(obj).named_children:
                    self._decision(item)
        if not chain:
            return
        call = Call(
            chain=chain,
            line=node.start_point[0] + 1,
            scope=self.scope,
            args=[self.value(a) for a in arg_nodes],
            dead=self.dead > 0,
            span=_span(node),
            callee_span=_span(fn_node),
        )
        self._statement(call, node)
        self.module.calls.append(call)
        self._route(node, fn_node, chain, arg_nodes)
        if chain[-1] == "use" and len(chain) == 2 and arg_nodes:
            self._mount(node, chain[0], arg_nodes)

    def _new(self, node: ts.Node) -> None:
        """``new Service(...)``: a call of the class's constructor (chain ``("new", "Service")``)."""
        ctor = node.child_by_field_name("constructor")
        chain = _chain(ctor) if ctor is not None else ()
        if not chain or ctor is None:
            return
        args_node = node.child_by_field_name("arguments")
        args = (
            [self.value(a) for a in args_node.named_children if a.type != "comment"]
            if args_node is not None
            else []
        )
        call = Call(
            chain=("new", *chain),
            line=node.start_point[0] + 1,
            scope=self.scope,
            args=args,
            dead=self.dead > 0,
            span=_span(node),
            callee_span=_span(ctor),
        )
        self._statement(call, node)
        self.module.calls.append(call)

    @staticmethod
    def _statement(call: Call, node: ts.Node) -> None:
        """The innermost statement holding the call."""
        parent = node.parent
        while parent is not None and not (
            parent.type.endswith("statement")
            or parent.type in _DECLARATIONS
            or parent.type in ("public_field_definition", "field_definition")
        ):
            if parent.type in _FUNCTION_TYPES:  # an arrow function's expression body: no statement of its own
                return
            parent = parent.parent
        if parent is None:
            return
        call.stmt = _span(parent)
        call.stmt_kind = (
            "expression"
            if parent.type == "expression_statement"
            else "declaration"
            if parent.type in _DECLARATIONS
            else "return"
            if parent.type == "return_statement"
            else "other"
        )

    def _mount(self, node: ts.Node, parent: str, arg_nodes: list[ts.Node]) -> None:
        """Express: ``app.use('/api', router)``, ``router.use(sub)``, ``app.use('/x',
        require('./routes/x'))``.
        """
        prefix = _string(arg_nodes[0])
        rest = arg_nodes[1:] if prefix is not None else arg_nodes
        if prefix is not None and not prefix.startswith("/"):
            return
        for arg in rest:
            inner = _inner(arg)
            child = _chain(inner) if inner.type in ("identifier", "member_expression") else ()
            if inner.type == "call_expression" and _chain(_field(inner, "function")) == ("require",):
                args = inner.child_by_field_name("arguments")
                source = _string(args.named_children[0]) if args is not None and args.named_children else None
                if source is not None:
                    local = f"require({source})"
                    self.module.imports[local] = source
                    self._import_ref(local, source, None)
                    child = (local,)
            if child:
                self.module.mounts.append(
                    Mount(
                        parent=parent,
                        child=child,
                        prefix=(prefix or "").rstrip("/"),
                        line=node.start_point[0] + 1,
                    )
                )

    def _route(
        self, node: ts.Node, fn_node: ts.Node, chain: tuple[str, ...], arg_nodes: list[ts.Node]
    ) -> None:
        verb = _ROUTE_VERBS.get(chain[-1])
        if verb is None or len(chain) < 2:
            return
        fn_node = _inner(fn_node)
        obj = fn_node.child_by_field_name("object") if fn_node.type == "member_expression" else None
        obj = _inner(obj) if obj is not None else None
        path, handlers = None, arg_nodes
        if (
            obj is not None
            and obj.type == "call_expression"
            and _chain(_field(obj, "function"))[-1:] == ("route",)
        ):
            inner_args = obj.child_by_field_name("arguments")
            if inner_args is not None and inner_args.named_children:
                path = _string(inner_args.named_children[0])
        elif arg_nodes:
            path, handlers = _string(arg_nodes[0]), arg_nodes[1:]
        if path is None or not path.startswith("/") or not handlers:
            return
        self.module.routes.append(
            Route(verb, path, node.start_point[0] + 1, [self.value(h) for h in handlers], router=chain[0])
        )


def _constants(root: ts.Node) -> dict[str, bool]:
    """Top-level ``const FLAG = false`` (also ``export const``): names whose truth never changes."""
    out: dict[str, bool] = {}
    for stmt in root.named_children:
        decl = stmt.child_by_field_name("declaration") if stmt.type == "export_statement" else stmt
        if (
            decl is None
            or decl.type != "lexical_declaration"
            or not decl.children
            or _text(decl.children[0]) != "const"
        ):
            continue
        for declarator in decl.named_children:
            name, value = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                truth = (
                    _truth(value)
                    if _inner(value).type in ("true", "false", "null", "undefined", "number", "string")
                    else None
                )
                if truth is not None:
                    out[_text(name)] = truth
    return out


def _parse(source: bytes, path: str, grammar: str) -> Module:
    """The file's outline (tree-sitter reads any text, broken or not). Raises ``bounds.Unparsable`` for a file
    beyond the parsers' bounds: too large, nested deeper than the walk goes, out of memory."""
    bounds.check_size(path, len(source))
    with bounds.parsing(path), bounds.deep_recursion(20000):  # the walk recurses once per syntax level
        tree = _parser(grammar).parse(source)
        outliner = _Outliner(path, len(source))
        outliner.constants = _constants(tree.root_node)
        outliner.visit(tree.root_node)
        outliner.file_routes(tree.root_node)
    module = outliner.module
    add_handed_over(module, JAVASCRIPT_RUNNERS, python=False)
    exported = set(module.exports.values())
    for fn in module.functions:  # another module (or the framework, for a route file) may call these
        if fn.parent is None and not fn.cls and fn.name in exported:
            fn.exported = True
        elif (
            fn.cls in exported and fn.name and not fn.name.startswith("#") and fn.name not in outliner.private
        ):
            fn.exported = True  # a public method of an exported class
    return module


def parse_typescript(source: bytes, path: str) -> Module:
    return _parse(source, path, "typescript")


def parse_tsx(source: bytes, path: str) -> Module:
    return _parse(source, path, "tsx")


def parse_javascript(source: bytes, path: str) -> Module:
    return _parse(source, path, "javascript")
