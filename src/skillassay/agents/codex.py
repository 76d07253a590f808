"""OpenAI's Codex CLI (``codex exec --json --dangerously-bypass-approvals-and-sandbox``), with a per-run
``CODEX_HOME``.

Codex's own sandbox is off: skillassay's sandbox (bubblewrap) is the boundary. Codex's ``workspace-write`` mode
uses bubblewrap itself when it is installed, and then its patches silently fail to reach the workspace (seen with
Debian's bubblewrap 0.8), so a run would measure Codex's sandbox, not the agent.

Codex discovers personal skills in ``$CODEX_HOME/skills/<name>/SKILL.md`` and lists them to the model; the model reads
a skill by opening its SKILL.md with a shell command. ``system-prompt`` mode passes SKILL.md as the config value
``developer_instructions``.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

from skillassay.agents._common import (
    MAX_RETRIES,
    MODEL_BASE_URL,
    base_env,
    cli_version,
    find_binary,
    install_skill,
    load_skill,
    read_jsonl,
    relative_path,
    run_jsonl_cli,
)
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.transcripts import Message, ToolCall, Transcript, Usage

NAME = "codex"
BIN_ENV = "SKILLASSAY_CODEX_BIN"
# A model name Codex knows: with an unknown one it drops tools such as apply_patch.
DEFAULT_LOCAL_MODEL = "gpt-5.5"
PROVIDER = "skillassay"
API_KEY_ENV = "SKILLASSAY_CODEX_API_KEY"


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class CodexAgent(Agent):
    name = NAME
    description = "OpenAI's Codex CLI (codex exec --json)"

    def __init__(self, binary: str | None = None):
        self._binary = binary

    @property
    def binary(self) -> str | None:
        return self._binary or find_binary("codex", BIN_ENV)

    def version(self) -> str | None:
        return cli_version(self.binary)

    @staticmethod
    def provider_base_url(env: dict[str, str]) -> str | None:
        """``SKILLASSAY_MODEL_BASE_URL`` + ``/v1``, or ``OPENAI_BASE_URL`` as given (it ends in ``/v1`` by custom)."""
        if env.get(MODEL_BASE_URL):
            return env[MODEL_BASE_URL].rstrip("/") + "/v1"
        return env.get("OPENAI_BASE_URL") or None

    def config_toml(self, ctx: AgentContext) -> str:
        lines = ["check_for_update_on_startup = false"]
        base_url = self.provider_base_url(ctx.env)
        model = ctx.model or (DEFAULT_LOCAL_MODEL if base_url else None)
        if model:
            lines.append(f"model = {_toml(model)}")
        if base_url:
            lines.append(f"model_provider = {_toml(PROVIDER)}")
        lines += ["", "[features]", "plugins = false", "", "[analytics]", "enabled = false"]
        if base_url:
            lines += [
                "",
                f"[model_providers.{PROVIDER}]",
                f"name = {_toml(PROVIDER)}",
                f"base_url = {_toml(base_url)}",
                'wire_api = "responses"',
                f"env_key = {_toml(API_KEY_ENV)}",
            ]
            retries = ctx.env.get(MAX_RETRIES)
            if retries is not None and retries.isdigit():
                lines += [f"request_max_retries = {int(retries)}", f"stream_max_retries = {int(retries)}"]
        return "\n".join(lines) + "\n"

    def command(self, ctx: AgentContext, prompt: str, developer_instructions: str | None) -> list[str]:
        argv = [
            self.binary or "codex",
            "exec",
            "--json",
            # the flag Codex documents for "environments that are externally sandboxed": ours
            "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check",
        ]
        if ctx.model:
            argv += ["--model", ctx.model]
        if developer_instructions is not None:
            argv += ["-c", f"developer_instructions={_toml(developer_instructions)}"]
        return argv + ["--", prompt]

    def preflight(self, env, command=None):
        if not self.binary or not (Path(self.binary).exists() or shutil.which(self.binary)):
            return f"codex CLI not found (set ${BIN_ENV}, run `npm ci --prefix node`, or put codex on PATH)"
        if any(env.get(k) for k in ("OPENAI_API_KEY", API_KEY_ENV, MODEL_BASE_URL, "OPENAI_BASE_URL")):
            return None
        return ("codex needs OPENAI_API_KEY (each run has a private CODEX_HOME, so your own login is not used), "
                f"or a model server: --agent-env {MODEL_BASE_URL}=http://127.0.0.1:PORT")

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        env = base_env(ctx.home)
        env["CODEX_HOME"] = str(ctx.home / ".codex")
        env.update(ctx.env)
        if self.provider_base_url(ctx.env):
            env[API_KEY_ENV] = (
                ctx.env.get(API_KEY_ENV) or ctx.env.get("OPENAI_API_KEY") or "skillassay-local-model"
            )
        return env

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.output_dir.mkdir(parents=True, exist_ok=True)
        codex_home = ctx.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        raw = ctx.output_dir / "transcript.raw.jsonl"
        stderr = ctx.output_dir / "agent.stderr.log"
        empty = Transcript(agent=NAME, model=ctx.model)
        binary = self.binary
        if not binary or not (Path(binary).exists() or shutil.which(binary)):
            return AgentResult(
                status="infrastructure_error",
                transcript=empty,
                error=f"codex CLI not found (set ${BIN_ENV}, run `npm ci --prefix node`, or put codex on PATH)",
            )
        (codex_home / "config.toml").write_text(self.config_toml(ctx), encoding="utf-8")

        prompt, instructions = ctx.prompt, None
        if ctx.skill_dir is not None:
            skill = load_skill(ctx.skill_dir)
            if ctx.skill_mode == "native":
                install_skill(skill, codex_home / "skills")
            else:
                instructions = skill.text

        env = self.environment(ctx)
        version = self.version()
        outcome, records, scrub = run_jsonl_cli(self.command(ctx, prompt, instructions), ctx, env, raw, stderr)
        if outcome.error:
            return AgentResult(status="infrastructure_error", transcript=empty, error=outcome.error)
        transcript = parse_exec_json(records, workspace=ctx.workspace, prompt=ctx.prompt)
        transcript.cli_version = version
        transcript.model = ctx.model or (DEFAULT_LOCAL_MODEL if self.provider_base_url(ctx.env) else None)
        session = _session_file(codex_home, transcript.session_id)
        if session is not None:
            stored = ctx.output_dir / "codex.session.jsonl"
            shutil.copyfile(session, stored)
            scrub.file(stored)
            transcript.skills_available = skills_from_session(read_jsonl(stored))
            transcript.skills_source = "session"

        finished = any(r.get("type") in ("turn.completed", "turn.failed") for r in records)
        error = None
        if outcome.timed_out:
            status, error = "timed_out", f"killed after {ctx.timeout:g} s"
        elif finished:
            status = "completed"
        else:
            status = "crashed"
            error = _tail(stderr) or f"exited {outcome.exit_code} without finishing a turn"
        if outcome.exit_code not in (0, None) and status == "completed":
            transcript.is_error = True
        return AgentResult(
            status=status,
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            cli_version=version,
            transcript=transcript,
            raw_transcript=raw,
            stdout=raw,
            stderr=stderr,
            error=error,
        )


def _tail(path: Path, chars: int = 2000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:].strip()
    except OSError:
        return ""


def _session_file(codex_home: Path, session_id: str | None) -> Path | None:
    sessions = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
    if session_id:
        named = [p for p in sessions if session_id in p.name]
        if named:
            return named[-1]
    return sessions[-1] if sessions else None


_SKILL_LINE = re.compile(r"^- ([^:\n]+): .*\(file: [^)]*SKILL\.md\)\s*$", re.MULTILINE)


def skills_from_session(records: Iterable[dict]) -> list[str]:
    """The skills Codex listed to the model, from the ``### Available skills`` block of its session file."""
    names: list[str] = []
    for rec in records:
        payload = rec.get("payload")
        if not isinstance(payload, dict) or payload.get("type") != "message":
            continue
        for part in payload.get("content") or []:
            text = part.get("text") if isinstance(part, dict) else None
            if not text or "### Available skills" not in text:
                continue
            block = text.split("### Available skills", 1)[1].split("\n###", 1)[0]
            for name in _SKILL_LINE.findall(block):
                if name not in names:
                    names.append(name.strip())
        if names:
            break
    return names


def _unwrap_shell(command: str) -> str:
    """``/bin/bash -lc 'cat x'`` -> ``cat x`` (Codex reports the shell wrapper it ran)."""
    try:
        parts = shlex.split(command)
    except ValueError:
        return command
    if len(parts) == 3 and Path(parts[0]).name in ("bash", "sh", "zsh") and parts[1] in ("-lc", "-c"):
        return parts[2]
    return command


_SKILL_READ = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md")


def parse_exec_json(
    records: Iterable[dict], workspace: Path | str | None = None, prompt: str | None = None
) -> Transcript:
    """Codex ``exec --json`` events -> the common ``Transcript``."""
    t = Transcript(agent=NAME)
    if prompt:
        t.messages.append(Message(role="user", text=prompt))
    items: dict[str, dict] = {}
    order: list[str] = []
    usage = Usage()
    turns = 0
    for rec in records:
        kind = rec.get("type")
        if kind == "thread.started":
            t.session_id = rec.get("thread_id")
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = rec.get("item") or {}
            item_id = str(item.get("id") or f"item{len(order)}")
            if item_id not in items:
                order.append(item_id)
            items[item_id] = item
        elif kind == "turn.completed":
            turns += 1
            t.exit_status = "completed"
            u = rec.get("usage") or {}
            usage.input_tokens += int(u.get("input_tokens") or 0)
            usage.output_tokens += int(u.get("output_tokens") or 0)
            usage.cache_read_input_tokens += int(u.get("cached_input_tokens") or 0)
            usage.cache_creation_input_tokens += int(u.get("cache_write_input_tokens") or 0)
        elif kind == "turn.failed":
            turns += 1
            t.exit_status = "failed"
            t.is_error = True
            err = rec.get("error") or {}
            t.final_message = err.get("message") if isinstance(err, dict) else str(err)
        elif kind == "error":
            t.is_error = True
            t.exit_status = t.exit_status or "error"
    t.usage = usage
    t.turns = turns or None

    last_message = None
    for item_id in order:
        item = items[item_id]
        itype = item.get("type")
        status = item.get("status")
        if itype == "agent_message":
            text = str(item.get("text") or "")
            t.messages.append(Message(role="assistant", text=text))
            last_message = text
        elif itype == "command_execution":
            raw_cmd = str(item.get("command") or "")
            call = ToolCall(
                id=item_id,
                name="exec_command",
                input={"command": raw_cmd},
                kind="shell",
                command=_unwrap_shell(raw_cmd),
                exit_code=item.get("exit_code"),
                result=item.get("aggregated_output"),
                is_error=status in ("failed", "declined") or (item.get("exit_code") not in (0, None)),
                denied=status == "declined",
            )
            t.tool_calls.append(call)
            for skill in _SKILL_READ.findall(call.command or ""):
                if skill not in t.skills_invoked:
                    t.skills_invoked.append(skill)
        elif itype == "file_change":
            changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
            kinds = {c.get("kind") for c in changes}
            call = ToolCall(
                id=item_id,
                name="apply_patch",
                input={"changes": changes},
                kind="write" if kinds == {"add"} else "edit",
                paths=[relative_path(str(c.get("path")), workspace) for c in changes if c.get("path")],
                is_error=status in ("failed", "declined"),
                denied=status == "declined",
            )
            t.tool_calls.append(call)
        elif itype == "mcp_tool_call":
            t.tool_calls.append(
                ToolCall(
                    id=item_id,
                    name=f"{item.get('server')}.{item.get('tool')}",
                    input=item.get("arguments") if isinstance(item.get("arguments"), dict) else {},
                    is_error=status == "failed",
                )
            )
        elif itype == "web_search":
            t.tool_calls.append(
                ToolCall(id=item_id, name="web_search", input={"query": item.get("query")}, kind="search")
            )
        elif itype == "error":
            t.is_error = True
    t.permission_denials = [c for c in t.tool_calls if c.denied]
    if t.final_message is None:
        t.final_message = last_message
    return t
