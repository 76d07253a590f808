"""The Python family: apps with a ``requirements.txt`` or ``pyproject.toml``, installed by pip into a cached
virtual environment of the Python skillassay runs on. Its frameworks (``flask.py``, ``fastapi.py``) subclass
``PythonStack``; ``PythonStack`` itself is a Python app of no known framework."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, ClassVar

from skillassay.stacks.base import Dependencies, ReadManifest, SourceSyntax, Stack, system_path

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

# the requirements files an app's environment installs (with the files they include), else pyproject.toml's
# dependencies with these extras and dependency groups
REQUIREMENTS = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
)
PYPROJECT_GROUPS = ("test", "tests", "testing", "dev")
MAX_FILES = 32  # requirements files read, includes counted


def local_requirement(arg: str) -> bool:
    """A pip argument installing from the app's own files (``-e .``, ``./pkg``, ``file:``)."""
    arg = arg.strip()
    for prefix in ("-e ", "--editable ", "--editable="):
        if arg.startswith(prefix):
            return True
    return arg.startswith((".", "/", "~", "file:")) or "@ file:" in arg


def requirement_refs(name: str, data: bytes) -> tuple[list[str], bool]:
    """The other requirement/constraint files a requirements file names (relative to the app), and whether it
    installs anything from the app's own files."""
    nested: list[str] = []
    local = False
    base = os.path.dirname(name)
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        for flag in ("-r", "--requirement", "-c", "--constraint"):
            if line.startswith((flag + " ", flag + "=")) or (
                flag in ("-r", "-c") and line.startswith(flag) and len(line) > 2
            ):
                ref = line[len(flag) :].lstrip(" =")
                nested.append(os.path.normpath(os.path.join(base, ref)))
                break
        else:
            local = local or local_requirement(line) or line.startswith(("-f", "--find-links"))
    return nested, local


def pyproject_packages(data: bytes) -> list[str]:
    """The requirement strings of pyproject.toml's dependencies, test extras and groups (ValueError: not
    TOML)."""
    import tomllib  # only here: the rubric loads every stack, and reads no manifest

    try:
        doc = tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"pyproject.toml is not valid TOML: {exc}") from None
    project = section if isinstance(section := doc.get("project"), dict) else {}
    found: list[Any] = list(project.get("dependencies") or [])
    extras = section if isinstance(section := project.get("optional-dependencies"), dict) else {}
    groups = section if isinstance(section := doc.get("dependency-groups"), dict) else {}
    for name in PYPROJECT_GROUPS:
        found += list(extras.get(name) or []) + list(groups.get(name) or [])
    # requirement strings only: an option ("--index-url=...") or an include table is not a package
    return list(
        dict.fromkeys(
            p.strip() for p in found if isinstance(p, str) and p.strip() and not p.strip().startswith("-")
        )
    )


def read_requirements(read: ReadManifest) -> tuple[dict[str, bytes], list[str]]:
    """(the requirements files and the files they include with -r/-c, the ones given to pip)."""
    files = {n: data for n in REQUIREMENTS if (data := read(n)) is not None}
    given = list(files)
    queue = list(given)
    while queue and len(files) < MAX_FILES:
        rel = queue.pop(0)
        for inc in requirement_refs(rel, files[rel])[0]:
            inc = inc.replace(os.sep, "/")
            if inc.startswith(("/", "../")) or inc == "..":
                continue  # outside the app: not read (pip, sealed, cannot read it either)
            if inc not in files and (data := read(inc)) is not None:
                files[inc] = data
                queue.append(inc)
    return files, given


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
    dependency_files: ClassVar[tuple[str, ...]] = (*REQUIREMENTS, "pyproject.toml")

    def dependencies(self, read: ReadManifest) -> Dependencies | None:
        """Its requirements files (and what they include), or with none of them what pyproject.toml
        declares."""
        files, requirements = read_requirements(read)
        packages: list[str] = []
        if not requirements and (data := read("pyproject.toml")) is not None:
            packages = pyproject_packages(data)
            files["pyproject.toml"] = data
        if not files:
            return None
        return Dependencies(family=self.family, files=files, requirements=requirements, packages=packages)

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
