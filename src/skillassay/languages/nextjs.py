"""Next.js's file-system routes: which source files are route files, and the URL path each serves.

Pure path arithmetic, kept out of ``typescript.py`` so a grade that only asks whether a file is a route
(``seam/rubric/project.py``, on every changed app) imports no tree-sitter grammar.
"""

from __future__ import annotations

# the extensions of JavaScript and TypeScript source files (``.d.ts`` declarations excepted by callers)
JS_SOURCE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


def _route_root(segments: list[str], folder: str) -> int | None:
    """Index of the Next.js ``app``/``pages`` folder in a file's path: at the root or under ``src/`` first,
    else the first one (an app in a monorepo folder)."""
    found = [i for i, seg in enumerate(segments[:-1]) if seg == folder]
    preferred = [i for i in found if i == 0 or segments[i - 1] == "src"]
    first = preferred or found
    return first[0] if first else None


def next_route_path(path: str) -> tuple[str, str] | None:
    """(``"app"`` | ``"pages"``, URL path) when ``path`` is a Next.js route file: ``app/**/route.<ext>``
    (route groups ``(name)`` and parallel-route slots ``@name`` leave no trace in the URL; a ``_private``
    folder is not routed) or ``pages/api/**`` (``index`` names its folder). Dynamic segments stay as
    written: ``[id]``, ``[...slug]``, ``[[...slug]]``."""
    segments = path.split("/")
    name = segments[-1]
    base, dot, ext = name.rpartition(".")
    if not dot or "." + ext not in JS_SOURCE_EXTENSIONS or name.endswith(".d.ts"):
        return None
    app = _route_root(segments, "app")
    if base == "route" and app is not None:
        folders = segments[app + 1 : -1]
        if any(f.startswith(("_", "(.", "(..")) for f in folders):
            return None  # private folders, intercepting routes: not URL routes
        parts = [f for f in folders if not (f.startswith("(") and f.endswith(")")) and not f.startswith("@")]
        return "app", "/" + "/".join(parts)
    pages = _route_root(segments, "pages")
    if pages is not None and len(segments) > pages + 2 and segments[pages + 1] == "api":
        parts = segments[pages + 1 : -1] + ([] if base == "index" else [base])
        if any(p.startswith("_") for p in parts):
            return None
        return "pages", "/" + "/".join(parts)
    return None
