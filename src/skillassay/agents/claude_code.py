"""Claude Code (``claude -p ... --output-format stream-json --verbose``), run offline-capable in a private home.

The skill is installed where the CLI discovers personal skills (``$CLAUDE_CONFIG_DIR/skills/<name>/``), outside the
workspace, so the diff only holds the agent's changes; or, in ``system-prompt`` mode, appended to the system prompt.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillassay.agents._common import (
    MAX_RETRIES,
    MODEL_BASE_URL,
    OFFLINE_ENV,
    base_env,
    cli_version,
    find_binary,
    install_skill,
    load_skill,
    relative_path,
    run_jsonl_cli,
    skill_prompt_block,
)
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.transcripts import Message, ToolCall, Transcript, Usage

NAME = "claude-code"
BIN_ENV = "SKILLASSAY_CLAUDE_BIN"

_KINDS = {
    "Read": "read",
    "NotebookRead": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Bash": "shell",
    "BashOutput": "shell",
    "Glob": "search",
    "Grep": "search",
    "WebSearch": "search",
    "ToolSearch": "search",
    "Skill": "skill",
}
_WRITERS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}


class ClaudeCodeAgent(Agent):
    name = NAME
    description = "Anthropic's Claude Code CLI (claude -p, stream-json transcript)"

    def __init__(self, binary: str | None = None):
        self._binary = binary

    @property
    def binary(self) -> str | None:
        return self._binary or find_binary("claude", BIN_ENV)

    def version(self) -> str | None:
        return cli_version(self.binary)

    def supports_system_prompt_flag(self) -> bool:
        try:
            out = subprocess.run(
                [self.binary or "claude", "--help"],
                check=False,
                capture_output=True,
                text=True,
                timeout=30,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return "--append-system-prompt" in out.stdout

    def command(self, ctx: AgentContext, prompt: str, system_prompt: str | None) -> list[str]:
        argv = [self.binary or "claude", "-p", prompt, "--output-format", "stream-json", "--verbose"]
        if ctx.allowed_tools:
            argv += ["--allowedTools", ",".join(ctx.allowed_tools)]
        if ctx.model:
            argv += ["--model", ctx.model]
        if system_prompt is not None:
            argv += ["--append-system-prompt", system_prompt]
        return argv

    def preflight(self, env, command=None):
        if not self.binary or not (Path(self.binary).exists() or shutil.which(self.binary)):
            return f"claude CLI not found (set ${BIN_ENV}, run `npm ci --prefix node`, or put claude on PATH)"
        if any(env.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                                    "ANTHROPIC_BASE_URL", MODEL_BASE_URL)):
            return None
        return ("claude-code needs ANTHROPIC_API_KEY (each run has a private home, so your own login is not used), "
                f"or a model server: --agent-env {MODEL_BASE_URL}=http://127.0.0.1:PORT")

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        config_dir = ctx.home / ".claude"
        env = base_env(ctx.home)
        env.update(OFFLINE_ENV)
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        extra = dict(ctx.env)
        if MODEL_BASE_URL in extra and "ANTHROPIC_BASE_URL" not in extra:
            extra["ANTHROPIC_BASE_URL"] = extra[MODEL_BASE_URL]
        if MAX_RETRIES in extra and "CLAUDE_CODE_MAX_RETRIES" not in extra:
            extra["CLAUDE_CODE_MAX_RETRIES"] = extra[MAX_RETRIES]
        env.update(extra)
        base_url = env.get("ANTHROPIC_BASE_URL", "")
        if not env.get("ANTHROPIC_API_KEY") and re.match(r"https?://(127\.0\.0\.1|localhost)[:/]", base_url):
            # a local model server needs some key, any key
            env["ANTHROPIC_API_KEY"] = "skillassay-local-model"
        return env

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.output_dir.mkdir(parents=True, exist_ok=True)
        ctx.home.mkdir(parents=True, exist_ok=True)
        raw = ctx.output_dir / "transcript.raw.jsonl"
        stderr = ctx.output_dir / "agent.stderr.log"
        empty = Transcript(agent=NAME, model=ctx.model)
        binary = self.binary
        if not binary or not (Path(binary).exists() or shutil.which(binary)):
            return AgentResult(
                status="infrastructure_error",
                transcript=empty,
                error=f"claude CLI not found (set ${BIN_ENV}, run `npm ci --prefix node`, or put claude on PATH)",
            )
        config_dir = ctx.home / ".claude"
        config_dir.mkdir(parents=True, exist_ok=True)

        prompt, system_prompt = ctx.prompt, None
        notes: list[str] = []
        if ctx.skill_dir is not None:
            skill = load_skill(ctx.skill_dir)
            if ctx.skill_mode == "native":
                install_skill(skill, config_dir / "skills")
            elif self.supports_system_prompt_flag():
                system_prompt = skill.text
            else:
                prompt = skill_prompt_block(skill) + prompt
                notes.append("--append-system-prompt unavailable: SKILL.md prepended to the prompt")

        env = self.environment(ctx)
        version = self.version()
        outcome, records, _ = run_jsonl_cli(self.command(ctx, prompt, system_prompt), ctx, env, raw, stderr)
        if outcome.error:
            return AgentResult(status="infrastructure_error", transcript=empty, error=outcome.error)
        transcript = parse_stream_json(records, workspace=ctx.workspace, prompt=ctx.prompt)
        transcript.cli_version = transcript.cli_version or version
        if transcript.model is None:
            transcript.model = ctx.model
        has_result = any(r.get("type") == "result" for r in records)

        error = None
        if outcome.timed_out:
            status = "timed_out"
            error = f"killed after {ctx.timeout:g} s"
        elif has_result and _auth_failure(records):
            # the model never answered: the harness's set-up failed, not the agent (rerun with --resume)
            status = "infrastructure_error"
            error = f"the model API refused the key: {transcript.final_message or 'authentication failed'}"
        elif has_result:
            status = "completed"  # also on a non-zero exit: an agent error is the agent's outcome
        else:
            status = "crashed"
            error = _tail(stderr) or f"exited {outcome.exit_code} without a result record"
        return AgentResult(
            status=status,
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            cli_version=transcript.cli_version,
            transcript=transcript,
            raw_transcript=raw,
            stdout=raw,
            stderr=stderr,
            error=error,
            notes=notes,
        )


def _auth_failure(records: list[dict]) -> bool:
    """The CLI's result says it could not authenticate (no login, a bad key), before any model turn."""
    for r in records:
        if r.get("type") != "result" or not r.get("is_error"):
            continue
        if r.get("api_error_status") in (401, 403):
            return True
        text = str(r.get("result") or "").lower()
        if "not logged in" in text or "invalid api key" in text or "authentication_error" in text:
            return True
    return False


def _tail(path: Path, chars: int = 2000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:].strip()
    except OSError:
        return ""


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


def _call_paths(name: str, tool_input: dict, structured: Any, workspace: Path | str | None) -> list[str]:
    if name not in _WRITERS:
        return []
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if isinstance(structured, dict):
        path = structured.get("filePath") or path
    return [relative_path(str(path), workspace)] if path else []


def parse_stream_json(
    records: Iterable[dict], workspace: Path | str | None = None, prompt: str | None = None
) -> Transcript:
    """Claude Code's stream-json records -> the common ``Transcript``."""
    t = Transcript(agent=NAME)
    if prompt:
        t.messages.append(Message(role="user", text=prompt))
    calls: dict[str, ToolCall] = {}
    message_text: dict[str, int] = {}  # assistant message id -> index in t.messages (text blocks are merged)
    message_usage: dict[str, dict] = {}
    result: dict | None = None
    cwd = workspace

    for rec in records:
        kind = rec.get("type")
        if kind == "system" and rec.get("subtype") == "init":
            t.session_id = rec.get("session_id") or t.session_id
            t.model = rec.get("model") or t.model
            t.cli_version = rec.get("claude_code_version") or t.cli_version
            t.skills_available = [str(s) for s in rec.get("skills") or []]
            t.skills_source = "cli"
            cwd = cwd or rec.get("cwd")
        elif kind == "assistant":
            msg = rec.get("message") or {}
            msg_id = msg.get("id") or rec.get("uuid") or f"anon{len(message_usage)}"
            if isinstance(msg.get("usage"), dict):
                message_usage[msg_id] = msg["usage"]
            for block in msg.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    if msg_id in message_text:
                        existing = t.messages[message_text[msg_id]]
                        existing.text = f"{existing.text}\n{block['text']}"
                    else:
                        message_text[msg_id] = len(t.messages)
                        t.messages.append(Message(role="assistant", text=block["text"]))
                elif block.get("type") == "tool_use":
                    name = str(block.get("name") or "")
                    tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
                    call = ToolCall(
                        id=str(block.get("id") or f"call{len(calls)}"),
                        name=name,
                        input=tool_input,
                        kind=_KINDS.get(name, "other"),
                        message_id=msg_id,
                    )
                    if call.kind == "shell":
                        call.command = tool_input.get("command")
                    call.paths = _call_paths(name, tool_input, None, cwd)
                    if name == "Skill":
                        skill = tool_input.get("skill") or tool_input.get("command") or tool_input.get("name")
                        if skill and skill not in t.skills_invoked:
                            t.skills_invoked.append(str(skill))
                    calls[call.id] = call
                    t.tool_calls.append(call)
        elif kind == "user":
            msg = rec.get("message") or {}
            content = msg.get("content")
            if isinstance(content, str):
                if not rec.get("isSynthetic") and not rec.get("parent_tool_use_id"):
                    t.messages.append(Message(role="user", text=content))
                continue
            for block in content or []:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call = calls.get(str(block.get("tool_use_id")))
                if call is None:
                    continue
                call.result = _result_text(block.get("content"))
                call.is_error = bool(block.get("is_error"))
                structured = rec.get("tool_use_result")
                if call.name in _WRITERS and not call.is_error:
                    call.paths = _call_paths(call.name, call.input, structured, cwd) or call.paths
                if call.kind == "shell":
                    code = re.match(r"(?:Error: )?Exit code (\d+)", call.result or "")
                    if code:
                        call.exit_code = int(code.group(1))
                    elif not call.is_error:
                        call.exit_code = 0
        elif kind == "system" and rec.get("subtype") == "permission_denied":
            call = calls.get(str(rec.get("tool_use_id")))
            if call is not None:
                call.denied = True
        elif kind == "result":
            result = rec

    if result is not None:
        t.final_message = result.get("result") if isinstance(result.get("result"), str) else None
        t.cost_usd = result.get("total_cost_usd")
        t.turns = result.get("num_turns")
        t.duration_ms = result.get("duration_ms")
        t.exit_status = result.get("subtype")
        t.is_error = bool(result.get("is_error"))
        t.session_id = t.session_id or result.get("session_id")
        usage = result.get("usage")
        if isinstance(usage, dict):
            t.usage = _usage(usage)
        for denial in result.get("permission_denials") or []:
            call_id = str(denial.get("tool_use_id"))
            call = calls.get(call_id)
            if call is None:
                name = str(denial.get("tool_name") or "")
                call = ToolCall(
                    id=call_id,
                    name=name,
                    input=denial.get("tool_input") or {},
                    kind=_KINDS.get(name, "other"),
                )
            call.denied = True
            t.permission_denials.append(call)
    else:
        # no result record (killed or crashed): add up what the assistant messages reported
        total = Usage()
        for usage in message_usage.values():
            u = _usage(usage)
            total.input_tokens += u.input_tokens
            total.output_tokens += u.output_tokens
            total.cache_read_input_tokens += u.cache_read_input_tokens
            total.cache_creation_input_tokens += u.cache_creation_input_tokens
        t.usage = total
        last = next((m for m in reversed(t.messages) if m.role == "assistant"), None)
        t.final_message = last.text if last else None
    # a denial the CLI reported only as a system record still belongs in the list
    listed = {c.id for c in t.permission_denials}
    t.permission_denials += [c for c in t.tool_calls if c.denied and c.id not in listed]
    return t


def _usage(raw: dict) -> Usage:
    def n(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, (int, float)) else 0

    return Usage(
        input_tokens=n("input_tokens"),
        output_tokens=n("output_tokens"),
        cache_read_input_tokens=n("cache_read_input_tokens"),
        cache_creation_input_tokens=n("cache_creation_input_tokens"),
    )
