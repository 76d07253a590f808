"""CLI commands about this machine: ``doctor`` (what it has and lacks for each feature) and
``install-agents``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import typer
from pydantic import BaseModel

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py
SMOKE_BY_DEFAULT = True  # the canary of two evals: about 40 s warm with an empty canary cache, nothing cached


class Finding(BaseModel):
    part: str
    needed_for: str
    ok: bool
    found: str  # the version or path found, or why not
    fix: str | None = None  # the command that installs it


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    found = re.search(r"\d+(\.\d+)+", out.stdout + out.stderr)
    return found.group(0) if found else (out.stdout.strip() or "present")


def _major(version: str | None) -> int:
    return int(version.split(".")[0]) if version and version[0].isdigit() else 0


def _apt(*packages: str) -> str:
    return f"sudo apt-get install -y {' '.join(packages)}"


def findings() -> list[Finding]:
    out: list[Finding] = []
    py = ".".join(map(str, sys.version_info[:3]))
    out.append(
        Finding(
            part="Python",
            needed_for="everything",
            ok=sys.version_info >= (3, 11),
            found=py,
            fix=None if sys.version_info >= (3, 11) else "Python 3.11 or newer",
        )
    )
    git = _version(["git", "--version"])
    out.append(
        Finding(
            part="git",
            needed_for="every run (workspaces are git repositories)",
            ok=git is not None,
            found=git or "not found",
            fix=None if git else _apt("git"),
        )
    )
    node, npm = _version(["node", "--version"]), _version(["npm", "--version"])
    node_ok = _major(node) >= 20
    out.append(
        Finding(
            part="Node.js >= 20 and npm",
            needed_for="TypeScript fixture apps, the agent CLIs",
            ok=node_ok and npm is not None,
            found=f"node {node or 'not found'}, npm {npm or 'not found'}",
            fix=None if node_ok and npm else _apt("nodejs", "npm") + "  (Node 20 or newer)",
        )
    )
    out.extend(_agents())
    out.extend(_isolation())
    strace = shutil.which("strace")
    out.append(
        Finding(
            part="strace",
            needed_for="the out-of-bounds audit of sealed runs",
            ok=strace is not None,
            found=strace or "not found",
            fix=None if strace else _apt("strace"),
        )
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    out.append(
        Finding(
            part="Chromium",
            needed_for="the report's browser tests (not for using skillassay)",
            ok=chromium is not None,
            found=chromium or "not found",
            fix=None if chromium else _apt("chromium"),
        )
    )
    try:
        import ray

        out.append(Finding(part="Ray", needed_for="run --executor ray", ok=True, found=ray.__version__))
    except ImportError:
        out.append(
            Finding(
                part="Ray",
                needed_for="run --executor ray",
                ok=False,
                found="not installed",
                fix="pip install 'skillassay[ray]'",
            )
        )
    docker = shutil.which("docker")
    engine = (
        docker is not None
        and subprocess.run([docker, "info"], capture_output=True, timeout=30, check=False).returncode == 0
    )
    out.append(
        Finding(
            part="Docker engine",
            needed_for="--backend docker (optional; the host backend needs none)",
            ok=engine,
            found="running" if engine else ("client only, no engine" if docker else "not found"),
            fix=None if engine else "install and start Docker Engine (https://docs.docker.com/engine/)",
        )
    )
    return out


def _agents() -> list[Finding]:
    from skillassay.agents import get_agent
    from skillassay.agents.install import pinned_versions

    pins = pinned_versions()
    out = []
    for name, pin in pins.items():
        try:
            agent = get_agent(name)
            binary = getattr(agent, "binary", None)
            version = agent.version() if binary else None
        except Exception as exc:  # noqa: BLE001 - a broken install is a finding, not a crash
            binary, version = None, f"error: {exc}"
        ok = version == pin
        found = f"{version} ({binary})" if binary else "not installed"
        if binary and not ok:
            found += f", but {pin} is pinned"
        out.append(
            Finding(
                part=f"{name} CLI {pin}",
                needed_for=f"--agent {name}",
                ok=ok,
                found=found,
                fix=None if ok else "skillassay install-agents",
            )
        )
    return out


def _isolation() -> list[Finding]:
    from skillassay.isolation import get_isolation

    problem = get_isolation("bubblewrap").problem()
    return [
        Finding(
            part="bubblewrap",
            needed_for="sealed runs (the default; --isolation none runs unsealed)",
            ok=problem is None,
            found=shutil.which("bwrap") or "not found" if problem else "works",
            fix=None if problem is None else f"{_apt('bubblewrap')}  ({problem})",
        )
    ]


def smoke_findings(suite: Path | None, isolation: str) -> list[Finding]:
    """The golden canary (orchestrator/canary.py) of one Python and one Node eval: can this machine measure
    them?
    """
    from skillassay.definitions import load_suite
    from skillassay.orchestrator import canary
    from skillassay.scaffold import starter_sources

    evals = canary.smoke_evals(load_suite(suite if suite is not None else starter_sources()[0]))
    out = []
    for d, c in zip(evals, canary.smoke(evals, isolation=isolation), strict=True):
        found = (
            ("the golden passes here" + (" (cached)" if c.cached else ""))
            if c.status == "passed"
            else (c.reason or c.status)
        )
        out.append(
            Finding(
                part=f"canary {d.id}",
                needed_for=f"measuring {d.language} evals on this machine"
                + (f" ({d.stack})" if d.stack != "unknown" else ""),
                ok=c.passed,
                found=found,
                fix=None if c.passed else f"skillassay sandbox {d.fixture_dir} shows the golden's logs",
            )
        )
    return out


@commands.command("doctor")
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    smoke: bool | None = typer.Option(
        None,
        "--smoke/--no-smoke",
        help="Grade one Python and one Node eval's golden here, every layer "
        "but the LLM judge (the canary a run does; a cached pass is "
        "free). Default: on, unless SKILLASSAY_CANARY_RUNS=0.",
    ),
    suite: Path | None = typer.Option(
        None, "--suite", help="The suite --smoke picks its evals from (default: the shipped one)."
    ),
) -> None:
    """Say what this machine has and lacks for each feature, and the command that installs each missing part.

    Exit code 0 when everything a run needs by default is here (Python, git, Node, bubblewrap) and, with
    --smoke, the goldens pass here; 1 otherwise; optional parts (Ray, Docker, Chromium, the agent CLIs)
    only warn."""
    found = findings()
    required = {"Python", "git", "Node.js >= 20 and npm", "bubblewrap"}
    from skillassay.errors import SkillassayError
    from skillassay.orchestrator.canary import default_runs

    if smoke is None:
        try:
            smoke = SMOKE_BY_DEFAULT and default_runs() > 0
        except SkillassayError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
    if smoke:
        sealed = next(f.ok for f in found if f.part == "bubblewrap")
        try:
            canaries = smoke_findings(suite, "bubblewrap" if sealed else "none")
        except SkillassayError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        found.extend(canaries)
        required |= {f.part for f in canaries}
    missing = [f for f in found if not f.ok and f.part in required]
    if as_json:
        typer.echo(json.dumps([f.model_dump() for f in found], indent=2))
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        table = Table(title="skillassay doctor")
        for col in ("part", "for", "status", "found", "to install"):
            table.add_column(col, overflow="fold")
        for f in found:
            status = (
                "[green]ok[/green]"
                if f.ok
                else (
                    "[red]fails here[/red]"
                    if f.part.startswith("canary ")
                    else "[red]missing[/red]"
                    if f.part in required
                    else "[yellow]missing[/yellow]"
                )
            )
            table.add_row(
                *(escape(x) for x in (f.part, f.needed_for)),
                status,
                *(escape(x) for x in (f.found, f.fix or "")),
            )
        Console(width=160 if not sys.stdout.isatty() else None).print(table)
    raise typer.Exit(1 if missing else 0)


@commands.command("install-agents")
def install_agents() -> None:
    """Install the pinned Claude Code and Codex CLIs with npm into skillassay's cache
    ($SKILLASSAY_CACHE_DIR or ~/.cache/skillassay), where `--agent claude-code` and `--agent codex` find them.
    Needs npm and the npm registry; a checkout's own node/ (scripts/setup.sh) is used first when present."""
    from skillassay.agents.install import install_agents as install

    target = install(log=typer.echo)
    typer.echo(f"done: {target / 'node_modules' / '.bin'}")
