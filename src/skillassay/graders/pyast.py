"""Python syntax-tree helpers shared by the process graders: functions by qualified name, test functions, and
what counts as an assertion or a skip. Syntax trees, never regexes, so formatting and comments change
nothing."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal, cast

from skillassay.languages import bounds, pyparse
from skillassay.workspace.changes import ChangeSet


def parse(source: str | None, path: str = "<unknown>") -> ast.Module | None:
    """The syntax tree, or None for no source or one that does not parse. Raises ``bounds.Unparsable`` (the
    engine makes it "unmeasurable because of the change") for a file beyond the parsers' bounds, depth
    included: the graders read trees with recursive functions (``ast.dump``, ``ast.unparse``)."""
    if source is None:
        return None
    try:
        return pyparse.parse(source, filename=path, max_depth=bounds.MAX_DEPTH)
    except (SyntaxError, ValueError):
        return None


def tree(change: ChangeSet, rel: str, side: Literal["pristine", "modified"]) -> ast.Module | None:
    """``parse`` of one side of a file of the change (an Unparsable names the file)."""
    return parse(change.read(rel, side), rel)


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def functions(tree: ast.Module | None) -> dict[str, FunctionNode]:
    """Qualified name ("Class.method", "func", "Outer.Inner.method") -> node, for module- and class-level
    defs."""
    out: dict[str, FunctionNode] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + node.name] = node
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    if tree is not None:
        visit(tree.body, "")
    return out


def classes(tree: ast.Module | None) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}
    if tree is None:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out[node.name] = node
    return out


def same_function(a: FunctionNode, b: FunctionNode) -> bool:
    """Equal as code (comments, blank lines and positions ignored)."""
    return ast.dump(a, include_attributes=False) == ast.dump(b, include_attributes=False)


def test_functions(tree: ast.Module | None) -> dict[str, FunctionNode]:
    """pytest's default collection: ``test*`` functions at module level and in ``Test*`` classes."""
    out: dict[str, FunctionNode] = {}
    for name, node in functions(tree).items():
        parts = name.split(".")
        if not parts[-1].startswith("test"):
            continue
        if len(parts) == 1 or (len(parts) == 2 and parts[0].startswith("Test")):
            out[name] = node
    return out


def dotted(node: ast.AST) -> str:
    """``pytest.mark.skip`` for the expression naming it ("" when it is not a plain dotted name)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


_CONSTANT_NODES = (
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.Tuple,
    ast.List,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
    ast.Not,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Load,
)


def _truthy_constant(node: ast.AST) -> bool:
    """True for a condition that always holds: made only of constants that hold (``True``, ``1``, ``1 == 1``,
    ``not False``), or an ``or`` with such an operand (``True or x``, ``x or 1``: whatever ``x`` is)."""
    if (
        isinstance(node, ast.BoolOp)
        and isinstance(node.op, ast.Or)
        and any(_truthy_constant(v) for v in node.values)
    ):
        return True
    if not all(isinstance(n, _CONSTANT_NODES) for n in ast.walk(node)):
        return False
    try:
        return bool(
            eval(  # noqa: S307 - constants only (checked above), no builtins
                pyparse.compile_tree(ast.Expression(cast(ast.expr, node)), "<condition>"),
                {"__builtins__": {}},
                {},
            )
        )
    except Exception:  # noqa: BLE001 - any error means: not a constant
        return False


def skip_marker(decorator: ast.expr) -> str | None:
    """Why this decorator skips a test unconditionally, or None. Conditional skips
    (``skipif(sys.platform...)``) are left alone; ``skipif(True)`` is not."""
    name = dotted(decorator)
    last = name.rsplit(".", 1)[-1]
    if last == "skip" and ("mark" in name or "unittest" in name or name == "skip"):
        return f"@{name}"
    if (
        last in ("skipIf", "skipif")
        and isinstance(decorator, ast.Call)
        and decorator.args
        and _truthy_constant(decorator.args[0])
    ):
        return f"@{name}({ast.unparse(decorator.args[0])})"
    if last == "skipUnless" and isinstance(decorator, ast.Call) and decorator.args:
        negated = ast.UnaryOp(op=ast.Not(), operand=decorator.args[0])
        if _truthy_constant(negated):
            return f"@{name}({ast.unparse(decorator.args[0])})"
    if last == "xfail" and "mark" in name:
        return f"@{name}"
    return None


def _body_without_docstring(fn: FunctionNode) -> list[ast.stmt]:
    body = list(fn.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def body_skip(fn: FunctionNode) -> str | None:
    """A test whose body begins by leaving: ``return``, ``pytest.skip(...)``, ``self.skipTest(...)``, ``pass``
    only, or ``raise unittest.SkipTest``."""
    body = _body_without_docstring(fn)
    if not body:
        return "an empty body"
    first = body[0]
    if isinstance(first, ast.Return):
        return "a `return` at the top of its body"
    if isinstance(first, ast.Pass) and len(body) == 1:
        return "a body of only `pass`"
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Call):
        name = dotted(first.value.func)
        if name.endswith(("pytest.skip", "skipTest", "pytest.xfail")) or name == "skip":
            return f"a call to {name}() at the top of its body"
    if isinstance(first, ast.Raise) and first.exc is not None and "SkipTest" in dotted(first.exc):
        return "raising SkipTest at the top of its body"
    return None


def module_skip(tree: ast.Module | None) -> str | None:
    """``pytestmark = pytest.mark.skip`` or a module-level ``pytest.skip(..., allow_module_level=True)``."""
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            for v in values:
                why = skip_marker(v)
                if why:
                    return f"pytestmark = {why[1:]}"
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and dotted(node.value.func).endswith("pytest.skip")
        ):
            return "a module-level pytest.skip()"
    return None


@dataclass
class AssertionCount:
    asserts: int = 0  # `assert x` with a non-constant test
    trivial: int = 0  # `assert True`, `assert 1`
    calls: int = 0  # self.assertEqual(...), pytest.raises / warns / approx checks, mock.assert_called...

    @property
    def total(self) -> int:
        return self.asserts + self.calls


def count_assertions(fn: FunctionNode) -> AssertionCount:
    count = AssertionCount()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            if _truthy_constant(node.test):
                count.trivial += 1
            else:
                count.asserts += 1
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if last.startswith("assert") or name in (
                "pytest.raises",
                "pytest.warns",
                "pytest.deprecated_call",
                "raises",
            ):
                count.calls += 1
    return count
