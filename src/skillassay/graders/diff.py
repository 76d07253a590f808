"""Checks on the change itself, pristine tree against modified tree: the owning module was changed and gained
the operation (inside its transaction boundary), the status model gained the status, changed files stay within
scope, functions that existed before are unchanged, tests were added, and no parallel service appeared.

Each option given is one check; the criterion earns the share of checks that hold. Python code is read through
its syntax tree; a file that does not parse fails the checks that need it."""

from __future__ import annotations

import ast
import re

from skillassay.definitions.agent_eval import Criterion, DiffOptions
from skillassay.graders import pyast
from skillassay.graders.base import GradeResult, ProcessContext, matches
from skillassay.workspace.changes import ChangeSet


def new_functions(change: ChangeSet, rel: str) -> dict[str, pyast.FunctionNode]:
    before = pyast.functions(pyast.tree(change, rel, "pristine")) if rel not in change.added else {}
    after = pyast.functions(pyast.tree(change, rel, "modified"))
    return {name: node for name, node in after.items() if name not in before}


def _with_names(fn: ast.AST) -> set[str]:
    """Names a `with` in ``fn`` enters: ``with self._unit_of_work()`` -> {"_unit_of_work"}, ``with conn:`` ->
    {"conn"}."""
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call):
                    expr = expr.func
                name = pyast.dotted(expr)
                if name:
                    names.add(name.rsplit(".", 1)[-1])
    return names


def _called_methods(fn: ast.AST) -> set[str]:
    """``self.x(...)`` / ``cls.x(...)`` calls, and plain ``x(...)`` calls (module functions)."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id in ("self", "cls")
            ):
                out.add(f.attr)
            elif isinstance(f, ast.Name):
                out.add(f.id)
    return out


def within_boundary(qualname: str, funcs: dict[str, pyast.FunctionNode], boundary: str) -> str | None:
    """The function (``qualname`` or one it calls, transitively, in the same class/module) that enters the
    boundary, or None."""
    prefix = qualname.rsplit(".", 1)[0] + "." if "." in qualname else ""
    seen: set[str] = set()
    todo = [qualname]
    while todo:
        name = todo.pop()
        if name in seen or name not in funcs:
            continue
        seen.add(name)
        node = funcs[name]
        if boundary in _with_names(node):
            return name
        for called in _called_methods(node):
            todo.extend([prefix + called, called])
    return None


def enum_members(tree: ast.Module | None) -> set[str]:
    """Members of Enum classes (class attributes assigned in a class deriving from ``*Enum``)."""
    out: set[str] = set()
    if tree is None:
        return out
    for cls in pyast.classes(tree).values():
        if not any("Enum" in pyast.dotted(b) for b in cls.bases):
            continue
        for stmt in cls.body:
            targets = (
                stmt.targets
                if isinstance(stmt, ast.Assign)
                else [stmt.target]
                if isinstance(stmt, ast.AnnAssign)
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name):
                    out.add(f"{cls.name}.{t.id}")
    return out


def parallel_modules(
    change: ChangeSet, owning_module: str, operation: str | None, service_pattern: str, test_globs: list[str]
) -> list[str]:
    """New Python modules (not tests, not the owner) that define a service-like class or the operation
    itself."""
    found = []
    for rel in change.added:
        if not rel.endswith(".py") or rel == owning_module or matches(rel, test_globs):
            continue
        tree = pyast.tree(change, rel, "modified")
        for cls in pyast.classes(tree):
            if re.search(service_pattern, cls):
                found.append(f"{rel} defines class {cls}, duplicating the job of {owning_module}")
        if operation:
            for name in pyast.functions(tree):
                if re.search(operation, name.rsplit(".", 1)[-1]):
                    found.append(f"{rel} defines {name}(), an operation that belongs in {owning_module}")
    return found


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = DiffOptions.model_validate(criterion.options)
    change = ctx.change
    checks: list[tuple[bool, str]] = []
    if not change.changed:
        return GradeResult(fraction=0.0, evidence=["the agent changed nothing"])

    new_ops: list[str] = []
    owner = opts.owning_module
    if owner:
        ok = owner in change.modified or owner in change.added
        checks.append((ok, f"owning module {owner} {'changed' if ok else 'not changed'}"))
        if opts.operation:
            new_ops = [
                n for n in new_functions(change, owner) if re.search(opts.operation, n.rsplit(".", 1)[-1])
            ]
            checks.append(
                (
                    bool(new_ops),
                    f"new operation in {owner}: {', '.join(new_ops)}"
                    if new_ops
                    else f"no new function matching /{opts.operation}/ in {owner}",
                )
            )
            if opts.transaction:
                funcs = pyast.functions(pyast.tree(change, owner, "modified"))
                via = [(op, within_boundary(op, funcs, opts.transaction)) for op in new_ops]
                inside = [f"{op} (via {v})" if v != op else op for op, v in via if v]
                checks.append(
                    (
                        bool(inside),
                        f"runs inside {opts.transaction}: {', '.join(inside)}"
                        if inside
                        else f"the new operation does not enter the transaction boundary {opts.transaction}",
                    )
                )
    if opts.status_module and opts.status_member:
        members_before = enum_members(pyast.tree(change, opts.status_module, "pristine"))
        members_after = enum_members(pyast.tree(change, opts.status_module, "modified"))
        added = sorted(
            m for m in members_after - members_before if re.search(opts.status_member, m.rsplit(".", 1)[-1])
        )
        checks.append(
            (
                bool(added),
                f"status added to {opts.status_module}: {', '.join(added)}"
                if added
                else f"no new status matching /{opts.status_member}/ in {opts.status_module}",
            )
        )
    if opts.scope is not None:
        outside = [p for p in change.changed if not matches(p, opts.scope)]
        checks.append(
            (
                not outside,
                "every changed file is within scope"
                if not outside
                else f"changed outside the declared scope: {', '.join(outside)}",
            )
        )
    if opts.preserve_functions:
        rewritten = []
        for rel in change.modified + change.deleted:
            if not rel.endswith(".py") or matches(rel, opts.test_globs):
                continue
            before = pyast.functions(pyast.tree(change, rel, "pristine"))
            after = pyast.functions(pyast.tree(change, rel, "modified")) if rel not in change.deleted else {}
            for name, node in before.items():
                if f"{rel}::{name}" in opts.may_change:
                    continue
                if name not in after:
                    rewritten.append(f"{rel}::{name} removed")
                elif not pyast.same_function(node, after[name]):
                    rewritten.append(f"{rel}::{name} rewritten")
        checks.append(
            (
                not rewritten,
                "existing functions unchanged"
                if not rewritten
                else "existing code changed: " + "; ".join(rewritten),
            )
        )
    if opts.tests_added is not None:
        added_tests = []
        for rel in change.added + change.modified:
            if rel.endswith(".py") and matches(rel, opts.tests_added):
                before = (
                    pyast.test_functions(pyast.tree(change, rel, "pristine"))
                    if rel not in change.added
                    else {}
                )
                after = pyast.test_functions(pyast.tree(change, rel, "modified"))
                added_tests += [f"{rel}::{n}" for n in after if n not in before]
        checks.append(
            (
                bool(added_tests),
                f"tests added: {', '.join(added_tests)}" if added_tests else "no new test functions",
            )
        )
    if opts.no_parallel_service:
        if not owner:
            checks.append((False, "no_parallel_service needs owning_module"))
        else:
            found = parallel_modules(change, owner, opts.operation, opts.service_pattern, opts.test_globs)
            checks.append((not found, "no parallel service added" if not found else "; ".join(found)))
    if not checks:
        return GradeResult(fraction=None, evidence=["no diff checks configured"])
    return GradeResult(
        fraction=sum(ok for ok, _ in checks) / len(checks),
        evidence=[("ok: " if ok else "missing: ") + why for ok, why in checks],
    )


def detect_parallel(behaviour, ctx: ProcessContext):
    """Forbidden behaviour detector ``parallel_service``: a new module duplicating the owning module's job."""
    from skillassay.definitions.agent_eval import ParallelServiceOptions
    from skillassay.graders.base import Detection

    opts = ParallelServiceOptions.model_validate(behaviour.options)
    found = parallel_modules(
        ctx.change, opts.owning_module, opts.operation, opts.service_pattern, opts.test_globs
    )
    return Detection(observed=bool(found), evidence=found or ["no parallel service added"])
