"""The house (docs/DEVELOPING.md, "Layout"): no import cycles, and no part leaning on a part above it.

Imports are read from the syntax trees of src/skillassay, every one of them: module level, inside functions,
and under ``if TYPE_CHECKING`` (a deferred import is still a dependency: it runs, or a type checker follows
it, and a circle through it is a circle in the design). ``from package import name`` is an edge to
``package.name`` when that is a module, else to the package; a submodule's implicit import of its parent
package is not counted (the parent imports nothing of its children unless it says so, and then that is an
edge).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "skillassay"

# Top to bottom; a part may import its own level and the levels below it, never one above.
LAYERS: list[set[str]] = [
    {"seam"},  # the Seam wing: leans on the generic harness, which reaches it only through entry points
    {"cli", "__main__"},
    {"orchestrator"},
    {"report"},
    # kinds of eval (kinds.base, the extension point): native agent evals, trigger suites; the Seam kind is
    # the wing's
    {"kinds"},
    {"graders"},
    {"agents", "apps"},  # apps: installing, building and starting an app, for graders and wings
    # external services and their stand-ins, the sandboxes agents run in
    {"services", "testing", "isolation"},
    {"definitions", "workspace", "store", "scoring", "scaffold"},  # scaffold writes definitions (`init`)
    {"usage", "stacks"},  # model usage and prices; the language stacks (stacks/: one module per stack)
    {
        "languages",
        "transcripts",
        "triggers",
        "skills",
        "errors",
        "reaper",
        "secrets",
        "plugins",
        "entry_point_text",
        "outcomes",
        "asgi",
        "tls",
        "paths",
        "untrusted",
        "phases",
        "skillassay",
    },
]

# Edges the picture does not allow, kept on purpose; each says why. A new one fails the test.
LEANING: dict[tuple[str, str], str] = {}

WING = "skillassay.seam"
# Modules of the harness that still name the Seam wing, each with where it goes (issue 25); a new one fails
# the test.
STILL_REACHING: dict[str, str] = {}

# Import cycles known and being broken (none now); a cycle that is gone must be taken off this list.
KNOWN_CYCLES: list[set[str]] = []


@functools.cache
def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line}, for every import of a skillassay module."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def part_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "skillassay"
    return parts[1]


def level_of(part: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if part in layer), None)


def _path(graph: dict[str, dict[str, int]], cycle: set[str]) -> str:
    start = min(cycle)
    seen, node, out = set(), start, []
    while node not in seen:
        seen.add(node)
        nxt = min(t for t in graph[node] if t in cycle)
        out.append(f"{node} (line {graph[node][nxt]})")
        node = nxt
    return " -> ".join([*out, node])


def test_the_walker_sees_every_kind_of_import(tmp_path):
    graph = import_graph()
    assert "skillassay.cli.usage" in graph["skillassay.cli.main"]  # inside a function
    # from package import module
    assert "skillassay.languages.pyparse" in graph["skillassay.languages.python"]
    assert "skillassay.seam.rubric.grade" in graph["skillassay.seam.rubric"]  # package __init__ re-exports
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [{"a", "b", "c"}]


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    unknown = [c for c in found if c not in KNOWN_CYCLES]
    assert not unknown, "import cycles:\n" + "\n".join(_path(graph, c) for c in unknown)
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"these cycles are gone: take them off KNOWN_CYCLES in {Path(__file__).name}: {gone}"


def test_every_part_has_a_place_in_the_house():
    parts = {part_of(m) for m in _modules()}
    homeless = sorted(p for p in parts if level_of(p) is None)
    assert not homeless, (
        f"new top-level parts {homeless}: add each to LAYERS in {Path(__file__).name} "
        "(and to house.md / docs/DEVELOPING.md)"
    )


def test_no_part_leans_on_a_part_above_it():
    graph = import_graph()
    wrong: dict[tuple[str, str], list[str]] = {}
    for module, edges in graph.items():
        for target, line in edges.items():
            a, b = part_of(module), part_of(target)
            la, lb = level_of(a), level_of(b)
            if la is not None and lb is not None and lb < la and b != "seam":
                wrong.setdefault((a, b), []).append(f"{module}:{line} imports {target}")
    unexpected = {k: v for k, v in wrong.items() if k not in LEANING}
    assert not unexpected, "imports against the layering:\n" + "\n".join(
        f"{a} -> {b}: {', '.join(v[:3])}" for (a, b), v in sorted(unexpected.items())
    )
    stale = sorted(k for k in LEANING if k not in wrong)
    assert not stale, f"no longer leaning: take {stale} off LEANING in {Path(__file__).name}"


def test_scoring_takes_plain_runs_not_the_store():
    graph = import_graph()
    assert not any(part_of(t) == "store" for t in graph["skillassay.scoring.stats"])


def test_no_two_modules_of_one_name_in_a_layer():
    """A module's name says what it is: two of one name in one layer (``checks``, ``models``) say it of
    neither. Package ``__init__`` files are not counted."""
    by_name: dict[tuple[int | None, str], list[str]] = {}
    for module, (_, is_package) in _modules().items():
        if not is_package:
            by_name.setdefault((level_of(part_of(module)), module.rpartition(".")[2]), []).append(module)
    twins = {name: sorted(found) for (_, name), found in by_name.items() if len(found) > 1}
    assert not twins, "modules of one name in one layer (rename them to what each is):\n" + "\n".join(
        f"{name}: {', '.join(found)}" for name, found in sorted(twins.items())
    )


def test_only_the_wing_imports_the_wing():
    """The generic harness reaches a wing only through entry points (``skillassay.plugins``): no module
    outside ``skillassay.seam`` imports it, at any depth, deferred or not."""
    graph = import_graph()

    def inside(m: str) -> bool:
        return m == WING or m.startswith(WING + ".")

    reaching = {m: sorted(t for t in edges if inside(t)) for m, edges in graph.items() if not inside(m)}
    reaching = {m: ts for m, ts in reaching.items() if ts}
    offenders = sorted(
        f"{m}:{graph[m][ts[0]]} imports {', '.join(ts)}"
        for m, ts in reaching.items()
        if m not in STILL_REACHING
    )
    stale = sorted(m for m in STILL_REACHING if m not in reaching)
    said = offenders + ([f"no longer reaching: take {stale} off STILL_REACHING"] if stale else [])
    assert not said, (
        "only the Seam wing may import skillassay.seam (the harness reaches it through entry "
        "points): " + "; ".join(said)
    )
