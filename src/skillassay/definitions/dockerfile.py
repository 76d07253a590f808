"""A parser for the Dockerfile subset the fixtures use, so the process backend can run an app without Docker.

Supported: ``FROM node|python[:tag]`` (one stage), ``WORKDIR``, ``COPY``/``ADD`` (ignored: the app runs in a
copy of the build context), ``RUN`` (shell or exec form), ``ENV`` (``K=V ...`` and the legacy ``K V``),
``ARG`` (defaults are substituted), ``EXPOSE``, ``CMD`` and ``ENTRYPOINT`` (exec form JSON or shell form),
comments, line continuations. ``LABEL``, ``USER``, ``HEALTHCHECK``, ``STOPSIGNAL``, ``VOLUME``, ``SHELL`` are
accepted and ignored. Anything else, or a second ``FROM``, is an error naming the file and line.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay import stacks
from skillassay.errors import SkillassayError

IGNORED = {"LABEL", "USER", "HEALTHCHECK", "STOPSIGNAL", "VOLUME", "SHELL", "MAINTAINER", "ONBUILD"}


class DockerfileError(SkillassayError):
    def __init__(self, file: Path | None, line: int, message: str):
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file or '<Dockerfile>'}:{line}: {message}")


class Command(BaseModel):
    """A RUN/CMD/ENTRYPOINT value: either an argv (exec form) or a shell string."""

    exec_form: list[str] | None = None
    shell: str | None = None
    line: int = 0

    def argv(self) -> list[str]:
        if self.exec_form is not None:
            return list(self.exec_form)
        return ["/bin/sh", "-c", self.shell or ""]

    def text(self) -> str:
        return shlex.join(self.exec_form) if self.exec_form is not None else (self.shell or "")


class DockerfileSpec(BaseModel):
    image: str
    runtime: str  # the stack family whose base image it is ("node", "python": stacks/)
    workdir: str = "/"
    env: dict[str, str] = Field(default_factory=dict)
    runs: list[Command] = Field(default_factory=list)
    expose: list[int] = Field(default_factory=list)
    cmd: Command | None = None
    entrypoint: Command | None = None

    def start_argv(self) -> list[str] | None:
        """What ``docker run`` would execute: ENTRYPOINT + CMD by Docker's rules."""
        if self.entrypoint is not None:
            if self.entrypoint.exec_form is None:  # shell-form ENTRYPOINT ignores CMD
                return self.entrypoint.argv()
            return self.entrypoint.argv() + (self.cmd.argv() if self.cmd else [])
        return self.cmd.argv() if self.cmd else None


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continuation lines (trailing backslash); drop comments and blank lines. Returns (first line no,
    text).
    """
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for no, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            # comments (and parser directives) are skipped, even inside a continuation, as Docker does
            continue
        if not buf:
            if not stripped:
                continue
            start = no
        if raw.rstrip().endswith("\\"):
            buf.append(raw.rstrip()[:-1].strip())
            continue
        buf.append(stripped)
        joined = " ".join(p for p in buf if p)
        if joined:
            out.append((start, joined))
        buf = []
    if buf:
        joined = " ".join(p for p in buf if p)
        if joined:
            out.append((start, joined))
    return out


def _command(value: str, line: int, file: Path | None) -> Command:
    v = value.strip()
    if v.startswith("["):
        try:
            parsed = json.loads(v)
        except json.JSONDecodeError:
            parsed = None  # Docker treats invalid JSON as shell form
        if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
            if not parsed:
                raise DockerfileError(file, line, "empty exec form")
            return Command(exec_form=parsed, line=line)
    return Command(shell=v, line=line)


_VAR = re.compile(r"\$(?:\{(\w+)(?::?-([^}]*))?\}|(\w+))")


def _substitute(value: str, variables: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in variables:
            return variables[name]
        return m.group(2) if m.group(2) is not None else ""

    return _VAR.sub(repl, value)


def _env_pairs(value: str, line: int, file: Path | None) -> dict[str, str]:
    tokens = shlex.split(value, posix=True)
    if not tokens:
        raise DockerfileError(file, line, "ENV needs a value")
    if "=" not in tokens[0]:  # legacy form: ENV KEY the rest of the line
        key, _, rest = value.strip().partition(" ")
        return {key: rest.strip()}
    pairs = {}
    for tok in tokens:
        if "=" not in tok:
            raise DockerfileError(file, line, f"ENV item {tok!r} is not KEY=VALUE")
        k, _, v = tok.partition("=")
        pairs[k] = v
    return pairs


def parse_dockerfile(text: str, file: Path | None = None) -> DockerfileSpec:
    image: str | None = None
    workdir = "/"
    env: dict[str, str] = {}
    args: dict[str, str] = {}
    runs: list[Command] = []
    expose: list[int] = []
    cmd: Command | None = None
    entrypoint: Command | None = None
    for line, content in logical_lines(text):
        instr, _, rest = content.partition(" ")
        instr = instr.upper()
        rest = rest.strip()
        if instr == "FROM":
            if image is not None:
                raise DockerfileError(
                    file,
                    line,
                    "multi-stage builds are outside the supported subset; use `run` in eval_config.json",
                )
            tokens = rest.split()
            tokens = [t for t in tokens if not t.startswith("--")]
            if not tokens:
                raise DockerfileError(file, line, "FROM needs an image")
            image = _substitute(tokens[0], args)
        elif instr == "ARG":
            name, _, default = rest.partition("=")
            args[name.strip()] = default.strip().strip('"')
        elif instr == "ENV":
            for k, v in _env_pairs(rest, line, file).items():
                env[k] = _substitute(v, {**args, **env})
        elif instr == "WORKDIR":
            new = _substitute(rest, {**args, **env})
            workdir = new if new.startswith("/") else f"{workdir.rstrip('/')}/{new}"
        elif instr in ("COPY", "ADD"):
            continue
        elif instr == "RUN":
            runs.append(_command(rest, line, file))
        elif instr == "EXPOSE":
            for tok in rest.split():
                port = tok.split("/")[0]
                if not port.isdigit():
                    raise DockerfileError(file, line, f"EXPOSE {tok!r} is not a port")
                expose.append(int(port))
        elif instr == "CMD":
            cmd = _command(rest, line, file)
        elif instr == "ENTRYPOINT":
            entrypoint = _command(rest, line, file)
        elif instr in IGNORED:
            continue
        else:
            raise DockerfileError(file, line, f"{instr} is outside the supported Dockerfile subset")
        if image is None and instr != "ARG":
            raise DockerfileError(file, line, f"{instr} before FROM")
    if image is None:
        raise DockerfileError(file, 0, "no FROM")
    name = image.split("/")[-1].split(":")[0].split("@")[0].lower()
    runtime = stacks.family_of_image(name)
    if runtime is None:
        known = " and ".join(s.family for s in sorted(stacks.families(), key=lambda s: s.order))
        raise DockerfileError(file, 0, f"base image {image!r}: the process backend knows {known} images only")
    return DockerfileSpec(
        image=image,
        runtime=runtime,
        workdir=workdir,
        env=env,
        runs=runs,
        expose=expose,
        cmd=cmd,
        entrypoint=entrypoint,
    )


def load_dockerfile(path: Path) -> DockerfileSpec:
    try:
        text = path.read_text()
    except OSError as e:
        raise DockerfileError(path, 0, f"cannot read: {e}") from e
    return parse_dockerfile(text, path)
