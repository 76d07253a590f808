"""Any command line as an agent: ``{prompt}``, ``{workspace}`` and ``{skill}`` are substituted per argument
(no shell). The skill folder is also given as ``SKILLASSAY_SKILL_DIR`` (absent in a baseline run), so a
wrapper can install it wherever its agent looks. The skill is a copy in the run's home
(``$HOME/skills/<name>``): a sealed command does not see the suite the skill came from. Sealed, the
command's program is made visible read-only when it lives outside the system folders (a wrapper script
given by absolute path); more is granted with ``--mount``.

Its environment is explicit, like every agent's (``agents/cli.agent_env``): PATH and the locale of the
host, a private HOME, ``ctx.env`` without provider keys, and the model endpoint under every name an SDK
looks for (``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY``, ``OPENAI_BASE_URL``/``OPENAI_API_KEY``, and
``SKILLASSAY_MODEL_BASE_URL``/``SKILLASSAY_MODEL_TOKEN``), so an SDK-based agent reaches its model through
the job's proxy with no configuration."""

from __future__ import annotations

import shlex
from pathlib import Path

from skillassay.agents._common import Scrubber, SkillError, install_skill, load_skill, run_process
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.agents.installed import agent_env
from skillassay.isolation import Mount
from skillassay.transcripts import Message, Transcript

NAME = "command"


def build_argv(command: str, prompt: str, workspace: str, skill: str = "") -> list[str]:
    """Split first, substitute after: a prompt with quotes or spaces stays one argument."""
    return [
        arg.replace("{prompt}", prompt).replace("{workspace}", workspace).replace("{skill}", skill)
        for arg in shlex.split(command)
    ]


def endpoint_env(endpoint) -> dict[str, str]:
    root = endpoint.base_url.rstrip("/")
    return {
        "SKILLASSAY_MODEL_BASE_URL": root,
        "SKILLASSAY_MODEL_TOKEN": endpoint.token,
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": endpoint.token,
        "OPENAI_BASE_URL": root + "/v1",
        "OPENAI_API_KEY": endpoint.token,
    }


class CommandAgent(Agent):
    name = NAME
    description = "any command line, with {prompt} and {workspace} placeholders"
    model_api = "any"  # whatever the command speaks: the proxy passes on both APIs

    def preflight(self, env, command=None):
        if not command or not command.strip():
            return (
                "--agent command needs --command, a command line with {prompt} and {workspace} (and {skill})"
            )
        try:
            build_argv(command, "", "", "")
        except ValueError as exc:
            return f"--command cannot be split into arguments: {exc}"
        return None

    def mounts(self, ctx: AgentContext | None = None) -> list[Mount]:
        if ctx is None or not ctx.command:
            return []
        try:
            program = Path(shlex.split(ctx.command)[0])
        except (ValueError, IndexError):
            return []
        if not program.is_absolute() or not program.exists() or str(program.resolve()).startswith("/usr/"):
            return []
        return [Mount(src=program.resolve(), dest=program)]

    def run(self, ctx: AgentContext) -> AgentResult:
        empty = Transcript(agent=NAME)
        if not ctx.command or not ctx.command.strip():
            return AgentResult(
                status="harness_error",
                error_kind="bad_input",
                transcript=empty,
                error="the command agent needs a command line (with {prompt} and {workspace})",
            )
        skill_dir = ""
        if ctx.skill_dir is not None:
            try:
                skill_dir = str(install_skill(load_skill(ctx.skill_dir), ctx.home / "skills"))
            except SkillError as exc:
                return AgentResult(
                    status="harness_error", error_kind="bad_input", transcript=empty, error=str(exc)
                )
        try:
            argv = build_argv(ctx.command, ctx.prompt, str(ctx.workspace), skill_dir)
        except ValueError as exc:
            return AgentResult(
                status="harness_error",
                error_kind="bad_input",
                transcript=empty,
                error=f"cannot split the command line: {exc}",
            )
        ctx.output_dir.mkdir(parents=True, exist_ok=True)
        stdout = ctx.output_dir / "agent.stdout.log"
        stderr = ctx.output_dir / "agent.stderr.log"
        ctx.home.mkdir(parents=True, exist_ok=True)
        env = agent_env(ctx.home, ctx.env)
        if ctx.model_endpoint is not None:
            env.update(endpoint_env(ctx.model_endpoint))
        env.pop("SKILLASSAY_SKILL_DIR", None)
        if skill_dir:
            env["SKILLASSAY_SKILL_DIR"] = skill_dir
        outcome = run_process(
            argv,
            cwd=ctx.workspace,
            env=env,
            timeout=ctx.timeout,
            stdout=stdout,
            stderr=stderr,
            sandbox=ctx.sandbox,
        )
        if outcome.error:
            return AgentResult(
                status="harness_error",
                transcript=empty,
                error=outcome.error,
                error_kind="sandbox_failed" if outcome.sandbox_failed else "cli_not_found",
            )
        scrub = Scrubber(env)
        scrub.file(stdout)
        scrub.file(stderr)
        text = _tail_text(stdout, MAX_MESSAGE_BYTES).strip()
        transcript = Transcript(
            agent=NAME,
            messages=[Message(role="user", text=ctx.prompt)]
            + ([Message(role="assistant", text=text)] if text else []),
            final_message=text or None,
            is_error=outcome.exit_code not in (0, None),
            exit_status=None if outcome.timed_out else f"exit {outcome.exit_code}",
            duration_ms=int(outcome.duration_s * 1000),
        )
        status = "timed_out" if outcome.timed_out else ("agent_error" if outcome.exit_code else "completed")
        signal = -outcome.exit_code if outcome.exit_code is not None and outcome.exit_code < 0 else None
        return AgentResult(
            status=status,
            exit_code=None if signal else outcome.exit_code,
            signal=signal,
            error_kind="exit_nonzero" if status == "agent_error" else None,
            duration_s=outcome.duration_s,
            transcript=transcript,
            stdout=stdout,
            stderr=stderr,
            error=f"killed after {ctx.timeout:g} s"
            if outcome.timed_out
            else (f"exited {outcome.exit_code}" if status == "agent_error" else None),
        )


# the end of the output is the command's last word; agent.stdout.log keeps the rest
MAX_MESSAGE_BYTES = 1 << 20


def _tail_text(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of ``path`` as text (a command may print gigabytes: never all read at
    once).
    """
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - limit))
        return fh.read().decode("utf-8", errors="replace")
