"""``skillassay install-agents``: the pinned agent CLIs installed with npm into skillassay's own cache.

A pip user has no checkout and so no ``node/``; the pins travel in the package instead (``node/package.json``
and its lock file, as package data), and ``npm ci`` installs exactly those versions into
``<cache>/node/node_modules``, where the CLI agents look after a checkout's own ``node/``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from skillassay.errors import SkillassayError
from skillassay.paths import cache_dir

PIN_FILES = ("package.json", "package-lock.json")


def cli_packages() -> dict[str, str]:
    """Agent name -> npm package, for every registered agent that is an npm-installed CLI."""
    from skillassay.agents.installed import CliAgent
    from skillassay.plugins import load, names

    out = {}
    for name in names("skillassay.agents"):
        try:
            cls = load("skillassay.agents", name)
        except Exception:  # noqa: BLE001 - a broken third-party agent is not ours to install
            continue
        if isinstance(cls, type) and issubclass(cls, CliAgent) and getattr(cls, "package", None):
            out[name] = cls.package
    return out


def pins_dir() -> Path:
    """The folder holding the pinned ``package.json`` and lock file: package data in a wheel, ``node/`` in a
    checkout."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / "data" / "node", here.parents[3] / "node"):
        if all((candidate / f).is_file() for f in PIN_FILES):
            return candidate
    raise SkillassayError(
        "this copy of skillassay carries no pinned node/package.json (a wheel built without package data?)"
    )


def pinned_versions() -> dict[str, str]:
    """Agent name -> the CLI version skillassay pins."""
    deps = json.loads((pins_dir() / "package.json").read_text(encoding="utf-8")).get("dependencies") or {}
    return {agent: deps[pkg] for agent, pkg in cli_packages().items() if pkg in deps}


def install_target() -> Path:
    return cache_dir() / "node"


def install_agents(*, npm: str | None = None, log=print) -> Path:
    """Install the pinned CLIs into the cache (``npm ci``: exactly the lock file's versions). Returns the
    folder.
    """
    npm = npm or shutil.which("npm")
    if npm is None:
        raise SkillassayError(
            "npm is not installed: the agent CLIs are npm packages (Debian: apt-get install "
            "nodejs npm; Node 20 or newer)"
        )
    target = install_target()
    target.mkdir(parents=True, exist_ok=True)
    source = pins_dir()
    for name in PIN_FILES:
        shutil.copy2(source / name, target / name)
    log(f"installing {', '.join(f'{p}@{v}' for p, v in _cli_pins(target).items())} into {target}")
    proc = subprocess.run(
        [npm, "ci", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise SkillassayError(f"npm ci into {target} failed (exit {proc.returncode}):\n{tail}")
    return target


def _cli_pins(target: Path) -> dict[str, str]:
    deps = json.loads((target / "package.json").read_text(encoding="utf-8")).get("dependencies") or {}
    return {pkg: deps[pkg] for pkg in cli_packages().values() if pkg in deps}
