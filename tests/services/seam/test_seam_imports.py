"""The emulator's modules import each other in one direction only (no circle, not even for type checking): the
app gets its collaborators passed in and never imports the emulator that builds it."""

from __future__ import annotations

import ast
from pathlib import Path

import skillassay.seam.emulator as seam_package

PACKAGE = "skillassay.seam.emulator"


def _graph() -> dict[str, set[str]]:
    root = Path(seam_package.__file__).parent
    graph: dict[str, set[str]] = {}
    for file in root.glob("*.py"):
        deps = graph.setdefault(file.stem, set())
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE + "."):
                deps.add(node.module.split(".")[3])
            elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
                deps.update(alias.name for alias in node.names)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        for dep in sorted(graph.get(node, ())):
            if dep in path:
                found.append([*path[path.index(dep) :], dep])
            elif dep in graph:
                visit(dep, [*path, dep])

    for start in sorted(graph):
        if start != "__init__":
            visit(start, [start])
    return found


def test_no_import_cycles_in_the_emulator():
    graph = _graph()
    assert "emulator" not in graph["app"] and "emulator" not in graph["control"]
    assert _cycles(graph) == []
