"""Any command line as an agent: ``{prompt}``, ``{workspace}`` and ``{skill}`` are substituted per argument (no
shell). The skill folder is also given as ``SKILLASSAY_SKILL_DIR`` (absent in a baseline run), so a wrapper can
install it wherever its agent looks.

Its environment is explicit, like every agent's (``agents/cli.agent_env``): PATH and the locale of the host, a private
HOME, ``ctx.env`` without provider keys, and the model endpoint under every name an SDK looks for
(``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY``, ``OPENAI_BASE_URL``/``OPENAI_API_KEY``, and
``SKILLASSAY_MODEL_BASE_URL``/``SKILLASSAY_MODEL_TOKEN``), so an SDK-based agent reaches its model through the job's
proxy with no configuration."""

from __future__ import annotations

import shlex

from skillassay.agents._common import Scrubber, run_process
from skillassay.agents.cli import agent_env
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.transcripts import Message, Transcript

NAME = "command"


def build_argv(command: str, prompt: str, workspace: str, skill: str = "") -> list[str]:
    """Split first, substitute after: a prompt with quotes or spaces stays one argument."""
    return [arg.replace("{prompt}", prompt).replace("{workspace}", workspace).replace("{skill}", skill)
            for arg in shlex.split(command)]


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
            return "--agent command needs --command, a command line with {prompt} and {workspace} (and {skill})"
        try:
            build_argv(command, "", "", "")
        except ValueError as exc:
            return f"--command cannot be split into arguments: {exc}"
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        empty = Transcript(agent=NAME)
        if not ctx.command or not ctx.command.strip():
            return AgentResult(
                status="harness_error",
                error_kind="bad_input",
                transcript=empty,
                error="the command agent needs a command line (with {prompt} and {workspace})",
            )
        try:
            argv = build_argv(ctx.command, ctx.prompt, str(ctx.workspace), str(ctx.skill_dir or ""))
        except ValueError as exc:
            return AgentResult(
                status="harness_error", error_kind="bad_input", transcript=empty, error=f"cannot split the command line: {exc}"
            )
        ctx.output_dir.mkdir(parents=True, exist_ok=True)
        stdout = ctx.output_dir / "agent.stdout.log"
        stderr = ctx.output_dir / "agent.stderr.log"
        ctx.home.mkdir(parents=True, exist_ok=True)
        env = agent_env(ctx.home, ctx.env)
        if ctx.model_endpoint is not None:
            env.update(endpoint_env(ctx.model_endpoint))
        env.pop("SKILLASSAY_SKILL_DIR", None)
        if ctx.skill_dir is not None:
            env["SKILLASSAY_SKILL_DIR"] = str(ctx.skill_dir)
        outcome = run_process(
            argv, cwd=ctx.workspace, env=env, timeout=ctx.timeout, stdout=stdout, stderr=stderr
        )
        if outcome.error:
            return AgentResult(status="harness_error", error_kind="cli_not_found", transcript=empty,
                               error=outcome.error)
        scrub = Scrubber(env)
        scrub.file(stdout)
        scrub.file(stderr)
        text = stdout.read_text(encoding="utf-8", errors="replace").strip()
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
            error=f"killed after {ctx.timeout:g} s" if outcome.timed_out else (
                f"exited {outcome.exit_code}" if status == "agent_error" else None),
        )
