"""How to install, build and start an app: the fixture's Dockerfile, overridden by ``run`` in
eval_config.json.

Install commands the cache understands (``npm ci``, ``npm install`` without package names, ``pip install -r
...``, ``pip install <pkgs>``) become one cached install step; every other RUN becomes a build command run in
the app copy.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from skillassay import stacks
from skillassay.definitions.dockerfile import DockerfileSpec, load_dockerfile
from skillassay.definitions.models import EvalDefinition, RunSteps
from skillassay.errors import SkillassayError


class InstallSpec(BaseModel):
    """The dependency install the cache performs. Everything here goes into the cache key."""

    # the runtime family whose install commands ``classify`` folds (npm's, into ``npm_argv``); another
    # folder family's install is what its stack declares for the app's manifest (``Stack.dependencies``)
    folds: ClassVar[str] = "node"
    npm_argv: list[str] | None = None  # e.g. ["npm", "ci"]
    pip_requirements: list[str] = Field(default_factory=list)  # files, relative to the app root
    pip_args: list[str] = Field(default_factory=list)  # packages / flags other than -r

    @property
    def empty(self) -> bool:
        return self.npm_argv is None and not self.pip_requirements and not self.pip_args


class RunPlan(BaseModel):
    runtime: str  # the stack family that runs it ("node", "python": stacks/)
    install: InstallSpec = Field(default_factory=InstallSpec)
    build: list[list[str]] = Field(default_factory=list)  # argv lists, run in the app copy
    start: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    health_path: str = "/health"
    app_port: int | None = None
    workdir: str = "/"  # the Dockerfile's WORKDIR: absolute paths under it in CMD point into the app copy
    source: str = "Dockerfile"  # where the steps came from: "Dockerfile", "run", "Dockerfile+run"


_SEPARATORS = ("&&", ";")


def _split_shell(command: str) -> list[str]:
    """Split ``a && b ; c`` into its simple commands (quotes respected). Pipes/redirections stay as one
    command.
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    for tok in lexer:
        if tok in _SEPARATORS:
            parts.append([])
        else:
            parts[-1].append(tok)
    if any(t in ("|", "||", "&", ">", "<") for p in parts for t in p):
        return [command]  # not simple: run it whole
    return [shlex.join(p) for p in parts if p]


def classify(command: str, install: InstallSpec, runtime: str | None = None) -> list[str]:
    """Fold recognised install commands of ``command`` into ``install`` (and drop those the ``runtime``
    family's cached install does: ``Stack.folds_install``); return what is left, as shell commands.
    """
    leftover: list[str] = []
    family = stacks.family(runtime) if runtime is not None else None
    for part in _split_shell(command):
        try:
            tokens = shlex.split(part)
        except ValueError:
            leftover.append(part)
            continue
        if _fold_npm(tokens, install) or _fold_pip(tokens, install):
            continue
        if family is not None and family.folds_install(tokens):
            continue
        leftover.append(part)
    return leftover


def _fold_npm(tokens: list[str], install: InstallSpec) -> bool:
    if len(tokens) < 2 or tokens[0] != "npm":
        return False
    verb, rest = tokens[1], tokens[2:]
    if verb == "ci" or (verb in ("install", "i") and all(t.startswith("-") for t in rest)):
        if any(t in ("-g", "--global") for t in rest):
            return False
        install.npm_argv = ["npm", verb, *rest]
        return True
    return False


def _fold_pip(tokens: list[str], install: InstallSpec) -> bool:
    if tokens[:3] in (["python", "-m", "pip"], ["python3", "-m", "pip"]):
        tokens = ["pip", *tokens[3:]]
    if len(tokens) < 2 or tokens[0] not in ("pip", "pip3") or tokens[1] != "install":
        return False
    rest = tokens[2:]
    i = 0
    harmless = {
        "--no-cache-dir",
        "--user",
        "--quiet",
        "-q",
        "--disable-pip-version-check",
        "--root-user-action=ignore",
    }
    while i < len(rest):
        tok = rest[i]
        if tok in ("-r", "--requirement") and i + 1 < len(rest):
            install.pip_requirements.append(rest[i + 1])
            i += 2
            continue
        if tok.startswith("--requirement="):
            install.pip_requirements.append(tok.split("=", 1)[1])
        elif tok in ("-e", "--editable") or tok == ".":
            return False  # installs the app itself: not cacheable, run it in the copy
        elif tok in harmless or tok.startswith("--root-user-action"):
            pass
        else:
            install.pip_args.append(tok)
        i += 1
    return True


def _start_from(value: list[str] | str) -> list[str]:
    return ["/bin/sh", "-c", value] if isinstance(value, str) else list(value)


def _runtime_from_files(app_dir: Path) -> str:
    family = stacks.family_from_files(app_dir)
    if family is None:
        known = " or a ".join(s.family for s in sorted(stacks.families(), key=lambda s: s.order))
        raise SkillassayError(
            f"{app_dir}: cannot tell whether this is a {known} app; add a Dockerfile or `run`"
        )
    return family


def _stack_commands(app_dir: Path) -> RunSteps | None:
    """The app's stack's own commands (``Stack.commands``), when its stack has them."""
    stack = stacks.detect(app_dir) if app_dir.is_dir() else None
    own = stack.commands(app_dir) if stack is not None else None
    return RunSteps(install=own.install, build=own.build, start=own.start) if own is not None else None


def make_plan(app_dir: Path, dockerfile: Path | None, run: RunSteps | None, app_port: int | None) -> RunPlan:
    spec: DockerfileSpec | None = load_dockerfile(dockerfile) if dockerfile and dockerfile.exists() else None
    if spec is None and run is None:
        run = _stack_commands(app_dir)
    if spec is None and run is None:
        raise SkillassayError(
            f"{app_dir}: no Dockerfile and no `run` section: nothing says how to start the app"
        )
    install = InstallSpec()
    build: list[str] = []
    env: dict[str, str] = {}
    start: list[str] | None = None
    if spec is not None:
        env.update(spec.env)
        for cmd in spec.runs:
            if cmd.exec_form is not None:
                build.extend(classify(shlex.join(cmd.exec_form), install, spec.runtime))
            else:
                build.extend(classify(cmd.shell or "", install, spec.runtime))
        start = spec.start_argv()
    if run is not None:
        if run.install is not None:
            install = InstallSpec()
            extra: list[str] = []
            for c in run.install:
                extra.extend(classify(c, install))
            build_override = run.build if run.build is not None else list(build)
            build = extra + list(build_override)
        elif run.build is not None:
            build = list(run.build)
        if run.start is not None:
            start = _start_from(run.start)
        env.update(run.env)
    if not start:
        raise SkillassayError(
            f"{dockerfile or app_dir}: no CMD/ENTRYPOINT and no run.start: nothing starts the app"
        )
    runtime = spec.runtime if spec is not None else _runtime_from_files(app_dir)
    port = app_port if app_port is not None else (spec.expose[0] if spec and spec.expose else None)
    source = (
        "Dockerfile+run"
        if spec is not None and run is not None
        else ("run" if spec is None else "Dockerfile")
    )
    return RunPlan(
        runtime=runtime,
        install=install,
        build=[["/bin/sh", "-c", b] for b in build],
        start=start,
        env=env,
        health_path=run.health_path if run is not None else "/health",
        app_port=port,
        workdir=spec.workdir if spec is not None else "/",
        source=source,
    )


def plan_for(definition: EvalDefinition, app_dir: Path) -> RunPlan:
    return make_plan(
        app_dir,
        definition.dockerfile or (definition.fixture_dir / "Dockerfile"),
        definition.run_steps,
        definition.app_port,
    )
