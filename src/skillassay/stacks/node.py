"""The Node family: apps with a ``package.json``, installed by npm into a cached ``node_modules``, written in
JavaScript or TypeScript. Its frameworks (``express.py``, ``nextjs.py``) subclass ``NodeStack``; ``NodeStack``
itself is a Node app of no known framework."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from skillassay.stacks.base import SourceSyntax, Stack, system_path, which_real

JAVASCRIPT = SourceSyntax(
    language="javascript",
    extensions=(".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"),
    comment="// ",
    literal="json",
    statement_end=";",
    http_clients=frozenset(
        {
            "axios",
            "got",
            "ky",
            "undici",
            "node-fetch",
            "cross-fetch",
            "isomorphic-fetch",
            "http",
            "https",
            "node:http",
            "node:https",
            "superagent",
        }
    ),
    sdk_family="javascript",
    label="JavaScript",
    env_test='process.env.{name} === "{value}"',
    choice="({cond} ? ({new}) : ({old}))",
)

# What `npm ci` / `npm install` read from package.json to decide what lands in node_modules. The rest (name,
# version, description, the build/start scripts, ...) differs between apps with identical dependencies, which
# then share one install. Install-time lifecycle scripts are kept: npm runs them in the install folder.
_MANIFEST_INSTALL_FIELDS = (
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "bundleDependencies",
    "bundledDependencies",
    "overrides",
    "workspaces",
    "engines",
    "os",
    "cpu",
    "packageManager",
)
_INSTALL_SCRIPTS = (
    "preinstall",
    "install",
    "postinstall",
    "preprepare",
    "prepare",
    "postprepare",
    "dependencies",
)


def install_part(name: str, data: bytes) -> bytes:
    """The install-relevant part of package.json / package-lock.json; the bytes as they are when not plain
    JSON.
    """
    try:
        doc = json.loads(data)
    except ValueError:
        return data
    if not isinstance(doc, dict):
        return data
    if name == "package.json":
        kept = {k: doc[k] for k in _MANIFEST_INSTALL_FIELDS if k in doc}
        scripts = doc.get("scripts")
        if isinstance(scripts, dict):
            kept["scripts"] = {k: scripts[k] for k in _INSTALL_SCRIPTS if k in scripts}
        return json.dumps(kept, sort_keys=True).encode()
    doc = {k: v for k, v in doc.items() if k not in ("name", "version")}
    packages = doc.get("packages")
    if isinstance(packages, dict) and isinstance(packages.get(""), dict):
        root = {k: v for k, v in packages[""].items() if k not in ("name", "version", "license")}
        doc["packages"] = {**packages, "": root}
    return json.dumps(doc, sort_keys=True).encode()


_DOCKERFILE = """\
FROM node:20-slim
WORKDIR /app
COPY package*.json ./
RUN npm ci
COPY . .
{build}EXPOSE {port}
CMD ["npm", "start"]
"""


class NodeStack(Stack):
    name = "node"
    family = "node"
    order = 19
    init_name = "node"
    init_language = "typescript"
    default_port = 3000
    definition_languages: ClassVar[tuple[str, ...]] = ("typescript", "javascript")
    manifests: ClassVar[tuple[str, ...]] = ("package.json",)
    runtime_files: ClassVar[tuple[str, ...]] = ("package.json",)
    images: ClassVar[tuple[str, ...]] = ("node",)
    registries: ClassVar[tuple[str, ...]] = ("registry.npmjs.org",)
    syntaxes: ClassVar[tuple[SourceSyntax, ...]] = (JAVASCRIPT,)
    installer = "node_modules"
    mount_order = 1
    dependency_files: ClassVar[tuple[str, ...]] = ("package.json", "package-lock.json", ".npmrc")
    dependency_folder = "node_modules"
    version_command: ClassVar[tuple[str, ...]] = ("node", "--version")

    def declares(self, app: Path, package: str, strict: bool) -> bool:
        pkg = app / "package.json"
        if not strict:
            return f'"{package}"' in pkg.read_text(encoding="utf-8", errors="replace")
        data = json.loads(pkg.read_text(encoding="utf-8"))  # ValueError: ``init`` says the file is not JSON
        if not isinstance(data, dict):
            return False
        return any(
            isinstance(data.get(f), dict) and package in data[f] for f in ("dependencies", "devDependencies")
        )

    def install_argv(self, files: Mapping[str, bytes]) -> list[str]:
        return ["npm", "ci"] if "package-lock.json" in files else ["npm", "install"]

    def install_command(self, argv: list[str], entry: Path) -> list[str]:
        argv = list(argv)
        if argv[1:2] == ["ci"] and not (entry / "package-lock.json").exists():
            # npm ci refuses to run without a lock file; Docker would fail, we note it in the log
            argv[1] = "install"
        return [*argv, "--no-audit", "--no-fund"]

    def install_key(self, name: str, data: bytes) -> bytes:
        return data if name == ".npmrc" else install_part(name, data)

    def language(self, app: Path) -> str:
        return "typescript" if (app / "tsconfig.json").is_file() else "javascript"

    def stack_id(self, app: Path) -> str:
        return f"{self.language(app)}-{self.name}"

    def runtime_paths(self, venv: bool) -> tuple[list[Path], list[str]]:
        real = which_real("node")
        if real is None or system_path(real):
            return [], []
        prefix = real.parent.parent  # <prefix>/bin/node
        return [prefix], [str(prefix / "bin")]

    def dependency_bins(self, app_dir: Path) -> list[Path]:
        return [app_dir / "node_modules" / ".bin"]

    def dockerfile(self, app: Path, manifest: str, port: int) -> str:
        scripts = json.loads((app / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
        build = "RUN npm run build\n" if "build" in scripts else ""
        return _DOCKERFILE.format(build=build, port=port)
