"""Claude Code (``claude -p ... --output-format stream-json --verbose``), on the CLI agent base.

The skill is installed where the CLI discovers personal skills (``$CLAUDE_CONFIG_DIR/skills/<name>/``),
outside the workspace, so the diff only holds the agent's changes; or, in ``system-prompt`` mode, appended to
the system prompt. The model endpoint is given as ``ANTHROPIC_BASE_URL`` (the proxy's root) with the run's
token as ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from skillassay.agents._common import OFFLINE_ENV, relative_path, skill_prompt_block
from skillassay.agents.installed import MAX_RETRIES, CliAgent, probe_home
from skillassay.transcripts import Message, ToolCall, Transcript, Usage

NAME = "claude-code"

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


class ClaudeCodeAgent(CliAgent):
    name = NAME
    description = "Anthropic's Claude Code CLI (claude -p, stream-json transcript)"
    model_api = "anthropic"
    reports_skill_use = True
    binary_name = "claude"
    package = "@anthropic-ai/claude-code"
    bin_env = "SKILLASSAY_CLAUDE_BIN"
    config_dirs: ClassVar[dict[str, str]] = {"CLAUDE_CONFIG_DIR": ".claude"}
    skills_dir = ".claude/skills"
    switches = OFFLINE_ENV
    probes: ClassVar[list[str]] = [
        "/etc/claude-code",
        "/etc/claude-code/*",
        "/home",
        "/home/*",
        "/.dockerenv",
        "/etc/machine-id",
        "*/CLAUDE.md",
        "*/CLAUDE.local.md",
        "*/AGENTS.md",
        "*/.claude",
        "*/.claude/*",
        "*/.mcp.json",
    ]
    # Claude's result record says "API Error: <status> ..." (also as api_error_status); these name what a
    # status alone does not
    error_patterns = (
        (r"error_max_turns|reached (?:the )?max(?:imum)? (?:number of )?turns", "max_turns"),
        (r"credit balance|quota", "quota_exceeded"),
        (r"not logged in|invalid api key|authentication_error|failed to authenticate", "auth_failed"),
        (r"prompt is too long|context (?:window|length)", "context_exceeded"),
        (r"overloaded", "overloaded"),
        (
            r"connection error|ECONNREFUSED|ECONNRESET|fetch failed|socket hang up|request timed out",
            "connection",
        ),
    )

    def supports_system_prompt_flag(self) -> bool:
        try:
            with probe_home() as env:
                out = subprocess.run(
                    [self.binary or "claude", "--help"],
                    check=False,
                    capture_output=True,
                    text=True,
                    timeout=30,
                    stdin=subprocess.DEVNULL,
                    env=env,
                )
        except (OSError, subprocess.SubprocessError):
            return False
        return "--append-system-prompt" in out.stdout

    def command(self, ctx, prompt, skill, notes):
        if skill is not None and not self.supports_system_prompt_flag():
            prompt = skill_prompt_block(skill) + prompt
            notes.append("--append-system-prompt unavailable: SKILL.md prepended to the prompt")
            skill = None
        argv = ["-p", prompt, "--output-format", "stream-json", "--verbose"]
        if ctx.allowed_tools:
            argv += ["--allowedTools", ",".join(ctx.allowed_tools)]
        if ctx.model:
            argv += ["--model", ctx.model]
        if skill is not None:
            argv += ["--append-system-prompt", skill.text]
        return argv

    def model_env(self, ctx, endpoint):
        env = {"ANTHROPIC_BASE_URL": endpoint.base_url, "ANTHROPIC_API_KEY": endpoint.token}
        if ctx.env.get(MAX_RETRIES):
            env["CLAUDE_CODE_MAX_RETRIES"] = ctx.env[MAX_RETRIES]
        return env

    def parse(self, records, ctx, times=None):
        return parse_stream_json(records, workspace=ctx.workspace, prompt=ctx.prompt, times=times)

    def ended(self, records):
        return any(r.get("type") == "result" for r in records)

    @staticmethod
    def _result(records: list[dict]) -> dict:
        return next((r for r in reversed(records) if r.get("type") == "result"), {})

    def error_text(self, records, transcript):
        result = self._result(records)
        subtype = str(result.get("subtype") or "")
        if not result.get("is_error") and subtype in ("", "success"):
            return None
        parts = [
            subtype if subtype != "success" else "",
            result.get("result") if isinstance(result.get("result"), str) else "",
            "; ".join(str(e) for e in result.get("errors") or [] if e),
        ]
        return " ".join(p for p in parts if p).strip() or "the CLI reported an error"

    def failed_status(self, records):
        status = self._result(records).get("api_error_status")
        return status if isinstance(status, int) else None


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
    records: Iterable[dict],
    workspace: Path | str | None = None,
    prompt: str | None = None,
    times: list[float | None] | None = None,
) -> Transcript:
    """Claude Code's stream-json records -> the common ``Transcript``. ``times[i]``: when record i appeared
    (seconds after the CLI started), where known. A model turn is one assistant message (its records share
    ``message.id``)."""
    t = Transcript(agent=NAME)
    turns: dict[str, int] = {}  # assistant message id -> 1-based model turn
    call: ToolCall | None
    if prompt:
        t.messages.append(Message(role="user", text=prompt))
    calls: dict[str, ToolCall] = {}
    message_text: dict[str, int] = {}  # assistant message id -> index in t.messages (text blocks are merged)
    message_usage: dict[str, dict] = {}
    result: dict | None = None
    cwd = workspace

    for index, rec in enumerate(records):
        kind = rec.get("type")
        at = times[index] if times is not None and index < len(times) else None
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
            turns.setdefault(msg_id, len(turns) + 1)
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
                        t.messages.append(Message(role="assistant", text=block["text"], turn=turns[msg_id]))
                elif block.get("type") == "tool_use":
                    name = str(block.get("name") or "")
                    raw_input = block.get("input")
                    tool_input: dict = raw_input if isinstance(raw_input, dict) else {}
                    call = ToolCall(
                        id=str(block.get("id") or f"call{len(calls)}"),
                        name=name,
                        input=tool_input,
                        kind=_KINDS.get(name, "other"),
                        message_id=msg_id,
                        turn=turns[msg_id],
                        at_s=at,
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
    t.turn_usage = [_usage(message_usage[m]) if m in message_usage else Usage() for m in turns]
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
