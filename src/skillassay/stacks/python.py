"""The Python family: apps with a ``requirements.txt`` or ``pyproject.toml``, installed by pip into a cached
virtual environment of the Python skillassay runs on. Its frameworks (``flask.py``, ``fastapi.py``) subclass
``PythonStack``; ``PythonStack`` itself is a Python app of no known framework."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import ClassVar

from skillassay.stacks.base import SourceSyntax, Stack, system_path

PYTHON = SourceSyntax(
    language="python",
    extensions=(".py",),
    comment="# ",
    literal="repr",
    http_clients=frozenset({"requests", "httpx", "aiohttp", "urllib", "urllib3", "http"}),
    sdk_family="python",
    label="Python",
    env_test='__import__("os").environ.get("{name}") == "{value}"',
    choice="({new} if {cond} else ({old}))",
)

_DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /app
COPY {manifest} ./
RUN pip install {install}
COPY . .
EXPOSE {port}
CMD {cmd}
"""

ENTRY_FILES = ("app.py", "main.py", "server.py", "wsgi.py")


class PythonStack(Stack):
    name = "python"
    family = "python"
    order = 29
    init_name = "python"
    init_language = "python"
    default_port = 8000
    definition_languages: ClassVar[tuple[str, ...]] = ("python",)
    manifests: ClassVar[tuple[str, ...]] = ("requirements.txt", "pyproject.toml")
    runtime_files: ClassVar[tuple[str, ...]] = ("requirements.txt", "pyproject.toml", "app.py", "main.py")
    images: ClassVar[tuple[str, ...]] = ("python", "pypy")
    registries: ClassVar[tuple[str, ...]] = ("pypi.org", "files.pythonhosted.org")
    syntaxes: ClassVar[tuple[SourceSyntax, ...]] = (PYTHON,)
    installer = "venv"
    mount_order = 0

    def declares(self, app: Path, package: str, strict: bool) -> bool:
        manifest = self.manifest(app)
        if manifest is None:
            return False
        text = (app / manifest).read_text(encoding="utf-8", errors="replace").lower()
        return re.search(rf"\b{re.escape(package)}\b", text) is not None if strict else package in text

    def language(self, app: Path) -> str:
        return "python"

    def stack_id(self, app: Path) -> str:
        return "python" if self.name == "python" else f"python-{self.name}"

    def runtime_paths(self, venv: bool) -> tuple[list[Path], list[str]]:
        prefixes = [Path(sys.base_prefix)]
        if venv and sys.prefix != sys.base_prefix:
            prefixes.append(Path(sys.prefix))
        base_bin = Path(sys.base_prefix) / "bin"
        return [p for p in prefixes if not system_path(p)], [] if system_path(base_bin) else [str(base_bin)]

    def start_command(self, entry: str, port: int) -> list[str]:
        """What ``init``'s Dockerfile runs: the entry file."""
        return ["python", entry]

    def dockerfile(self, app: Path, manifest: str, port: int) -> str:
        install = "-r requirements.txt" if manifest == "requirements.txt" else "."
        entry = next((n for n in ENTRY_FILES if (app / n).is_file()), "app.py")
        cmd = json.dumps(self.start_command(entry, port))
        return _DOCKERFILE.format(manifest=manifest, install=install, port=port, cmd=cmd)
