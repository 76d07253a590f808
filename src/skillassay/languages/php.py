"""PHP (Laravel apps among them), read with the tree-sitter grammar from PyPI (``tree-sitter-php``).

Calls are chains without the ``$``: ``$this->seam->access_codes->create(device_id: $id)`` is
``("this", "seam", "access_codes", "create")`` with the named argument ``device_id`` as a keyword argument
(the SDK ``seamapi/seam`` shares the Python SDK's names: ``sdk="python"``); ``$this`` resolves through the
enclosing class as JavaScript's ``this`` does, ``self::``/``static::`` as ``self`` and ``parent::`` as
``super``. ``new Foo(...)`` is ``("new", "Foo")``, a static call ``Http::post(...)`` is ``("Http", "post")``
and a call inside a chain keeps its name with ``()`` (``Http::withToken($t)->post(...)`` ->
``("Http", "withToken()", "post")``). Arrays with string keys (``['device_id' => $id]``) are objects, the rest
arrays; ``...$spread`` is a spread. A constructor's promoted parameters (``__construct(private SeamClient
$seam)``) are ``this.seam``.

``use Foo\\Bar;`` imports ``Bar`` from ``foo/bar`` (lower-cased, ``/``-separated: ``GuzzleHttp\\Client`` is
``guzzlehttp/client``, the HTTP clients the rubric knows); a class of the app's own namespace (``App\\...``)
is found in the file PSR-4 names (``App\\Services\\Booking`` -> ``app/Services/Booking.php``).

Laravel's routes (``routes/*.php``: ``Route::post('/x', [C::class, 'store'])``, ``'C@store'``, closures,
``Route::prefix('x')->group(...)``, ``Route::group(['prefix' => 'x'], ...)``, ``Route::controller(C::class)``,
``Route::resource``/``apiResource`` with ``only``/``except``) become ``Route``s whose handlers name the
controller's method; ``routes/api.php`` is served under ``/api`` (Laravel's ``RouteServiceProvider``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import tree_sitter as ts

from skillassay.languages import bounds
from skillassay.languages.base import Call, ClassInfo, Function, ImportRef, Module, Route, Span, Value
from skillassay.languages.syntax_tree import ThreadParsers, grammar
from skillassay.languages.syntax_tree import line as _line
from skillassay.languages.syntax_tree import span as _span
from skillassay.languages.syntax_tree import text as _text

SDK_LABEL = "PHP SDK (seamapi/seam)"
# Laravel's class aliases (config/app.php): usable without a `use`
_ALIASES = {"Http": "illuminate/support/facades/http", "Route": "illuminate/support/facades/route"}
# calls whose value is their first argument's, as far as the checks care: a body serialised, a URL trimmed
_PASS_THROUGH = {"json_encode", "strval", "trim", "rtrim", "urlencode", "collect"}
_COMPARE = {"==", "===", "!=", "!==", "<>"}
_LIST_TESTS = {"in_array", "str_starts_with", "str_contains", "str_ends_with", "array_key_exists"}
_TERMINAL_STATEMENTS = {"return_statement", "break_statement", "continue_statement", "exit_statement"}
_FUNCTIONS = {"anonymous_function", "arrow_function"}
_CLASS_TYPES = {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}
_ROUTE_VERBS = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE"}
_ROUTE_VERBS |= {"options": "OPTIONS", "any": "ANY"}
# Route::resource's actions -> (method, path after the collection)
_RESOURCE_ACTIONS = {
    "index": ("GET", ""),
    "create": ("GET", "/create"),
    "store": ("POST", ""),
    "show": ("GET", "/{id}"),
    "edit": ("GET", "/{id}/edit"),
    "update": ("PUT", "/{id}"),
    "destroy": ("DELETE", "/{id}"),
}
_API_ACTIONS = ("index", "store", "show", "update", "destroy")
# routes/<file>.php -> the prefix Laravel's RouteServiceProvider serves it under
_ROUTE_FILES = {"routes/api.php": "/api", "routes/web.php": ""}


@functools.cache
def _language() -> ts.Language:
    return grammar("tree_sitter_php", "language_php")


_parser = ThreadParsers(_language).get


def _string(node: ts.Node | None) -> str | None:
    """A string literal without interpolation (single- or double-quoted)."""
    if node is None or node.type not in ("string", "encapsed_string"):
        return None
    parts = node.named_children
    if any(p.type not in ("string_content", "escape_sequence") for p in parts):
        return None
    return "".join(_unescape(_text(p)) if p.type == "escape_sequence" else _text(p) for p in parts)


def _unescape(text: str) -> str:
    return {"\\\\": "\\", "\\'": "'", '\\"': '"', "\\$": "$", "\\n": "\n", "\\t": "\t"}.get(text, text)


def _class_name(node: ts.Node | None) -> str | None:
    """``Foo``, ``\\App\\Foo``, ``App\\Foo`` as written (the leading ``\\`` dropped)."""
    if node is None or node.type not in ("name", "qualified_name"):
        return None
    return _text(node).lstrip("\\")


def _fqn_source(fqn: str) -> str:
    """``GuzzleHttp\\Client`` -> ``guzzlehttp/client``: how ``Module.imports`` spells where a name comes
    from."""
    return fqn.strip("\\").replace("\\", "/").lower()


def psr4_ref(fqn: str) -> ImportRef:
    """Where Composer's PSR-4 autoloading finds a class: ``App\\Http\\Controllers\\X`` ->
    ``app/Http/Controllers/X`` (the app's namespace ``App\\`` is ``app/``); another root namespace is matched
    by its path under any folder."""
    parts = [p for p in fqn.strip("\\").split("\\") if p]
    if parts and parts[0] == "App":
        return ImportRef("/".join(["app", *parts[1:]]), parts[-1])
    return ImportRef("/".join(parts[1:] or parts), parts[-1] if parts else None, fuzzy=True)


def _truth(node: ts.Node | None) -> bool | None:
    """The value a condition always has (literals, ``!``, ``&&``/``||``), or None."""
    if node is None:
        return None
    kind = node.type
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _truth(node.named_children[0])
    if kind == "boolean":
        return _text(node).lower() == "true"
    if kind == "null":
        return False
    if kind == "integer":
        return _text(node) != "0"
    if kind == "unary_op_expression" and node.child_count == 2 and _text(node.children[0]) == "!":
        inner = _truth(node.named_children[0])
        return None if inner is None else not inner
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        operator = _text(op).lower() if op is not None else ""
        left, right = _truth(node.child_by_field_name("left")), _truth(node.child_by_field_name("right"))
        if operator in ("&&", "and"):
            return False if False in (left, right) else (True if left is right is True else None)
        if operator in ("||", "or"):
            return True if True in (left, right) else (False if left is right is False else None)
    return None


@dataclass
class _Scope:
    """A function being read (None: the file's top level) and the names it binds."""

    index: int | None
    locals: set[str] = field(default_factory=set)


class _Outliner:
    def __init__(self, path: str, size: int):
        self.module = Module(
            path=path, language="php", sdk="python", sdk_label=SDK_LABEL, size=size, references_complete=True
        )
        self.scopes: list[_Scope] = [_Scope(None)]
        self.classes: list[str] = []
        self.namespace = ""
        self.dead = 0
        self.stmts: list[tuple[ts.Node, str]] = []
        self.private: set[tuple[str, str]] = set()
        self.constants: dict[str, str] = {}  # a variable or class constant bound to one string

    # ------------------------------------------------------------------ scopes
    @property
    def scope(self) -> int | None:
        return self.scopes[-1].index

    @property
    def cls(self) -> str | None:
        return self.classes[-1] if self.classes else None

    def _bind(self, name: str, value: Value) -> None:
        self.module.bind(self.scope, name, value)

    def _decision(self, text: str, line: int) -> None:
        self.module.decide(self.scope, text, line)

    def _name_read(self, name: str) -> None:
        if self.dead:
            return
        target = self.module.names if self.scope is None else self.module.functions[self.scope].names
        target.add(name)

    def _import(self, local: str, fqn: str) -> None:
        """``use <fqn> as <local>``: a library's class, or one of the app's (also found in its file)."""
        source = _fqn_source(fqn)
        self.module.imports.setdefault(local, source)
        if source not in self.module.import_sources:
            self.module.import_sources.append(source)
        if fqn.strip("\\").startswith("App\\"):
            self.module.import_refs.setdefault(local, [psr4_ref(fqn)])

    def class_ref(self, written: str) -> str:
        """The local name a class is called by: ``\\GuzzleHttp\\Client`` written in full is imported as
        ``Client``; a Laravel alias (``Http``) is imported from its facade."""
        if "\\" in written:
            local = written.rsplit("\\", 1)[-1]
            if local not in self.module.imports:
                self._import(local, written)
            return local
        if written in _ALIASES and written not in self.module.imports and written not in self.module.classes:
            self.module.imports[written] = _ALIASES[written]
            self.module.import_sources.append(_ALIASES[written])
        return written

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
        for child in node.named_children:
            self.visit(child)

    def block(self, nodes: list[ts.Node]) -> None:
        """Statements in order; those after a ``return``/``throw``/``exit`` in the same block never run."""
        ended = False
        for child in nodes:
            if child.type in ("comment", "text", "php_tag", "text_interpolation"):
                continue
            self.stmts.append((child, self._stmt_kind(child)))
            try:
                if ended and child.type not in ("function_definition", *_CLASS_TYPES):
                    self.visit_dead(child)
                else:
                    self.visit(child)
            finally:
                self.stmts.pop()
            ended = ended or self._terminates(child)

    def visit_program(self, node: ts.Node) -> None:
        self.block(node.named_children)

    def visit_compound_statement(self, node: ts.Node) -> None:
        self.block(node.named_children)

    @staticmethod
    def _stmt_kind(node: ts.Node) -> str:
        if node.type == "return_statement":
            return "return"
        if node.type == "expression_statement" and node.named_children:
            inner = node.named_children[0]
            if inner.type in ("assignment_expression", "augmented_assignment_expression"):
                return "declaration"
            if inner.type.endswith("call_expression") or inner.type == "object_creation_expression":
                return "expression"
        return "other"

    @staticmethod
    def _terminates(node: ts.Node) -> bool:
        if node.type in _TERMINAL_STATEMENTS:
            return True
        if node.type == "expression_statement" and node.named_children:
            inner = node.named_children[0]
            return inner.type in ("throw_expression", "exit_statement")
        return False

    def visit_dead(self, node: ts.Node) -> None:
        self.dead += 1
        try:
            self.visit(node)
        finally:
            self.dead -= 1

    def _branch(self, node: ts.Node | None, runs: bool) -> None:
        if node is None:
            return
        if runs:
            self.visit(node)
        else:
            self.visit_dead(node)

    # ------------------------------------------------------------------ control flow
    def visit_if_statement(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition)
        self._branch(node.child_by_field_name("body"), truth is not False)
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "alternative":
                if truth is True:
                    self.visit_dead(child)
                elif child.type == "else_if_clause":
                    self.visit_if_statement(child)
                else:
                    self.visit(child)
                if child.type == "else_if_clause" and _truth(child.child_by_field_name("condition")) is True:
                    truth = True  # the clauses after an `elseif (true)` never run

    visit_else_if_clause = visit_if_statement

    def visit_while_statement(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        self._branch(node.child_by_field_name("body"), _truth(condition) is not False)

    def visit_conditional_expression(self, node: ts.Node) -> None:
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.visit(condition)
        truth = _truth(condition)
        self._branch(node.child_by_field_name("body"), truth is not False)
        self._branch(node.child_by_field_name("alternative"), truth is not True)

    def visit_binary_expression(self, node: ts.Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        operator = _text(op).lower() if op is not None else ""
        if left is not None:
            self.visit(left)
        skipped = (operator in ("&&", "and") and _truth(left) is False) or (
            operator in ("||", "or") and _truth(left) is True
        )
        self._branch(right, not skipped)
        if operator in _COMPARE:
            for side in (left, right):
                if side is not None and (text := _string(side)) is not None:
                    self._decision(text, _line(side))

    def visit_case_statement(self, node: ts.Node) -> None:
        value = node.child_by_field_name("value")
        if value is not None and (text := _string(value)) is not None:
            self._decision(text, _line(value))
        self.block(node.named_children)

    def visit_match_condition_list(self, node: ts.Node) -> None:
        for child in node.named_children:
            if (text := _string(child)) is not None:
                self._decision(text, _line(child))
        self.children(node)

    # ------------------------------------------------------------------ declarations
    def visit_namespace_definition(self, node: ts.Node) -> None:
        name = node.child_by_field_name("name")
        self.namespace = _text(name) if name is not None else ""
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body)

    def visit_namespace_use_declaration(self, node: ts.Node) -> None:
        group = node.child_by_field_name("body")
        prefix = next((c for c in node.named_children if c.type == "namespace_name"), None)
        clauses = group.named_children if group is not None else node.named_children
        for clause in clauses:
            if clause.type != "namespace_use_clause":
                continue
            target = next((c for c in clause.named_children if c.type in ("name", "qualified_name")), None)
            if target is None:
                continue
            fqn = _text(target).lstrip("\\")
            if group is not None and prefix is not None:
                fqn = f"{_text(prefix)}\\{fqn}"
            alias = clause.child_by_field_name("alias")
            self._import(_text(alias) if alias is not None else fqn.rsplit("\\", 1)[-1], fqn)

    def visit_class_declaration(self, node: ts.Node) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        qual = _text(name_node)
        bases: list[tuple[str, ...]] = []
        for child in node.named_children:
            if child.type == "base_clause":
                bases.extend((self.class_ref(n),) for c in child.named_children if (n := _class_name(c)))
        info = ClassInfo(qual, _line(node), bases=bases, span=_span(node))
        if self.dead == 0:
            self.module.classes.setdefault(qual, info)
        if self.namespace and qual not in self.module.import_refs and self.namespace.startswith("App"):
            self.module.import_refs.setdefault(qual, [psr4_ref(f"{self.namespace}\\{qual}")])
        body = node.child_by_field_name("body")
        self.classes.append(qual)
        self.scopes.append(_Scope(self.scope))
        try:
            for child in body.named_children if body is not None else []:
                self._member(child, qual, info)
        finally:
            self.scopes.pop()
            self.classes.pop()

    visit_interface_declaration = visit_class_declaration
    visit_trait_declaration = visit_class_declaration
    visit_enum_declaration = visit_class_declaration

    def _member(self, child: ts.Node, qual: str, info: ClassInfo) -> None:
        """One declaration of a class body: a method, a property, a constant, a trait it uses."""
        if child.type == "use_declaration":  # `use Notifies;`: the trait's methods are the class's
            info.bases.extend((self.class_ref(n),) for c in child.named_children if (n := _class_name(c)))
            return
        if child.type in ("property_declaration", "const_declaration"):
            for element in child.named_children:
                if element.type not in ("property_element", "const_element"):
                    continue
                named = [c for c in element.named_children if c.type in ("variable_name", "name")]
                default = element.child_by_field_name("default_value")
                if default is None:
                    rest = [c for c in element.named_children if c not in named]
                    default = rest[0] if rest else None
                if named and default is not None:
                    key = _text(named[0]).lstrip("$")
                    self.visit(default)
                    value = self.value(default)
                    info.fields.setdefault(key, []).append(value)
                    if value.kind == "str" and child.type == "const_declaration":
                        self.constants.setdefault(f"{qual}::{key}", value.text)
            return
        if child.type == "method_declaration":
            name_node = child.child_by_field_name("name")
            name = _text(name_node) if name_node is not None else None
            self.stmts.append((child, "other"))
            try:
                self._function(child, name, qual)
            finally:
                self.stmts.pop()
            modifiers = {_text(c) for c in child.children if c.type == "visibility_modifier"}
            if name and modifiers & {"private", "protected"}:
                self.private.add((qual, name))
            return
        self.visit(child)

    def visit_const_declaration(self, node: ts.Node) -> None:
        """A namespace's ``const BASE = '...';`` (a class's constants are its members): a module binding."""
        for element in node.named_children:
            parts = element.named_children if element.type == "const_element" else []
            if len(parts) == 2 and parts[0].type == "name":
                self.visit(parts[1])
                self._constant(_text(parts[0]), self.value(parts[1]))

    def _constant(self, name: str, value: Value) -> None:
        """A global constant (``const``, ``define``): the file's, wherever it is declared."""
        self.module.bind(None, name, value)
        if value.kind == "str":
            self.constants.setdefault(name, value.text)

    def visit_function_definition(self, node: ts.Node) -> None:
        name_node = node.child_by_field_name("name")
        self._function(node, _text(name_node) if name_node is not None else None, None)

    def _function(self, node: ts.Node, name: str | None, cls: str | None) -> int:
        params_node = node.child_by_field_name("parameters")
        for param in params_node.named_children if params_node is not None else []:
            default = param.child_by_field_name("default_value")
            if default is not None:
                self.visit(default)
        index = self._enter(name, node, cls)
        fn = self.module.functions[index]
        scope = _Scope(index)
        promoted: list[str] = []
        for param in params_node.named_children if params_node is not None else []:
            var = param.child_by_field_name("name")
            if var is None:
                continue
            pname = _text(var).lstrip("$&")
            scope.locals.add(pname)
            fn.params.append(pname)
            type_name = self._type(param.child_by_field_name("type"))
            if type_name:
                fn.param_types[pname] = (type_name,)
            if param.type == "property_promotion_parameter":
                promoted.append(pname)
        for clause in node.named_children:
            if clause.type == "anonymous_function_use_clause":  # function () use ($seam): the outer's value
                for var in clause.named_children:
                    scope.locals.add(_text(var).lstrip("$&"))
        self.scopes.append(scope)
        try:
            for pname in promoted:  # __construct(private SeamClient $seam): $this->seam = $seam
                self._bind(f"this.{pname}", Value("ref", fn.start_line, chain=(pname,)))
            body = node.child_by_field_name("body")
            if body is not None and node.type == "arrow_function":
                self.visit(body)
                fn.returns.append(self.value(body))
            elif body is not None:
                self.visit(body)
        finally:
            self.scopes.pop()
        return index

    def _type(self, node: ts.Node | None) -> str | None:
        """The class a parameter's type names (``SeamClient``, ``?SeamClient``), or None."""
        if node is None:
            return None
        if node.type in ("optional_type", "named_type") and node.named_children:
            return self._type(node.named_children[0])
        name = _class_name(node)
        return self.class_ref(name) if name else None

    def _closure(self, node: ts.Node) -> int:
        return self._function(node, None, None)

    visit_anonymous_function = _closure
    visit_arrow_function = _closure

    # ------------------------------------------------------------------ statements
    def visit_assignment_expression(self, node: ts.Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        named = left is not None and left.type == "variable_name"
        if right is not None and left is not None and named and right.type in _FUNCTIONS:
            # a closure bound to a local: a function of that name, run where `$name()` is called or handed on,
            # not where it is written
            fn = self.module.functions[self._closure(right)]
            fn.name = fn.qualname = _text(left).lstrip("$")
        elif right is not None:
            self.visit(right)
        if left is None or right is None:
            return
        if left.type not in ("variable_name", "member_access_expression"):
            self.visit(left)
        self._assign(left, self.value(right), _line(node))

    visit_augmented_assignment_expression = visit_assignment_expression

    def _assign(self, left: ts.Node, value: Value, line: int) -> None:
        if left.type == "variable_name":
            name = _text(left).lstrip("$")
            self.scopes[-1].locals.add(name)
            self._bind(name, value)
            if value.kind == "str":
                self.constants[name] = value.text
        elif left.type == "member_access_expression":
            obj, prop = left.child_by_field_name("object"), left.child_by_field_name("name")
            if obj is not None and prop is not None and obj.type == "variable_name":
                owner = _text(obj).lstrip("$")
                self._bind(f"{owner}.{_text(prop)}", value)
        elif left.type == "subscript_expression":  # $payload['reservations'] = [...]
            obj = left.named_children[0] if left.named_children else None
            index = left.named_children[1] if left.named_children and len(left.named_children) > 1 else None
            key = _string(index)
            if obj is not None and obj.type == "variable_name" and key is not None:
                self._bind(_text(obj).lstrip("$"), Value("object", line, keys={key: value}))

    def visit_return_statement(self, node: ts.Node) -> None:
        self.children(node)
        if self.scope is not None and node.named_children:
            self.module.functions[self.scope].returns.append(self.value(node.named_children[0]))

    def visit_variable_name(self, node: ts.Node) -> None:
        self._name_read(_text(node).lstrip("$"))

    def visit_name(self, node: ts.Node) -> None:
        self._name_read(_text(node))

    def visit_class_constant_access_expression(self, node: ts.Node) -> None:
        first = node.named_children[0] if node.named_children else None
        name = _class_name(first)
        if name is not None:
            self._name_read(self.class_ref(name))
        elif first is not None:
            self.visit(first)

    def visit_array_creation_expression(self, node: ts.Node) -> None:
        self.children(node)
        for element in node.named_children:
            parts = element.named_children
            if (
                element.type == "array_element_initializer"
                and len(parts) == 2
                and (text := _string(parts[0])) is not None
            ):
                self._decision(text, _line(parts[0]))  # a dispatch table's key

    # ------------------------------------------------------------------ calls
    def chain(self, node: ts.Node | None) -> tuple[str, ...]:
        """The callee chain of an expression; () when it is not a plain chain."""
        if node is None:
            return ()
        kind = node.type
        if kind == "variable_name":
            return (_text(node).lstrip("$"),)
        if kind in ("name", "qualified_name"):
            return (self.class_ref(_text(node).lstrip("\\")),)
        if kind == "relative_scope":
            return ("super",) if _text(node).lower() == "parent" else ("self",)
        if kind in ("member_access_expression", "nullsafe_member_access_expression"):
            inner = self.chain(node.child_by_field_name("object"))
            name = self._member_name(node.child_by_field_name("name"))
            return (*inner, name) if inner else ()
        if kind in ("scoped_property_access_expression", "class_constant_access_expression"):
            parts = node.named_children
            scope = node.child_by_field_name("scope") or (parts[0] if parts else None)
            member = node.child_by_field_name("name") or (parts[1] if len(parts) > 1 else None)
            inner = self.chain(scope)
            return (*inner, _text(member).lstrip("$")) if inner and member is not None else ()
        if kind == "subscript_expression":
            parts = node.named_children
            inner = self.chain(parts[0]) if parts else ()
            key = _string(parts[1]) if len(parts) > 1 else None
            return (*inner, key if key is not None else "[]") if inner else ()
        if kind in ("member_call_expression", "nullsafe_member_call_expression", "scoped_call_expression"):
            inner = self.call_chain(node)
            return (*inner[:-1], inner[-1] + "()") if inner else ()
        if kind == "function_call_expression":
            inner = self.call_chain(node)
            return (*inner[:-1], inner[-1] + "()") if inner else ()
        if kind == "object_creation_expression":  # (new Client())->post(): what the constructor makes
            inner = self.call_chain(node)
            return (f"{inner[1]}()",) if len(inner) == 2 else ()
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.chain(node.named_children[0])
        return ()

    def _member_name(self, node: ts.Node | None) -> str:
        """A method or property name: as written, or the one string a variable holds (``$obj->$op()``)."""
        if node is None:
            return "[]"
        if node.type == "name":
            return _text(node)
        if node.type == "variable_name":
            return self.constants.get(_text(node).lstrip("$"), "[]")
        return "[]"

    def call_chain(self, node: ts.Node) -> tuple[str, ...]:
        """The callee of a call expression: ``("this", "seam", "customers", "push_data")``."""
        kind = node.type
        if kind == "function_call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type in ("name", "qualified_name"):
                return (_text(fn).lstrip("\\").rsplit("\\", 1)[-1],)
            return self.chain(fn)
        if kind == "object_creation_expression":
            cls = next((c for c in node.named_children if c.type in ("name", "qualified_name")), None)
            name = _class_name(cls)
            return ("new", self.class_ref(name)) if name else ()
        if kind == "scoped_call_expression":
            scope = self.chain(node.child_by_field_name("scope"))
            if not scope:
                return ()
            return (*scope, self._member_name(node.child_by_field_name("name")))
        inner = self.chain(node.child_by_field_name("object"))
        return (*inner, self._member_name(node.child_by_field_name("name"))) if inner else ()

    def _arguments(self, node: ts.Node | None) -> tuple[list[Value], dict[str, Value], list[Value], dict]:
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        spreads: list[Value] = []
        spans: dict[str, Span] = {}
        for child in node.named_children if node is not None else []:
            if child.type == "argument" and [c.type for c in child.named_children] == ["variadic_unpacking"]:
                child = child.named_children[0]  # f(...$payload): its string keys are named arguments
            if child.type == "variadic_unpacking":
                inner = child.named_children[-1] if child.named_children else None
                if inner is not None:
                    spreads.append(self.value(inner))
                continue
            if child.type != "argument":
                continue
            name = child.child_by_field_name("name")
            values = [c for c in child.named_children if c != name]
            if not values:
                continue
            if name is not None:
                kwargs[_text(name)] = self.value(values[-1])
                spans[_text(name)] = _span(child)
            elif _text(child).startswith("..."):
                spreads.append(self.value(values[-1]))
            else:
                args.append(self.value(values[-1]))
        return args, kwargs, spreads, spans

    def _visit_call(self, node: ts.Node) -> None:
        for child in node.named_children:
            if child.type != "arguments":
                self.visit(child)
        arguments = node.child_by_field_name("arguments") or next(
            (c for c in node.named_children if c.type == "arguments"), None
        )
        if arguments is not None:
            self.visit(arguments)
        chain = self.call_chain(node)
        if not chain:
            return
        args, kwargs, spreads, spans = self._arguments(arguments)
        callee = node.child_by_field_name("name") or node.child_by_field_name("function")
        stmt = self.stmts[-1] if self.stmts else None
        statement = stmt[0] if stmt else None
        alone = statement is not None and statement.named_children and statement.named_children[0] == node
        call = Call(
            chain=chain,
            line=_line(node),
            args=args,
            kwargs=kwargs,
            kw_spreads=spreads,
            scope=self.scope,
            dead=self.dead > 0,
            span=_span(node),
            callee_span=(node.start_byte, (callee or node).end_byte),
            stmt=_span(statement) if statement is not None else None,
            stmt_kind=(stmt[1] if alone or (stmt and stmt[1] in ("declaration", "return")) else "other")
            if stmt
            else "",
            kw_spans=spans,
        )
        self.module.calls.append(call)
        if chain == ("define",) and len(args) == 2 and args[0].kind == "str" and not self.dead:
            self._constant(args[0].text, args[1])  # define('SEAM_URL', 'https://...')
        if chain[-1] in _LIST_TESTS and len(chain) == 1:
            self._list_decisions(arguments)

    visit_function_call_expression = _visit_call
    visit_member_call_expression = _visit_call
    visit_nullsafe_member_call_expression = _visit_call
    visit_scoped_call_expression = _visit_call
    visit_object_creation_expression = _visit_call

    def _list_decisions(self, arguments: ts.Node | None) -> None:
        """``in_array($type, ['a', 'b'])``, ``str_starts_with($type, 'access_code.')``."""
        for arg in arguments.named_children if arguments is not None else []:
            for child in arg.named_children:
                if (text := _string(child)) is not None:
                    self._decision(text, _line(child))
                elif child.type == "array_creation_expression":
                    for element in child.named_children:
                        for item in element.named_children:
                            if (text := _string(item)) is not None:
                                self._decision(text, _line(item))

    # ------------------------------------------------------------------ values
    def value(self, node: ts.Node) -> Value:
        out = self._value(node)
        if out.span is None:
            out.span = _span(node)
        return out

    def _value(self, node: ts.Node) -> Value:
        line = _line(node)
        kind = node.type
        if (text := _string(node)) is not None:
            return Value("str", line, text=text)
        if kind in ("encapsed_string", "heredoc", "nowdoc"):
            return self._template(node)
        if kind == "array_creation_expression":
            return self._array(node)
        if kind == "null":
            return Value("null", line)
        if kind in (
            "variable_name",
            "member_access_expression",
            "nullsafe_member_access_expression",
            "subscript_expression",
            "scoped_property_access_expression",
            "name",
            "qualified_name",
        ):
            chain = self.chain(node)
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if kind == "class_constant_access_expression":
            chain = self.chain(node)
            if len(chain) == 2 and (constant := self.constants.get(f"{chain[0]}::{chain[1]}")) is not None:
                return Value("str", line, text=constant)
            return Value("ref", line, chain=chain) if chain else Value("other", line)
        if kind in _FUNCTIONS:
            index = next((i for i, f in enumerate(self.module.functions) if f.span == _span(node)), None)
            return Value("func", line, func=index)
        if kind in (
            "function_call_expression",
            "member_call_expression",
            "nullsafe_member_call_expression",
            "scoped_call_expression",
            "object_creation_expression",
        ):
            return self._call_value(node)
        if kind in ("parenthesized_expression", "cast_expression") and node.named_children:
            return self.value(node.named_children[-1])
        if kind == "binary_expression":
            return self._binary(node)
        if kind in ("assignment_expression", "augmented_assignment_expression"):  # `$a ??= new Client()`
            right = node.child_by_field_name("right")
            return self.value(right) if right is not None else Value("other", line)
        return Value("other", line)

    def _template(self, node: ts.Node) -> Value:
        parts: list[Value] = []
        body = next((c for c in node.named_children if c.type == "heredoc_body"), node)
        for child in body.named_children:
            if child.type in ("string_content", "string_value"):
                parts.append(Value("str", _line(child), text=_text(child)))
            elif child.type == "escape_sequence":
                parts.append(Value("str", _line(child), text=_unescape(_text(child))))
            elif child.type in ("heredoc_start", "heredoc_end"):
                continue
            else:
                parts.append(self.value(child))
        if all(p.kind == "str" for p in parts):
            return Value("str", _line(node), text="".join(p.text for p in parts))
        return Value("template", _line(node), items=parts)

    def _array(self, node: ts.Node) -> Value:
        keyed = Value("object", _line(node))
        items: list[Value] = []
        for element in node.named_children:
            if element.type != "array_element_initializer":
                continue
            parts = element.named_children
            if len(parts) == 1 and parts[0].type == "variadic_unpacking":
                inner = parts[0].named_children
                if inner:
                    keyed.spreads.append(self.value(inner[0]))
            elif len(parts) == 2 and (key := _string(parts[0]) or _text(parts[0])) is not None:
                keyed.keys[key] = self.value(parts[1])
                keyed.key_spans[key] = _span(element)
            elif len(parts) == 1:
                items.append(self.value(parts[0]))
        if keyed.keys or (keyed.spreads and not items):
            return keyed
        if len(items) == 2 and items[1].kind == "str" and self._callable_pair(items[0]):
            # [$this, 'push'] / [Service::class, 'push']: a callable naming a method
            head = items[0].chain[:-1] if items[0].chain[-1:] == ("class",) else items[0].chain
            return Value("ref", _line(node), chain=(*head, items[1].text))
        return Value("array", _line(node), items=items, spreads=keyed.spreads)

    @staticmethod
    def _callable_pair(first: Value) -> bool:
        return (
            first.kind == "ref"
            and bool(first.chain)
            and (len(first.chain) == 1 or first.chain[-1] == "class")
        )

    def _binary(self, node: ts.Node) -> Value:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        operator = _text(op) if op is not None else ""
        if left is None or right is None:
            return Value("other", _line(node))
        if operator == ".":  # $base . '/access_codes/create'
            items = []
            for side in (left, right):
                value = self.value(side)
                items.extend(value.items if value.kind == "template" else [value])
            return Value("template", _line(node), items=items)
        if operator in ("??", "?:", "||", "or"):
            return self.value(left)
        return Value("other", _line(node))

    def _call_value(self, node: ts.Node) -> Value:
        line = _line(node)
        arguments = node.child_by_field_name("arguments") or next(
            (c for c in node.named_children if c.type == "arguments"), None
        )
        args, kwargs, spreads, _spans = self._arguments(arguments)
        chain = self.call_chain(node)
        if not chain:
            return Value("other", line)
        if len(chain) == 1 and chain[0] in _PASS_THROUGH and args:
            return args[0]
        if chain == ("array_merge",) and args:  # array_merge($base, ['k' => v])
            return Value("object", line, spreads=args)
        if len(chain) == 1 and chain[0] in ("app", "resolve") and args and args[0].kind == "ref":
            target = args[0].chain  # app(Service::class): the container makes one
            if len(target) == 2 and target[1] == "class":
                return Value("call", line, chain=("new", target[0]))
        value = Value("call", line, chain=chain, args=args + list(kwargs.values()))
        if kwargs and not args:  # build(device_id: $id): the named arguments, as one options array
            value.args = [Value("object", line, keys=dict(kwargs), spreads=spreads)]
        return value

    # ------------------------------------------------------------------ after the walk
    def finish(self) -> None:
        """Which functions may be called from elsewhere: a top-level function, a public method (another file
        may hold an instance); a controller's action runs when a route names it, and only then."""
        for name, info in self.module.classes.items():
            info.routed = self._controller(name)
        for fn in self.module.functions:
            if fn.name is None or fn.dead:
                continue
            if fn.cls is None:
                fn.exported = fn.parent is None
            elif (fn.cls, fn.name) not in self.private and not self._controller(fn.cls):
                fn.exported = True

    def _controller(self, cls: str) -> bool:
        """A Laravel controller (``app/Http/Controllers/**``): the router calls its actions."""
        return self.module.path.startswith("app/Http/Controllers/") and cls.endswith("Controller")


# ---------------------------------------------------------------------- Laravel routes
@dataclass
class _RouteScope:
    """Where a group of routes is: its path prefix and the controller ``Route::controller`` names."""

    prefix: str = ""
    controller: str | None = None


class _Routes:
    """The routes a Laravel routes file declares through the ``Route`` facade."""

    def __init__(self, outliner: _Outliner):
        self.o = outliner
        self.module = outliner.module

    def statements(self, nodes: list[ts.Node], scope: _RouteScope) -> None:
        for node in nodes:
            if node.type == "expression_statement" and node.named_children:
                self.statement(node.named_children[0], scope)

    def steps(self, node: ts.Node) -> list[tuple[str, list[ts.Node]]] | None:
        """``Route::prefix('x')->middleware('y')->group(...)`` -> [("prefix", args), ("middleware", args),
        ("group", args)]; None for an expression that does not start at ``Route::``."""
        out: list[tuple[str, list[ts.Node]]] = []
        while node.type in ("member_call_expression", "scoped_call_expression"):
            name = node.child_by_field_name("name")
            arguments = node.child_by_field_name("arguments")
            values = [
                a.named_children[-1]
                for a in (arguments.named_children if arguments is not None else [])
                if a.type == "argument" and a.named_children
            ]
            out.append((_text(name) if name is not None else "", values))
            if node.type == "scoped_call_expression":
                scope = node.child_by_field_name("scope")
                if scope is None or _text(scope).lstrip("\\").rsplit("\\", 1)[-1] != "Route":
                    return None
                return out[::-1]
            node = node.child_by_field_name("object") or node
        return None

    def statement(self, node: ts.Node, scope: _RouteScope) -> None:
        steps = self.steps(node)
        if not steps:
            return
        prefix, controller = scope.prefix, scope.controller
        for name, args in steps:
            if name == "prefix" and args and (text := _string(args[0])) is not None:
                prefix = self.join(prefix, text)
            elif name == "controller" and args and self.controller_of(args[0]):
                controller = self.controller_of(args[0])
            elif name == "group" and args:
                options = self.o.value(args[0]) if len(args) > 1 else None
                if options is not None and options.kind == "object":
                    given = options.keys.get("prefix")
                    if given is not None and given.kind == "str":
                        prefix = self.join(prefix, given.text)
                body = args[-1]
                if body.type in _FUNCTIONS:
                    block = body.child_by_field_name("body")
                    if block is not None:
                        self.statements(block.named_children, _RouteScope(prefix, controller))
                return
        line = _line(node)
        for index, (name, args) in enumerate(steps):
            if name in _ROUTE_VERBS and args:
                self.verb([_ROUTE_VERBS[name]], args, prefix, controller, line)
                return
            if name == "match" and len(args) >= 2:
                methods = [v.text.upper() for v in self.o.value(args[0]).items if v.kind == "str"]
                self.verb(methods, args[1:], prefix, controller, line)
                return
            if name in ("resource", "apiResource") and len(args) >= 2:
                self.resource(name, args, steps[index + 1 :], prefix, line)
                return

    @staticmethod
    def join(prefix: str, path: str) -> str:
        return f"{prefix.rstrip('/')}/{path.strip('/')}".rstrip("/")

    def controller_of(self, node: ts.Node) -> str | None:
        """``BookingController::class`` or ``'Api\\BookingController'``: the controller's class as written."""
        value = self.o.value(node)
        if value.kind == "ref" and len(value.chain) == 2 and value.chain[1] == "class":
            return value.chain[0]
        if value.kind == "str" and value.text and "@" not in value.text:
            return value.text.lstrip("\\")
        return None

    def verb(
        self, methods: list[str], args: list[ts.Node], prefix: str, controller: str | None, line: int
    ) -> None:
        path = _string(args[0])
        if path is None:
            return
        handlers = self.handler(args[1], controller, line) if len(args) > 1 else []
        for method in methods:
            self.add(method, self.join(prefix, path) or "/", handlers, line)

    def handler(self, node: ts.Node, controller: str | None, line: int) -> list[Value]:
        """``[C::class, 'store']``, ``'C@store'``, ``C::class`` (invokable), ``'store'`` inside
        ``Route::controller(C::class)``, or a closure."""
        if node.type in _FUNCTIONS:
            return [self.o.value(node)]
        value = self.o.value(node)
        if value.kind == "ref" and len(value.chain) == 2 and value.chain[1] != "class":
            return [self.action(value.chain[0], value.chain[1], line)]
        if value.kind == "ref" and len(value.chain) == 2:
            return [self.action(value.chain[0], "__invoke", line)]
        if value.kind == "str" and "@" in value.text:
            cls, _, method = value.text.partition("@")
            return [self.action(cls.lstrip("\\"), method, line)]
        if value.kind == "str" and controller is not None:
            return [self.action(controller, value.text, line)]
        return []

    def action(self, cls: str, method: str, line: int) -> Value:
        """A controller's method; a class named without a ``use`` is under ``App\\Http\\Controllers``."""
        if cls not in self.module.import_refs:
            fqn = cls if cls.startswith("App\\") else f"App\\Http\\Controllers\\{cls}"
            self.module.import_refs[cls] = [psr4_ref(fqn)]
        return Value("ref", line, chain=(cls, method))

    def resource(
        self,
        verb: str,
        args: list[ts.Node],
        modifiers: list[tuple[str, list[ts.Node]]],
        prefix: str,
        line: int,
    ) -> None:
        name = _string(args[0])
        controller = self.controller_of(args[1])
        if name is None or controller is None:
            return
        actions = list(_API_ACTIONS if verb == "apiResource" else _RESOURCE_ACTIONS)
        options = self.o.value(args[2]) if len(args) > 2 else None
        chosen: list[tuple[str, Value]] = [
            (k, options.keys[k]) for k in ("only", "except") if options and k in options.keys
        ]
        chosen += [(m, self.o.value(a[0])) for m, a in modifiers if m in ("only", "except") and a]
        for which, listed in chosen:
            names = [v.text for v in listed.items] if listed.kind == "array" else [listed.text]
            actions = [a for a in actions if (a in names) == (which == "only")]
        base = self.join(prefix, name.replace(".", "/"))
        for action in actions:
            method, tail = _RESOURCE_ACTIONS[action]
            handler = [self.action(controller, action, line)]
            self.add(method, base + tail, handler, line)
            if action == "update":
                self.add("PATCH", base + tail, handler, line)

    def add(self, method: str, path: str, handlers: list[Value], line: int) -> None:
        self.module.routes.append(Route(method, path or "/", line, handlers))


def parse(source: bytes, path: str) -> Module:
    """The file's outline (tree-sitter reads any text, broken or not). Raises ``bounds.Unparsable`` for a file
    beyond the parsers' bounds."""
    bounds.check_size(path, len(source))
    with bounds.parsing(path), bounds.deep_recursion(20000):  # the walk recurses once per syntax level
        tree = _parser().parse(source)
        outliner = _Outliner(path, len(source))
        outliner.visit(tree.root_node)
        outliner.finish()
        if path.startswith("routes/"):
            prefix = _ROUTE_FILES.get(path, "")
            _Routes(outliner).statements(tree.root_node.named_children, _RouteScope(prefix))
    return outliner.module
