"""The Seam SDK surface (route namespaces, methods, their top-level parameters, event types), per language.

Read from the official packages, never typed by hand: the Python SDK (PyPI ``seam``) by introspecting its
route classes, the JavaScript SDK (npm ``seam`` -> ``@seamapi/http``) by parsing its TypeScript declarations
with tree-sitter. The result is committed as ``data/sdk_surface.json`` so grading needs neither package nor
node; ``python -m skillassay.seam.rubric.sdk_surface --write`` regenerates it, and a test checks it is
current.

Method names are keyed by their snake_case path (``customers.push_data``) in both languages; ``name`` holds
the spelling the SDK really uses (``pushData`` in JavaScript).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path
from typing import Any

from skillassay import stacks

DATA_FILE = Path(__file__).parent / "data" / "sdk_surface.json"

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """``pushData`` -> ``push_data``; snake_case names are returned unchanged."""
    return _CAMEL.sub(r"_\1", name).lower()


@functools.cache
def load_surface() -> dict[str, Any]:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def language_surface(language: str) -> dict[str, Any]:
    """The surface for ``python`` or ``javascript`` (TypeScript uses the JavaScript SDK): the SDK family a
    stack language calls (``SourceSyntax.sdk_family``), the JavaScript SDK's for any other."""
    syntax = stacks.syntax_of(language)
    key = syntax.sdk_family if syntax is not None else "javascript"
    return load_surface()[key]


@functools.cache
def all_namespaces() -> frozenset[str]:
    """Every route namespace path in either SDK, snake_case (``customers``, ``access_codes.unmanaged``)."""
    out: set[str] = set()
    for lang in ("python", "javascript"):
        for method in load_surface()[lang]["methods"]:
            out.add(method.rsplit(".", 1)[0])
    return frozenset(out)


@functools.cache
def all_methods() -> frozenset[str]:
    """Every method path in either SDK, snake_case (``customers.push_data``)."""
    return frozenset(m for lang in ("python", "javascript") for m in load_surface()[lang]["methods"])


@functools.cache
def event_types() -> frozenset[str]:
    return frozenset(load_surface()["event_types"])


# ----------------------------------------------------------------------------- generation: Python SDK
def _python_surface() -> tuple[dict[str, Any], list[str]]:
    import inspect
    import typing  # the generators' imports stay here: grading only reads the JSON, and must start fast
    from importlib.metadata import version

    import seam  # noqa: F401  (the official package)
    from seam import routes

    methods: dict[str, Any] = {}

    def walk(prefix: str, cls: type) -> None:
        for name, member in sorted(inspect.getmembers(cls)):
            if name.startswith("_"):
                continue
            if isinstance(member, property):
                sub = typing.get_type_hints(member.fget).get("return")
                if isinstance(sub, type):
                    walk(f"{prefix}.{name}", sub)
            elif inspect.isfunction(member):
                params = [p for p in inspect.signature(member).parameters if p != "self"]
                methods[f"{prefix}.{name}"] = {"name": name, "params": sorted(params)}

    for field, cls in sorted(typing.get_type_hints(routes.AbstractRoutes).items()):
        walk(field, cls)

    from seam.routes.events import AbstractEvents

    hint = typing.get_type_hints(AbstractEvents.list)["event_type"]
    literal = next(a for a in typing.get_args(hint) if typing.get_origin(a) is typing.Literal)
    events = sorted(typing.get_args(literal))
    return {"package": "seam", "version": version("seam"), "methods": methods}, events


# ----------------------------------------------------------------------------- generation: JavaScript SDK
def _ts_parser():
    import tree_sitter as ts
    import tree_sitter_typescript as tst

    return ts.Parser(ts.Language(tst.language_typescript()))


def _text(node) -> str:
    return node.text.decode("utf-8")


def _type_keys(node) -> list[str]:
    """Top-level property names of a type expression (object types, through generics, & and |)."""
    if node.type == "object_type":
        keys = []
        for child in node.named_children:
            if child.type == "property_signature":
                name = child.child_by_field_name("name")
                if name is not None:
                    keys.append(_text(name).strip("'\""))
        return keys
    keys = []
    for child in node.named_children:
        keys.extend(_type_keys(child))
    return keys


def _js_surface(node_modules: Path) -> dict[str, Any]:
    http = node_modules / "@seamapi" / "http"
    seam_pkg = json.loads((node_modules / "seam" / "package.json").read_text())
    http_pkg = json.loads((http / "package.json").read_text())
    parser = _ts_parser()
    lib = http / "lib" / "routes"
    methods: dict[str, Any] = {}

    def parse_class(dts: Path) -> dict[str, dict[str, Any]]:
        """Class name -> {getters, methods}, type alias name -> node and imports of one declaration file."""
        tree = parser.parse(dts.read_bytes())
        classes: dict[str, Any] = {}
        aliases: dict[str, Any] = {}
        imports: dict[str, str] = {}
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "import_statement":
                source = node.child_by_field_name("source")
                for spec in _descendants(node, "import_specifier"):
                    imports[_text(spec.child_by_field_name("name"))] = _text(source).strip("'\"")
            elif node.type == "class_declaration":
                cname = _text(node.child_by_field_name("name"))
                getters: dict[str, str] = {}
                meths: dict[str, str | None] = {}
                for member in node.child_by_field_name("body").named_children:
                    if member.type != "method_signature":
                        continue
                    tokens = {c.type for c in member.children if not c.is_named}
                    if "static" in tokens:
                        continue
                    mname = _text(member.child_by_field_name("name"))
                    if "get" in tokens:
                        rtype = member.child_by_field_name("return_type")
                        getters[mname] = _text(rtype).lstrip(":").strip()
                        continue
                    ptype = None
                    params = member.child_by_field_name("parameters")
                    first = params.named_children[0] if params.named_children else None
                    if first is not None and _text(first).startswith("parameters"):
                        ann = first.child_by_field_name("type")
                        if ann is not None:
                            ptype = _text(ann).lstrip(":").strip()
                    meths[mname] = ptype
                classes[cname] = {"getters": getters, "methods": meths}
            elif node.type == "type_alias_declaration":
                aliases[_text(node.child_by_field_name("name"))] = node.child_by_field_name("value")
            stack.extend(reversed(node.named_children))
        return {"classes": classes, "aliases": aliases, "imports": imports}

    # class name -> declaration file (index.d.ts files only re-export)
    class_files: dict[str, Path] = {}
    for dts in sorted(lib.rglob("*.d.ts")):
        for match in re.finditer(r"export declare class (\w+)", dts.read_text(encoding="utf-8")):
            class_files[match.group(1)] = dts

    def walk(prefix: str, cls: str) -> None:
        dts = class_files[cls]
        info = parse_class(dts)
        body = info["classes"][cls]
        for mname, ptype in sorted(body["methods"].items()):
            if mname in ("constructor", "createPaginator", "updateClientSessionToken"):
                continue  # client plumbing, not API routes
            keys = sorted(set(_type_keys(info["aliases"][ptype]))) if ptype in info["aliases"] else []
            methods[f"{prefix}.{snake(mname)}"] = {"name": mname, "params": keys}
        for gname, gtype in sorted(body["getters"].items()):
            walk(f"{prefix}.{snake(gname)}", gtype)

    root = parse_class(lib / "seam-http.d.ts")
    for gname, gtype in sorted(root["classes"]["SeamHttp"]["getters"].items()):
        walk(snake(gname), gtype)
    return {
        "package": f"seam@{seam_pkg['version']} (@seamapi/http@{http_pkg['version']})",
        "version": http_pkg["version"],
        "methods": methods,
    }


def _descendants(node, kind: str):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            yield n
        stack.extend(n.named_children)


def default_node_modules() -> Path:
    # src/skillassay/graders/rubric/sdk_surface.py -> repository root
    return Path(__file__).resolve().parents[4] / "node" / "node_modules"


def generate(node_modules: Path | None = None) -> dict[str, Any]:
    py, events = _python_surface()
    js = _js_surface(node_modules or default_node_modules())
    return {
        "generated_by": "python -m skillassay.seam.rubric.sdk_surface --write",
        "event_types": events,
        "python": py,
        "javascript": js,
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-modules", type=Path, default=None, help="node_modules holding npm `seam`")
    parser.add_argument("--write", action="store_true", help=f"write {DATA_FILE.name} (default: print)")
    args = parser.parse_args(argv)
    text = render(generate(args.node_modules))
    if args.write:
        DATA_FILE.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
