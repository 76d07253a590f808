"""Ruby (Rails apps among them), read with the tree-sitter grammar from PyPI (``tree-sitter-ruby``).

Ruby's calls need no parentheses and no receiver: ``seam.access_codes.create(device_id: id)`` is a chain of
calls, and a bare ``connection`` inside a method is a call of the class's own method unless a local of that
name was assigned. The outline spells the first as the chain ``("seam", "access_codes", "create")`` with
keyword arguments (the gem ``seam`` shares the Python SDK's names and keywords: ``sdk="python"``) and the
second as ``("self", "connection")``, so the call graph resolves it through the enclosing class. Instance
variables are ``self.<name>`` (``@seam`` is ``self.seam``), ``Foo.new(...)`` is ``("new", "Foo")`` as in
JavaScript, ``Net::HTTP.post`` is ``("Net", "HTTP", "post")``. A method returns its last expression.

Rails' routes (``config/routes.rb``: ``resources``, ``resource``, the verbs with ``to: "controller#action"``,
``namespace``, ``scope``, ``member``/``collection``, nested resources) become ``Route``s whose handlers name
the controller's action (``Api::BookingsController#create`` -> the method ``create`` of the class
``Api.BookingsController`` in ``app/controllers/api/bookings_controller.rb``, Rails' autoloading convention).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter as ts

from skillassay.languages import bounds
from skillassay.languages.base import Call, ClassInfo, Function, ImportRef, Module, Route, Span, Value
from skillassay.languages.syntax_tree import ThreadParsers, grammar
from skillassay.languages.syntax_tree import line as _line
from skillassay.languages.syntax_tree import span as _span
from skillassay.languages.syntax_tree import text as _text

SDK_LABEL = "Ruby SDK (gem seam)"
# library constants a Rails app reaches without a require of its own (Bundler.require loads the Gemfile's
# gems): the constant stands for the import
LIBRARY_CONSTANTS = {
    "Faraday": "faraday",
    "Net": "net/http",
    "HTTParty": "httparty",
    "RestClient": "rest-client",
    "Excon": "excon",
    "Typhoeus": "typhoeus",
    "HTTP": "http",
    "Seam": "seam",
}
# calls whose value is their argument's, as far as the checks care: a body serialised, a URL parsed
_PASS_THROUGH = {("to_json",), ("JSON", "generate"), ("JSON", "dump"), ("URI",), ("URI", "parse")}
_TERMINATORS = {"return", "break", "next", "redo", "retry"}
_RAISES = {"raise", "fail"}
_VISIBILITY = {"private", "protected", "public"}
_RESOURCE_ACTIONS = {
    # action -> (method, path after the collection)
    "index": ("GET", ""),
    "create": ("POST", ""),
    "new": ("GET", "/new"),
    "show": ("GET", "/:id"),
    "edit": ("GET", "/:id/edit"),
    "update": ("PATCH", "/:id"),
    "destroy": ("DELETE", "/:id"),
}
_SINGULAR_ACTIONS = {
    "create": ("POST", ""),
    "new": ("GET", "/new"),
    "show": ("GET", ""),
    "edit": ("GET", "/edit"),
    "update": ("PATCH", ""),
    "destroy": ("DELETE", ""),
}
_ROUTE_VERBS = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE"}
# `obj.public_send(:create, ...)`: a call of the method the first argument names
_SENDS = {"send", "public_send", "__send__"}
# `GrantJob.perform_later(args)`: ActiveJob runs the job's `perform` (later, on the app's queue adapter)
_ENQUEUES = {"perform_later", "perform_now"}
# controller callbacks: Rails runs the named methods around the actions `only:` / `except:` select
_CALLBACKS = {
    f"{when}_action"
    for when in ("before", "after", "around", "prepend_before", "append_before", "prepend_after")
}
_SCALARS = {"integer", "float", "true", "false", "nil", "simple_symbol", "rational", "complex"}


@functools.cache
def _language() -> ts.Language:
    return grammar("tree_sitter_ruby", "language")


_parser = ThreadParsers(_language).get


def _symbol(node: ts.Node | None) -> str | None:
    """The name a symbol, a symbol key or a plain string literal spells (``:api``, ``api:``, ``"api"``)."""
    if node is None:
        return None
    if node.type in ("simple_symbol", "hash_key_symbol"):
        return _text(node).lstrip(":").rstrip(":")
    if node.type in ("string", "delimited_symbol") and all(
        c.type == "string_content" for c in node.named_children
    ):
        return "".join(_text(c) for c in node.named_children)
    if node.type in ("identifier", "constant"):
        return _text(node)
    return None


def _string(node: ts.Node | None) -> str | None:
    """A string literal without interpolation."""
    if node is None or node.type != "string":
        return None
    return "".join(_text(c) for c in node.named_children if c.type in ("string_content", "escape_sequence"))


def _constant_chain(node: ts.Node) -> tuple[str, ...]:
    """``Api::BookingsController`` -> ("Api", "BookingsController")."""
    if node.type == "constant":
        return (_text(node),)
    if node.type == "scope_resolution":
        name = node.child_by_field_name("name")
        scope = node.child_by_field_name("scope")
        head = _constant_chain(scope) if scope is not None else ()
        return (*head, _text(name)) if name is not None else ()
    return ()


def _truth(node: ts.Node | None) -> bool | None:
    """The value a condition always has (literals and their negations, ``&&``/``||``), or None."""
    if node is None:
        return None
    kind = node.type
    if kind in ("false", "nil"):
        return False
    if kind in ("true", "integer", "string", "float", "simple_symbol"):
        return True
    if kind == "parenthesized_statements" and node.named_child_count == 1:
        return _truth(node.named_children[0])
    if kind == "unary" and node.child_count == 2 and _text(node.children[0]) in ("!", "not"):
        inner = _truth(node.named_children[0])
        return None if inner is None else not inner
    if kind == "binary":
        op = node.child_by_field_name("operator")
        left, right = _truth(node.child_by_field_name("left")), _truth(node.child_by_field_name("right"))
        operator = _text(op) if op is not None else ""
        if operator in ("&&", "and"):
            return False if False in (left, right) else (True if left is right is True else None)
        if operator in ("||", "or"):
            return True if True in (left, right) else (False if left is right is False else None)
    return None


@dataclass
class _Scope:
    """A function being read: its index and the local names it has assigned so far."""

    index: int | None
    locals: set[str] = field(default_factory=set)


class _Outliner:
    def __init__(self, path: str, size: int):
        self.module = Module(
            path=path, language="ruby", sdk="python", sdk_label=SDK_LABEL, size=size, references_complete=True
        )
        self.scopes: list[_Scope] = [_Scope(None)]
        self.classes: list[str] = []  # enclosing class/module names, outermost first
        self.dead = 0
        self.stmts: list[tuple[ts.Node, str]] = []  # statements around the node being read, innermost last
        self.private: set[tuple[str, str]] = set()  # (class, method) not callable from outside
        self.symbols: dict[str, set[str]] = {}  # class -> symbols its body's calls name (before_action :x)
        self.constants: dict[
            str, str
        ] = {}  # a constant bound to a symbol or string (`DELETE = :delete_data`)
        # class -> the callbacks its body declares: (method, only, except, line)
        self.callbacks: dict[str, list[tuple[str, list[str] | None, list[str] | None, int]]] = {}

    # ------------------------------------------------------------------ scopes
    @property
    def scope(self) -> int | None:
        return self.scopes[-1].index

    def is_local(self, name: str) -> bool:
        """A local variable (or parameter) of the function being read or a block around it."""
        for scope in reversed(self.scopes):
            if name in scope.locals:
                return True
            if scope.index is not None and self.module.functions[scope.index].name is not None:
                return False  # a method's body sees no outer locals
        return False

    def _bind(self, name: str, value: Value) -> None:
        self.module.bind(self.scope, name, value)

    def _decision(self, text: str, line: int) -> None:
        self.module.decide(self.scope, text, line)

    def _name_read(self, name: str) -> None:
        if self.dead:
            return
        target = self.module.names if self.scope is None else self.module.functions[self.scope].names
        target.add(name)

    @property
    def cls(self) -> str | None:
        return ".".join(self.classes) if self.classes else None

    def _enter(self, name: str | None, node: ts.Node, cls: str | None) -> int:
        qual = ".".join([*([cls] if cls else []), name]) if name else "<anonymous>"
        self.module.functions.append(
            Function(
                name=name,
                qualname=qual,
                start_line=_line(node),
                end_line=node.end_point[0] + 1,
                parent=self.scope,
                cls=cls if name else None,
                dead=self.dead > 0,
                span=_span(node),
            )
        )
        return len(self.module.functions) - 1

    # ------------------------------------------------------------------ the walk
    def visit(self, node: ts.Node) -> None:
        handler = getattr(self, f"visit_{node.type}", None)
        if handler is not None:
            handler(node)
        else:
            self.children(node)

    def children(self, node: ts.Node) -> None:
        self.block(node.named_children)

    def block(self, nodes: list[ts.Node]) -> None:
        """Statements in order; those after a ``return``/``raise`` in the same block never run."""
        ended = False
        for child in nodes:
            if child.type == "comment":
                continue
            self.stmts.append((child, self._stmt_kind(child)))
            try:
                if ended:
                    self.visit_dead(child)
                else:
                    self.visit(child)
            finally:
                self.stmts.pop()
            ended = ended or self._terminates(child)

    @staticmethod
    def _stmt_kind(node: ts.Node) -> str:
        if node.type in ("assignment", "operator_assignment"):
            return "declaration"
        if node.type == "return":
            return "return"
        return "expression" if node.type in ("call", "identifier") else "other"

    @staticmethod
    def _terminates(node: ts.Node) -> bool:
        if node.type in _TERMINATORS:
            return True
        if node.type == "call" and node.child_by_field_name("receiver") is None:
            method = node.child_by_field_name("method")
            return method is not None and _text(method) in _RAISES
        return node.type == "identifier" and _text(node) in _RAISES

    def visit_dead(self, node: ts.Node | list[ts.Node]) -> None:
        self.dead += 1
        try:
            for child in node if isinstance(node, list) else [node]:
                self.visit(child)
        finally:
            self.dead -= 1

    def _visit_branch(self, node: ts.Node | None, runs: bool) -> None:
        if node is None:
            return
        if runs:
            self.visit(node)
        else:
            self.visit_dead(node)

    def visit_if(self, node: ts.Node, negate: bool = False) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition)
        if truth is not None and negate:
            truth = not truth
        self._visit_branch(node.child_by_field_name("consequence"), truth is not False)
        self._visit_branch(node.child_by_field_name("alternative"), truth is not True)

    visit_elsif = visit_if

    def visit_unless(self, node: ts.Node) -> None:
        self.visit_if(node, negate=True)

    def visit_if_modifier(self, node: ts.Node, negate: bool = False) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition)
        if truth is not None and negate:
            truth = not truth
        self._visit_branch(node.child_by_field_name("body"), truth is not False)

    def visit_unless_modifier(self, node: ts.Node) -> None:
        self.visit_if_modifier(node, negate=True)

    def visit_while(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        self._visit_branch(node.child_by_field_name("body"), _truth(condition) is not False)

    def visit_conditional(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition)
        self._visit_branch(node.child_by_field_name("consequence"), truth is not False)
        self._visit_branch(node.child_by_field_name("alternative"), truth is not True)

    def visit_binary(self, node: ts.Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        operator = _text(op) if op is not None else ""
        if left is not None:
            self.visit(left)
        skipped = (operator in ("&&", "and") and _truth(left) is False) or (
            operator in ("||", "or") and _truth(left) is True
        )
        self._visit_branch(right, not skipped)
        if operator in ("==", "!=", "===", "=~", "eql?"):
            for side in (left, right):
                if (text := _string(side)) is not None and side is not None:
                    self._decision(text, _line(side))

    def visit_case(self, node: ts.Node) -> None:
        self.children(node)

    def visit_pattern(self, node: ts.Node) -> None:
        for child in node.named_children:
            if (text := _string(child)) is not None:
                self._decision(text, _line(child))
        self.children(node)

    # ------------------------------------------------------------------ definitions
    def visit_class(self, node: ts.Node) -> None:
        name_node = node.child_by_field_name("name")
        chain = _constant_chain(name_node) if name_node is not None else ()
        if not chain:
            self.children(node)
            return
        saved = self.classes
        self.classes = [*self.classes, *chain]
        qual = ".".join(self.classes)
        superclass = node.child_by_field_name("superclass")
        bases = []
        if superclass is not None and superclass.named_children:
            base = _constant_chain(superclass.named_children[0])
            if base:
                bases.append(base)
        info = ClassInfo(qual, _line(node), bases=bases, span=_span(node))
        if self.dead == 0:
            self.module.classes.setdefault(qual, info)
        body = node.child_by_field_name("body")
        self.scopes.append(_Scope(self.scope))  # a class body has locals of its own
        visibility = "public"
        try:
            for child in body.named_children if body is not None else []:
                visibility = self._class_statement(child, qual, info, visibility)
        finally:
            self.scopes.pop()
            self.classes = saved

    visit_module = visit_class

    def _class_statement(self, child: ts.Node, qual: str, info: ClassInfo, visibility: str) -> str:
        """One statement of a class body; returns the visibility the methods after it have."""
        if child.type == "identifier" and _text(child) in _VISIBILITY:
            return _text(child)
        if child.type == "call" and child.child_by_field_name("receiver") is None:
            method = _text(child.child_by_field_name("method") or child)
            args = child.child_by_field_name("arguments")
            names = [s for a in (args.named_children if args else []) if (s := _symbol(a))]
            if method in _VISIBILITY and args is not None:
                for arg in args.named_children:
                    if arg.type in ("method", "singleton_method"):  # `private def helper`
                        self.visit(arg)
                        if method != "public":
                            self._mark_private(qual, arg)
                if method != "public":
                    self.private.update((qual, n) for n in names)
                return visibility
            if method in ("include", "extend", "prepend") and args is not None:
                info.bases.extend(c for a in args.named_children if (c := _constant_chain(a)))
            if method in ("attr_reader", "attr_accessor"):  # `attr_reader :seam`: the method reads @seam
                for name in names:
                    index = self._enter(name, child, qual)
                    self.module.functions[index].returns.append(
                        Value("ref", _line(child), chain=("self", name))
                    )
            self.symbols.setdefault(qual, set()).update(names)
            if method in _CALLBACKS and args is not None:
                self._callbacks(qual, args, _line(child))
        if child.type == "assignment":
            left, right = child.child_by_field_name("left"), child.child_by_field_name("right")
            if left is not None and right is not None and left.type == "constant":
                info.fields.setdefault(_text(left), []).append(self.value(right))
        self.stmts.append((child, self._stmt_kind(child)))
        try:
            self.visit(child)
        finally:
            self.stmts.pop()
        if visibility != "public" and child.type == "method":
            self._mark_private(qual, child)
        return visibility

    def _callbacks(self, qual: str, args: ts.Node, line: int) -> None:
        """``before_action :load, only: %i[update destroy]``: which methods run around which actions."""
        names = [s for a in args.named_children if a.type != "pair" and (s := _symbol(a))]
        options = {
            k: c.child_by_field_name("value")
            for c in args.named_children
            if c.type == "pair" and (k := _symbol(c.child_by_field_name("key"))) is not None
        }
        only, except_ = _Routes.action_list(options.get("only")), _Routes.action_list(options.get("except"))
        self.callbacks.setdefault(qual, []).extend((n, only, except_, line) for n in names)

    def _mark_private(self, qual: str, method: ts.Node) -> None:
        name = method.child_by_field_name("name")
        if name is not None:
            self.private.add((qual, _text(name)))

    def visit_method(self, node: ts.Node) -> None:
        name_node = node.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else None
        self._function(node, name, self.cls)

    def visit_singleton_method(self, node: ts.Node) -> None:
        # `def self.create_booking`: a method of the class itself, called as BookingService.create_booking
        name_node = node.child_by_field_name("name")
        self._function(node, _text(name_node) if name_node is not None else None, self.cls)

    def _function(self, node: ts.Node, name: str | None, cls: str | None) -> int:
        params_node = node.child_by_field_name("parameters")
        for default in self._param_defaults(params_node):
            self.visit(default)
        index = self._enter(name, node, cls)
        fn = self.module.functions[index]
        scope = _Scope(index)
        for kind, pname in self._params(params_node):
            scope.locals.add(pname)
            if kind == "**":
                fn.kwargs_param = pname
            elif kind in ("", "k"):
                fn.params.append(pname)
        self.scopes.append(scope)
        try:
            body = node.child_by_field_name("body")
            if body is not None and node.type == "lambda" and body.type in ("block", "do_block"):
                body = body.child_by_field_name("body")  # `-> (x) { ... }`: the braces' body
            if body is not None:
                statements = (
                    [body] if body.type not in ("body_statement", "block_body") else list(body.named_children)
                )
                self.block(statements)
                last = next((s for s in reversed(statements) if s.type != "comment"), None)
                if last is not None and last.type not in _TERMINATORS and last.type != "method":
                    fn.returns.append(self.value(last))  # a method returns its last expression
        finally:
            self.scopes.pop()
        return index

    @staticmethod
    def _params(node: ts.Node | None) -> Iterator[tuple[str, str]]:
        """(kind, name) of each parameter: "" positional, "k" keyword, "*", "**", "&"."""
        for param in node.named_children if node is not None else []:
            if param.type == "identifier":
                yield "", _text(param)
                continue
            inner = param.child_by_field_name("name")
            if inner is None:
                continue
            kind = {
                "optional_parameter": "",
                "keyword_parameter": "k",
                "splat_parameter": "*",
                "hash_splat_parameter": "**",
                "block_parameter": "&",
            }.get(param.type, "*")
            yield kind, _text(inner)

    @staticmethod
    def _param_defaults(node: ts.Node | None) -> list[ts.Node]:
        out = []
        for param in node.named_children if node is not None else []:
            value = param.child_by_field_name("value")
            if value is not None:
                out.append(value)
        return out

    def _block_function(self, node: ts.Node) -> int:
        """A block or lambda: an anonymous function (run where it is written, as a callback is assumed to)."""
        return self._function(node, None, None)

    @staticmethod
    def _callable(node: ts.Node) -> bool:
        """``-> { }``, ``lambda { }``, ``proc { }``, ``Proc.new { }``: a function value, run when called."""
        if node.type == "lambda":
            return True
        if node.type != "call" or node.child_by_field_name("block") is None:
            return False
        method, receiver = node.child_by_field_name("method"), node.child_by_field_name("receiver")
        name = _text(method) if method is not None else ""
        if receiver is None:
            return name in ("lambda", "proc") and node.child_by_field_name("arguments") is None
        return name == "new" and _text(receiver) == "Proc"

    def _named_callable(self, node: ts.Node, name: str) -> None:
        """A lambda bound to the local ``name``: a function of that name (its body runs where ``name`` is
        called or handed on, not where it is written)."""
        body = node if node.type == "lambda" else node.child_by_field_name("block")
        if body is None:
            return
        index = self._function(body, None, None)
        fn = self.module.functions[index]
        fn.name, fn.qualname = name, name

    visit_block = _block_function
    visit_do_block = _block_function
    visit_lambda = _block_function

    # ------------------------------------------------------------------ statements
    def visit_assignment(self, node: ts.Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if right is not None and left is not None and left.type == "identifier" and self._callable(right):
            self._named_callable(right, _text(left))
        elif right is not None:
            self.visit(right)
        if left is None or right is None:
            return
        if left.type == "element_reference":
            obj = left.child_by_field_name("object")
            if obj is not None:
                self.visit(obj)
        self._assign(left, self.value(right), _line(node))

    def visit_operator_assignment(self, node: ts.Node) -> None:  # `@seam ||= Seam.new(...)`
        self.visit_assignment(node)

    def _assign(self, left: ts.Node, value: Value, line: int) -> None:
        if left.type == "identifier":
            self.scopes[-1].locals.add(_text(left))
            self._bind(_text(left), value)
        elif left.type == "instance_variable":
            self._bind(f"self.{_text(left).lstrip('@')}", value)
        elif left.type == "constant":
            self._bind(_text(left), value)
            if (
                value.kind == "str"
                and value.text.replace("_", "").replace("!", "").replace("?", "").isalnum()
            ):
                self.constants.setdefault(_text(left), value.text)
        elif left.type == "element_reference":
            obj = left.child_by_field_name("object")
            keys = [c for c in left.named_children if c != obj]
            key = _symbol(keys[0]) if keys else None
            if obj is not None and obj.type == "identifier" and key is not None:
                self._bind(_text(obj), Value("object", line, keys={key: value}))
        elif (
            left.type == "call"
        ):  # `request.body = payload.to_json`: the setter's value, as a key of the local
            receiver, method = left.child_by_field_name("receiver"), left.child_by_field_name("method")
            if receiver is not None and receiver.type == "identifier" and method is not None:
                self._bind(_text(receiver), Value("object", line, keys={_text(method): value}))
        elif left.type == "left_assignment_list":
            for target in left.named_children:
                if target.type == "identifier":
                    self.scopes[-1].locals.add(_text(target))

    def visit_return(self, node: ts.Node) -> None:
        self.children(node)
        if self.scope is None:
            return
        args = node.named_children[0] if node.named_children else None
        if args is not None and args.type == "argument_list" and args.named_children:
            self.module.functions[self.scope].returns.append(self.value(args.named_children[0]))

    def visit_hash(self, node: ts.Node) -> None:
        self.children(node)
        for pair in node.named_children:
            key = pair.child_by_field_name("key") if pair.type == "pair" else None
            if key is not None and (text := _string(key)) is not None:
                self._decision(text, _line(key))

    def visit_identifier(self, node: ts.Node) -> None:
        name = _text(node)
        self._name_read(name)
        if not self.is_local(name) and name not in _VISIBILITY:
            self._call(node, self._implicit(name), [], {}, [])  # `connection`: a call of a method

    def visit_constant(self, node: ts.Node) -> None:
        self._name_read(_text(node))
        self._library(_text(node))

    def visit_scope_resolution(self, node: ts.Node) -> None:
        chain = _constant_chain(node)
        if chain:
            self._name_read(chain[0])
            self._library(chain[0])
        else:
            self.children(node)

    def _library(self, constant: str) -> None:
        source = LIBRARY_CONSTANTS.get(constant)
        if source is not None and constant not in self.module.imports:
            self.module.imports[constant] = source
            self.module.import_sources.append(source)

    # ------------------------------------------------------------------ calls
    def _implicit(self, name: str) -> tuple[str, ...]:
        """A call without a receiver: a method of the enclosing class when inside one (``self.name``)."""
        return ("self", name) if self.cls is not None and self._in_method() else (name,)

    def _in_method(self) -> bool:
        return any(
            s.index is not None and self.module.functions[s.index].name is not None for s in self.scopes
        )

    def chain(self, node: ts.Node | None) -> tuple[str, ...]:
        """The callee chain of a receiver expression; () when it is not a plain chain."""
        if node is None:
            return ()
        kind = node.type
        if kind == "identifier":
            name = _text(node)
            return (name,) if self.is_local(name) else self._implicit(name)
        if kind == "instance_variable":
            return ("self", _text(node).lstrip("@"))
        if kind == "self":
            return ("self",)
        if kind in ("constant", "scope_resolution"):
            return _constant_chain(node)
        if kind == "call":
            method = node.child_by_field_name("method")
            receiver = node.child_by_field_name("receiver")
            if method is None:
                return ()
            name = _text(method)
            if name in _SENDS and (sent := self._sent(node)) is not None:
                if receiver is None:
                    return self._implicit(sent)
                inner = self.chain(receiver)
                return (*inner, sent) if inner else ()
            if receiver is None:
                return self._implicit(name)
            inner = self.chain(receiver)
            if not inner:
                return ()
            if name in _ENQUEUES and (job := self._job(inner)):
                inner = ("new", *job)
                name = "perform"
            if name == "new":
                return ("new", *inner)
            if inner[0] == "new" and len(inner) == 2:  # `Client.new.open(...)`: a method of the instance
                return (f"{inner[1]}()", name)
            return (*inner, name)
        if kind == "element_reference":
            obj = node.child_by_field_name("object")
            inner = self.chain(obj)
            keys = [c for c in node.named_children if c != obj]
            key = _symbol(keys[0]) if keys else None
            return (*inner, key if key is not None else "[]") if inner else ()
        if kind == "parenthesized_statements" and node.named_child_count == 1:
            return self.chain(node.named_children[0])
        return ()

    def _sent(self, node: ts.Node) -> str | None:
        """The method ``send(:name, ...)`` / ``public_send("name", ...)`` / ``send(NAME, ...)`` calls."""
        args = node.child_by_field_name("arguments")
        first = next((c for c in args.named_children if c.type != "comment"), None) if args else None
        if first is None:
            return None
        name = self.constants.get(_text(first)) if first.type == "constant" else _symbol(first)
        if first.type == "identifier" or not name or not name.replace("_", "").isalnum():
            return None
        return name

    @staticmethod
    def _job(receiver: tuple[str, ...]) -> tuple[str, ...]:
        """``GrantJob`` / ``GrantJob.set(wait: 5.seconds)``: the job class whose ``perform`` is enqueued."""
        chain = receiver[:-1] if receiver[-1:] == ("set",) else receiver
        return chain if chain and all(p[:1].isupper() for p in chain) else ()

    def visit_call(self, node: ts.Node) -> None:
        receiver = node.child_by_field_name("receiver")
        method = node.child_by_field_name("method")
        args_node = node.child_by_field_name("arguments")
        block = node.child_by_field_name("block")
        if receiver is not None:
            self.visit(receiver)
        if args_node is not None:
            self.visit(args_node)
        if block is not None:
            self.visit(block)
        args, kwargs, spreads = self._arguments(args_node)
        chain = self.chain(node)
        name = _text(method) if method is not None else ""
        if name in _SENDS and args and self._sent(node) is not None:
            args = args[1:]
        if chain and method is not None:
            self._call(node, chain, args, kwargs, spreads, callee=method if receiver is None else None)
            self.module.calls[-1].kw_spans = self._kw_spans(args_node)
        if name in ("include?", "start_with?", "end_with?", "in?", "key?", "has_key?"):
            self._list_decisions(receiver, args_node)

    def _list_decisions(self, receiver: ts.Node | None, args: ts.Node | None) -> None:
        """``%w[a b].include?(type)``, ``["a"].include?(type)``, ``type.start_with?("access_code.")``."""
        for holder in (receiver, args):
            for child in holder.named_children if holder is not None else []:
                if (text := _string(child)) is not None:
                    self._decision(text, _line(child))
                elif child.type == "bare_string":
                    self._decision(_text(child), _line(child))
            if holder is not None and holder.type in ("array", "string_array"):
                for child in holder.named_children:
                    if (text := _string(child)) is not None:
                        self._decision(text, _line(child))

    @staticmethod
    def _kw_spans(node: ts.Node | None) -> dict[str, Span]:
        """Each keyword argument's ``key: value``, where it is written (the mutants drop one)."""
        out: dict[str, Span] = {}
        for child in node.named_children if node is not None else []:
            if child.type == "pair" and (key := _symbol(child.child_by_field_name("key"))) is not None:
                out[key] = _span(child)
        return out

    def _arguments(self, node: ts.Node | None) -> tuple[list[Value], dict[str, Value], list[Value]]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        spreads: list[Value] = []
        for child in node.named_children if node is not None else []:
            if child.type == "pair":
                key = _symbol(child.child_by_field_name("key"))
                value = child.child_by_field_name("value")
                if key is not None:
                    kwargs[key] = self.value(value) if value is not None else Value("ref", chain=(key,))
            elif child.type == "hash_splat_argument":
                if child.named_children:
                    spreads.append(self.value(child.named_children[0]))
            elif child.type in ("block_argument", "comment"):
                continue
            else:
                args.append(self.value(child))
        return args, kwargs, spreads

    def _call(
        self,
        node: ts.Node,
        chain: tuple[str, ...],
        args: list[Value],
        kwargs: dict[str, Value],
        spreads: list[Value],
        callee: ts.Node | None = None,
    ) -> None:
        method = node.child_by_field_name("method") if node.type == "call" else node
        callee_end = (method or node).end_byte
        stmt = self.stmts[-1] if self.stmts else None
        call = Call(
            chain=chain,
            line=_line(node),
            args=args,
            kwargs=kwargs,
            kw_spreads=spreads,
            scope=self.scope,
            dead=self.dead > 0,
            span=_span(node),
            callee_span=(node.start_byte, callee_end),
            stmt=_span(stmt[0]) if stmt else None,
            stmt_kind=stmt[1] if stmt and stmt[0] == node else ("other" if stmt else ""),
        )
        if stmt and stmt[0] != node and stmt[1] in ("declaration", "return"):
            call.stmt_kind = stmt[1]
        self.module.calls.append(call)
        if chain[-1] == "require" and len(chain) <= 2 and args and args[0].kind == "str":
            self.module.import_sources.append(args[0].text)
            self.module.imports.setdefault(args[0].text.split("/")[0], args[0].text)

    # ------------------------------------------------------------------ values
    def value(self, node: ts.Node) -> Value:
        out = self._value(node)
        if out.span is None:
            out.span = _span(node)
        return out

    def _value(self, node: ts.Node) -> Value:
        line = _line(node)
        kind = node.type
        if kind == "string":
            return self._string_value(node)
        if kind in ("simple_symbol", "hash_key_symbol"):
            return Value("str", line, text=_symbol(node) or "")
        if kind == "hash":
            return self._hash(node)
        if kind == "array":
            return Value(
                "array",
                line,
                items=[self.value(c) for c in node.named_children if c.type != "splat_argument"],
            )
        if kind in ("string_array", "symbol_array"):  # %w[a b], %i[a b]
            return Value(
                "array", line, items=[Value("str", _line(c), text=_text(c)) for c in node.named_children]
            )
        if kind in ("identifier", "instance_variable", "constant", "scope_resolution", "self"):
            chain = self.chain(node)
            if kind == "identifier" and chain and chain[0] == "self":
                return Value("call", line, chain=chain)  # a method of the class, called without a receiver
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if kind == "element_reference":
            chain = self.chain(node)
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if kind == "call":
            return self._call_value(node)
        if kind == "call" and self._callable(node):
            node = node.child_by_field_name("block") or node
            kind = node.type
        if kind in ("lambda", "block", "do_block"):
            index = next((i for i, f in enumerate(self.module.functions) if f.span == _span(node)), None)
            return Value("func", line, func=index)
        if kind == "parenthesized_statements" and node.named_child_count == 1:
            return self.value(node.named_children[0])
        if kind == "binary":
            return self._binary(node)
        if kind in ("assignment", "operator_assignment"):
            right = node.child_by_field_name("right")
            return self.value(right) if right is not None else Value("other", line)
        return Value("other", line)

    def _string_value(self, node: ts.Node) -> Value:
        parts: list[Value] = []
        plain = True
        for child in node.named_children:
            if child.type in ("string_content", "escape_sequence"):
                parts.append(Value("str", _line(child), text=_text(child)))
            elif child.type == "interpolation":
                plain = False
                inner = child.named_children
                parts.append(self.value(inner[0]) if len(inner) == 1 else Value("other", _line(child)))
        if plain:
            return Value("str", _line(node), text="".join(p.text for p in parts))
        return Value("template", _line(node), items=parts)

    def _hash(self, node: ts.Node) -> Value:
        out = Value("object", _line(node))
        for pair in node.named_children:
            if pair.type == "pair":
                key = _symbol(pair.child_by_field_name("key"))
                value = pair.child_by_field_name("value")
                if key is not None and value is not None:
                    out.keys[key] = self.value(value)
                    out.key_spans[key] = _span(pair)
            elif pair.type == "hash_splat_argument" and pair.named_children:
                out.spreads.append(self.value(pair.named_children[0]))
        return out

    def _binary(self, node: ts.Node) -> Value:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        operator = _text(op) if op is not None else ""
        if left is None or right is None:
            return Value("other", _line(node))
        if operator == "+":  # `base + "/access_codes/create"`
            items = []
            for side in (left, right):
                value = self.value(side)
                items.extend(value.items if value.kind == "template" else [value])
            return Value("template", _line(node), items=items)
        if operator in ("||", "or"):
            return self.value(left)
        return Value("other", _line(node))

    def _call_value(self, node: ts.Node) -> Value:
        line = _line(node)
        receiver = node.child_by_field_name("receiver")
        method = node.child_by_field_name("method")
        name = _text(method) if method is not None else ""
        args, kwargs, spreads = self._arguments(node.child_by_field_name("arguments"))
        if name in _SENDS and args and self._sent(node) is not None:
            args = args[1:]
        receiver_chain = self.chain(receiver) if receiver is not None else ()
        key = (*receiver_chain, name) if receiver_chain and receiver_chain[0][:1].isupper() else (name,)
        if key in _PASS_THROUGH:
            if name == "to_json" and receiver is not None:
                return self.value(receiver)
            if args:
                return args[0]
        if key == ("URI", "join") and len(args) >= 2:
            return Value("call", line, chain=("urljoin",), args=args[:2])
        if name in ("merge", "merge!", "deep_merge") and receiver is not None:  # {a: 1}.merge(b: 2)
            merged = Value("object", line, spreads=[self.value(receiver)], keys=dict(kwargs))
            merged.spreads.extend(args + spreads)
            return merged
        if name in ("freeze", "dup", "to_h", "with_indifferent_access", "compact") and receiver is not None:
            return self.value(receiver)
        if name in ("map", "collect") and receiver is not None:
            block = node.child_by_field_name("block")
            index = next(
                (
                    i
                    for i, f in enumerate(self.module.functions)
                    if block is not None and f.span == _span(block)
                ),
                None,
            )
            if index is not None:
                return Value("array", line, items=list(self.module.functions[index].returns))
        chain = self.chain(node)
        if not chain:
            return Value("other", line)
        value = Value("call", line, chain=chain, args=args + list(kwargs.values()))
        if kwargs and not args:  # `build(device_id: id)`: the keywords, as one options object
            value.args = [Value("object", line, keys=dict(kwargs), spreads=spreads)]
        return value

    # ------------------------------------------------------------------ after the walk
    def finish(self) -> None:
        """Which methods may be called from elsewhere: a public method of a class (another file may hold an
        instance), a top-level ``def``, a method a class body names by symbol (``before_action :x``). A call
        without receiver inside a class that has no method of its name here, of a top-level ``def`` of this
        file, is that function's (Ruby looks up the class, then Object, where a top-level ``def`` lives)."""
        top = {f.name for f in self.module.functions if f.name and f.cls is None and f.parent is None}
        methods = {(f.cls, f.name) for f in self.module.functions if f.cls and f.name}
        for call in self.module.calls:
            if len(call.chain) == 2 and call.chain[0] == "self" and call.chain[1] in top:
                cls = next(
                    (
                        self.module.functions[i].cls
                        for i in self.module.enclosing(call.scope)
                        if self.module.functions[i].cls
                    ),
                    None,
                )
                if (cls, call.chain[1]) not in methods:
                    call.chain = (call.chain[1],)
        self._callback_calls()
        self._mark_routed()
        for fn in self.module.functions:
            if fn.name is None or fn.dead:
                continue
            if fn.cls is None:
                fn.exported = fn.parent is None
            elif (fn.cls, fn.name) not in self.private and fn.parent is None and not self._controller(fn.cls):
                # a `def` inside a method is defined when it runs: not a public method; a controller's
                # action runs when a route names it, and only then
                fn.exported = True
            if fn.cls is not None and fn.name in self.symbols.get(fn.cls, set()):
                fn.decorated = True

    def _controller(self, cls: str) -> bool:
        """A Rails controller (``app/controllers/**/*_controller.rb``): the router calls its actions."""
        return self.module.path.startswith("app/controllers/") and cls.endswith("Controller")

    def _mark_routed(self) -> None:
        for name, info in self.module.classes.items():
            info.routed = self._controller(name)

    def _callback_calls(self) -> None:
        """``after_action :open_code, only: :create``: a call of ``open_code`` in the action ``create`` (Rails
        runs it with the action), for each action the callback applies to."""
        for cls, callbacks in self.callbacks.items():
            actions = [
                (i, f)
                for i, f in enumerate(self.module.functions)
                if f.cls == cls and f.name and f.parent is None and (cls, f.name) not in self.private
            ]
            for name, only, except_, line in callbacks:
                for index, fn in actions:
                    if fn.name == name or (only is not None and fn.name not in only):
                        continue
                    if except_ is not None and fn.name in except_:
                        continue
                    self.module.calls.append(Call(chain=("self", name), line=line, scope=index))


# ---------------------------------------------------------------------- Rails routes
@dataclass
class _RouteScope:
    """Where a Rails routes block is: its path, namespaces and enclosing resource."""

    path: str = ""
    modules: tuple[str, ...] = ()  # controller namespaces (namespace :api -> ("api",))
    controller: str | None = None  # inside `resources :bookings do`: the resource's controller
    member: str = ""  # the member path of the enclosing resource (/bookings/:id)
    nested: str = ""  # where a nested resource hangs (/bookings/:booking_id)
    collection: str = ""  # the collection path of the enclosing resource (/bookings)


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[_-]", name) if p)


class _Routes:
    """The routes a ``routes.draw do ... end`` block declares."""

    def __init__(self, outliner: _Outliner):
        self.o = outliner
        self.module = outliner.module

    def draw(self, block: ts.Node) -> None:
        self.body(block, _RouteScope())

    def body(self, block: ts.Node, scope: _RouteScope) -> None:
        body = block.child_by_field_name("body")
        for stmt in body.named_children if body is not None else []:
            if stmt.type == "call" and stmt.child_by_field_name("receiver") is None:
                self.statement(stmt, scope)
            elif stmt.type in ("if", "unless"):
                continue  # conditional routes: not read

    def statement(self, node: ts.Node, scope: _RouteScope) -> None:
        method = node.child_by_field_name("method")
        verb = _text(method) if method is not None else ""
        args = node.child_by_field_name("arguments")
        positional = [c for c in (args.named_children if args else []) if c.type not in ("pair", "comment")]
        options = {
            k: c.child_by_field_name("value")
            for c in (args.named_children if args else [])
            if c.type == "pair" and (k := _symbol(c.child_by_field_name("key"))) is not None
        }
        string_keys = {
            _string(c.child_by_field_name("key")): c.child_by_field_name("value")
            for c in (args.named_children if args else [])
            if c.type == "pair" and (c.child_by_field_name("key") or c).type == "string"
        }
        block = node.child_by_field_name("block")
        line = _line(node)
        if verb in ("namespace", "scope", "defaults", "constraints", "controller", "concern"):
            if block is not None:
                self.body(block, self.nested_scope(verb, positional, options, scope))
        elif verb in ("resources", "resource"):
            for name in [s for p in positional if (s := _symbol(p))]:
                self.resources(name, verb == "resource", options, block, scope, line)
        elif verb in ("member", "collection") and block is not None:
            path = scope.member if verb == "member" else scope.collection or scope.path
            self.body(block, _RouteScope(path, scope.modules, scope.controller))
        elif verb in _ROUTE_VERBS or verb == "match":
            self.verb(verb, positional, options, string_keys, scope, line)
        elif verb == "root":
            target = _symbol(options.get("to")) or (_symbol(positional[0]) if positional else None)
            if target:
                self.add("GET", scope.path or "/", target, scope, line)

    def nested_scope(
        self, verb: str, positional: list[ts.Node], options: dict[str, ts.Node | None], scope: _RouteScope
    ) -> _RouteScope:
        first = _symbol(positional[0]) if positional else None
        path, modules = scope.path, scope.modules
        if verb == "namespace" and first:
            path = f"{path}/{(options.get('path') and _symbol(options['path'])) or first}"
            modules = (
                (*modules, _symbol(options["module"]) or first) if "module" in options else (*modules, first)
            )
        elif verb == "scope":
            given = first if first is not None else _symbol(options.get("path"))
            if given:
                path = f"{path}/{given.strip('/')}"
            if (module := _symbol(options.get("module"))) is not None:
                modules = (*modules, module)
        controller = _symbol(positional[0]) if verb == "controller" and positional else scope.controller
        return _RouteScope(path, modules, controller, scope.member, scope.nested, scope.collection)

    def resources(
        self,
        name: str,
        singular: bool,
        options: dict[str, ts.Node | None],
        block: ts.Node | None,
        scope: _RouteScope,
        line: int,
    ) -> None:
        table = _SINGULAR_ACTIONS if singular else _RESOURCE_ACTIONS
        actions = list(table)
        only, except_ = self.action_list(options.get("only")), self.action_list(options.get("except"))
        if only is not None:
            actions = [a for a in actions if a in only]
        if except_ is not None:
            actions = [a for a in actions if a not in except_]
        segment = _symbol(options.get("path")) or name
        base = f"{scope.nested or scope.path}/{segment}"
        controller = _symbol(options.get("controller")) or (f"{name}s" if singular else name)
        for action in actions:
            method, tail = table[action]
            self.add(method, base + tail, f"{controller}#{action}", scope, line)
            if action == "update":
                self.add("PUT", base + tail, f"{controller}#{action}", scope, line)
        if block is not None:
            member = base if singular else f"{base}/:id"
            param = name.removesuffix("s") if not singular else name
            nested = base if singular else f"{base}/:{param}_id"
            self.body(block, _RouteScope(nested, scope.modules, controller, member, nested, base))

    @staticmethod
    def action_list(node: ts.Node | None) -> list[str] | None:
        if node is None:
            return None
        if node.type == "array":
            return [s for c in node.named_children if (s := _symbol(c))]
        if node.type in ("symbol_array", "string_array"):  # %i[create show]
            return [_text(c) for c in node.named_children]
        single = _symbol(node)
        return [single] if single else None

    def verb(
        self,
        verb: str,
        positional: list[ts.Node],
        options: dict[str, ts.Node | None],
        string_keys: dict[str | None, ts.Node | None],
        scope: _RouteScope,
        line: int,
    ) -> None:
        path = _symbol(positional[0]) if positional else None
        target = _symbol(options.get("to"))
        if path is None and string_keys:  # get "/health" => "health#show"
            path, value = next(iter(string_keys.items()))
            target = _symbol(value)
        if path is None:
            return
        if target is None and "action" in options:
            controller = _symbol(options.get("controller")) or scope.controller
            target = f"{controller}#{_symbol(options['action'])}" if controller else None
        if target is None and scope.controller and not path.startswith("/"):
            target = f"{scope.controller}#{path}"  # inside `resources :bookings do member do post :extend`
        if target is None and "#" not in path:
            target = f"{scope.controller or path.strip('/').split('/')[0]}#{path.strip('/').split('/')[-1]}"
        full = path if path.startswith("/") and not scope.path else f"{scope.path}/{path.lstrip('/')}"
        methods = [_ROUTE_VERBS[verb]] if verb in _ROUTE_VERBS else self.via(options.get("via"))
        for method in methods:
            self.add(method, full, target or "", scope, line)

    @staticmethod
    def via(node: ts.Node | None) -> list[str]:
        names = _Routes.action_list(node) or ["all"]
        return ["ANY" if n == "all" else n.upper() for n in names]

    def add(self, method: str, path: str, target: str, scope: _RouteScope, line: int) -> None:
        # optional segments (`(.:format)`) left out
        path = re.sub(r"/+", "/", path.split("(", maxsplit=1)[0]) or "/"
        handlers: list[Value] = []
        if "#" in target:
            controller, action = target.split("#", 1)
            parts = (
                [*scope.modules, *[p for p in controller.split("/") if p]]
                if not controller.startswith("/")
                else []
            )
            if parts:
                constant = "::".join(_camel(p) for p in parts) + "Controller"
                qual = constant.replace("::", ".")
                stem = "app/controllers/" + "/".join(parts) + "_controller"
                self.module.import_refs.setdefault(constant, [ImportRef(stem, qual)])
                handlers.append(Value("ref", line, chain=(constant, action)))
        self.module.routes.append(Route(method, path, line, handlers))


def _is_draw(node: ts.Node) -> bool:
    """``Rails.application.routes.draw do``: the call whose block declares the routes."""
    method = node.child_by_field_name("method")
    receiver = node.child_by_field_name("receiver")
    return (
        method is not None
        and _text(method) == "draw"
        and receiver is not None
        and _text(receiver).endswith("routes")
        and node.child_by_field_name("block") is not None
    )


def _draw_calls(node: ts.Node) -> Iterator[ts.Node]:
    for child in node.named_children:
        if child.type == "call" and _is_draw(child):
            yield child
        elif child.type in ("program", "body_statement"):
            yield from _draw_calls(child)


def parse(source: bytes, path: str) -> Module:
    """The file's outline (tree-sitter reads any text, broken or not). Raises ``bounds.Unparsable`` for a file
    beyond the parsers' bounds."""
    bounds.check_size(path, len(source))
    with bounds.parsing(path), bounds.deep_recursion(20000):  # the walk recurses once per syntax level
        tree = _parser().parse(source)
        outliner = _Outliner(path, len(source))
        outliner.visit(tree.root_node)
        outliner.finish()
        routes = _Routes(outliner)
        for draw in _draw_calls(tree.root_node):
            block = draw.child_by_field_name("block")
            if block is not None:
                routes.draw(block)
    return outliner.module
