"""OpenAI's Codex CLI (``codex exec --json --dangerously-bypass-approvals-and-sandbox``), on the CLI agent
base, with a per-run ``CODEX_HOME``.

Codex's own sandbox is off: skillassay's sandbox (bubblewrap) is the boundary. Codex's ``workspace-write``
mode uses bubblewrap itself when it is installed, and then its patches silently fail to reach the workspace
(seen with Debian's bubblewrap 0.8), so a run would measure Codex's sandbox, not the agent.

Codex ignores ``OPENAI_BASE_URL``: the model endpoint is a custom provider in ``$CODEX_HOME/config.toml``
whose ``base_url`` is the proxy's root plus ``/v1`` and whose key is read from ``SKILLASSAY_CODEX_API_KEY``
(the run's token).

Codex discovers personal skills in ``$CODEX_HOME/skills/<name>/SKILL.md`` and lists them to the model; the
model reads a skill by opening its SKILL.md with a shell command. ``system-prompt`` mode passes SKILL.md as
the config value ``developer_instructions``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from skillassay.agents._common import Scrubber, read_jsonl, relative_path
from skillassay.agents.installed import MAX_RETRIES, CliAgent
from skillassay.agents.stream import Tail, parse_line
from skillassay.transcripts import Message, ToolCall, Transcript, Usage
from skillassay.untrusted import copy_regular

NAME = "codex"
# A model name Codex knows: with an unknown one it drops tools such as apply_patch.
DEFAULT_MODEL = "gpt-5.5"
PROVIDER = "skillassay"
API_KEY_ENV = "SKILLASSAY_CODEX_API_KEY"
MAX_SESSION_BYTES = 256 << 20  # a larger session file is not stored (a real one is a few MB)


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class CodexAgent(CliAgent):
    name = NAME
    description = "OpenAI's Codex CLI (codex exec --json)"
    model_api = "openai"
    reports_skill_use = True
    binary_name = "codex"
    package = "@openai/codex"
    bin_env = "SKILLASSAY_CODEX_BIN"
    config_dirs: ClassVar[dict[str, str]] = {"CODEX_HOME": ".codex"}
    skills_dir = ".codex/skills"
    probes: ClassVar[list[str]] = [
        "/etc/codex",
        "/etc/codex/*",
        "/etc/_rjem_malloc.conf",
        "/etc/rpi-issue",
        "*/AGENTS.md",
        "*/AGENTS.override.md",
        "*/.codex",
        "*/.codex/*",
        "*/.codex-plugin/*",
        "*/.claude-plugin/*",
        "*/.cursor-plugin/*",
        "*/.agents",
        "*/.agents/*",
    ]
    # Codex reports a failed turn in words ("exceeded retry limit, last status: 429 Too Many Requests",
    # "unexpected status 529 ...", "stream disconnected before completion: ..."); the status, when it gives
    # one, is read by the base; these name the rest
    error_patterns = (
        (r"quota|billing|usage limit|insufficient_quota", "quota_exceeded"),
        (r"context window|context_length_exceeded|maximum context", "context_exceeded"),
        (r"unauthorized|invalid_api_key|incorrect api key", "auth_failed"),
        (r"at capacity|overloaded", "overloaded"),
        (r"high demand|temporar(?:y|ily) (?:unavailable|errors?)|internal server error", "server_error"),
        (
            r"stream disconnected|error sending request|connection (?:refused|reset|closed)|timed out",
            "connection",
        ),
        (r"invalid_request_error", "bad_request"),
    )

    def config_toml(self, ctx) -> str:
        lines = ["check_for_update_on_startup = false", f"model = {_toml(ctx.model or DEFAULT_MODEL)}"]
        endpoint = ctx.model_endpoint
        if endpoint is not None:
            lines.append(f"model_provider = {_toml(PROVIDER)}")
        lines += ["", "[features]", "plugins = false", "", "[analytics]", "enabled = false"]
        if endpoint is not None:
            lines += [
                "",
                f"[model_providers.{PROVIDER}]",
                f"name = {_toml(PROVIDER)}",
                f"base_url = {_toml(endpoint.base_url.rstrip('/') + '/v1')}",
                'wire_api = "responses"',
                f"env_key = {_toml(API_KEY_ENV)}",
            ]
            retries = ctx.env.get(MAX_RETRIES)
            if retries is not None and retries.isdigit():
                lines += [f"request_max_retries = {int(retries)}", f"stream_max_retries = {int(retries)}"]
        return "\n".join(lines) + "\n"

    def command(self, ctx, prompt, skill, notes):
        argv = [
            "exec",
            "--json",
            # the flag Codex documents for "environments that are externally sandboxed": ours
            "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check",
        ]
        if ctx.model:
            argv += ["--model", ctx.model]
        if skill is not None:
            argv += ["-c", f"developer_instructions={_toml(skill.text)}"]
        return [*argv, "--", prompt]

    def model_env(self, ctx, endpoint):
        return {API_KEY_ENV: endpoint.token}

    def prepare(self, ctx, env):
        (ctx.home / ".codex" / "config.toml").write_text(self.config_toml(ctx), encoding="utf-8")

    def parse(self, records, ctx, times=None):
        transcript = parse_exec_json(records, workspace=ctx.workspace, prompt=ctx.prompt, times=times)
        transcript.model = ctx.model or DEFAULT_MODEL
        return transcript

    def skills_told(self, first_request: str) -> list[str] | None:
        try:
            body = json.loads(first_request)
        except ValueError:
            return None
        texts: list[str] = []

        def walk(value) -> None:
            if isinstance(value, str):
                if "### Available skills" in value:
                    texts.append(value)
            elif isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        walk(body)
        if not texts:
            return [] if isinstance(body, dict) and "input" in body else None
        return skills_from_session(
            [{"payload": {"type": "message", "content": [{"text": t} for t in texts]}}]
        )

    def live_parser(self, ctx):
        return _LiveParse(ctx.home / ".codex", ctx.workspace)

    def ended(self, records):
        return any(r.get("type") in ("turn.completed", "turn.failed") for r in records)

    def error_text(self, records, transcript):
        failed = next((r for r in reversed(records) if r.get("type") == "turn.failed"), None)
        if failed is None:
            return None
        err = failed.get("error")
        text = err.get("message") if isinstance(err, dict) else err
        return str(text or "turn.failed")

    def finish(self, ctx, result, env):
        transcript = result.transcript
        codex_home = ctx.home / ".codex"
        session = _session_file(codex_home, transcript.session_id)
        stored = ctx.output_dir / "codex.session.jsonl"
        try:
            # the session file is in the agent's own home: a link (to any host file), a fifo or a huge file is
            # the agent's doing, never followed, waited on or stored (the harness reads it as whoever runs
            # skillassay)
            copied = session is not None and copy_regular(
                session, stored, root=codex_home, limit=MAX_SESSION_BYTES
            )
        except OSError:
            copied = False
        if copied:
            Scrubber(env).file(stored)
            transcript.skills_available = skills_from_session(read_jsonl(stored))
            transcript.skills_source = "session"
            assign_turns(transcript, read_jsonl(stored))
        if result.exit_code not in (0, None):
            transcript.is_error = True


class _LiveParse:
    """The transcript so far, while Codex runs: its --json events plus the model turns its session file has
    logged (the only place Codex reports tokens per model response)."""

    def __init__(self, codex_home: Path, workspace: Path):
        self.codex_home, self.workspace = codex_home, workspace
        self.tail = Tail()
        self.session: list[dict] = []

    def __call__(self, records: list[dict], times: list[float | None]) -> Transcript:
        if self.tail.path is None:
            found = _session_files(self.codex_home)
            self.tail.path = found[-1] if found else None
        self.session += [r for r in map(parse_line, self.tail.read()) if r is not None]
        t = parse_exec_json(records, workspace=self.workspace, times=times)
        assign_turns(t, self.session)
        return t


def _codex_usage(raw: dict) -> Usage:
    """One response's usage, with input_tokens excluding cached input (as for every CLI's turn_usage)."""

    def n(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, (int, float)) else 0

    cached, written = n("cached_input_tokens"), n("cache_write_input_tokens")
    return Usage(
        input_tokens=max(0, n("input_tokens") - cached - written),
        output_tokens=n("output_tokens"),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
    )


# session-file calls, by the kind of --json item they become
_SESSION_CALLS: dict[tuple[str | None, str | None], str] = {
    ("function_call", "exec_command"): "shell",
    ("function_call", "shell"): "shell",
    ("local_shell_call", None): "shell",
    ("custom_tool_call", "apply_patch"): "patch",
    ("function_call", "apply_patch"): "patch",
}


def assign_turns(t: Transcript, session: Iterable[dict]) -> None:
    """Model turns from Codex's session file: the calls a response made are logged before its token usage
    record, so each usage record closes a turn. Sets ``t.turn_usage`` and each shell and patch call's
    ``turn`` (the --json stream does not say which response made a call; calls of a kind are matched in
    order)."""
    session = list(session)
    records = [r for r in session if r.get("type") == "token_usage_record"]
    use_records = bool(records)  # newer CLIs; older ones log only token_count events
    calls: dict[str, list[int]] = {"shell": [], "patch": []}
    usage: list[Usage] = []
    seen: set[str] = set()
    for rec in session:
        raw = rec.get("payload")
        payload: dict = raw if isinstance(raw, dict) else {}
        kind = rec.get("type")
        if kind == "response_item":
            ptype = payload.get("type")
            which = _SESSION_CALLS.get((ptype, payload.get("name"))) or _SESSION_CALLS.get((ptype, None))
            if which:
                calls[which].append(len(usage) + 1)
        elif use_records and kind == "token_usage_record":
            rid = str(payload.get("response_id") or len(usage))
            if rid not in seen and isinstance(payload.get("usage"), dict):
                seen.add(rid)
                usage.append(_codex_usage(payload["usage"]))
        elif not use_records and kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
                usage.append(_codex_usage(info["last_token_usage"]))
    t.turn_usage = usage
    pending = {k: iter(v) for k, v in calls.items()}
    for call in t.tool_calls:
        which = "shell" if call.kind == "shell" else "patch" if call.name == "apply_patch" else None
        if which:
            call.turn = next(pending[which], None)


def _session_file(codex_home: Path, session_id: str | None) -> Path | None:
    sessions = _session_files(codex_home)
    if session_id:
        named = [p for p in sessions if session_id in p.name]
        if named:
            return named[-1]
    return sessions[-1] if sessions else None


def _session_files(codex_home: Path) -> list[Path]:
    """Codex's session files (``sessions/**/rollout-*.jsonl``), entering no linked folder."""
    found = []
    for folder, _, names in os.walk(codex_home / "sessions"):
        found += [Path(folder) / n for n in names if n.startswith("rollout-") and n.endswith(".jsonl")]
    return sorted(found)


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
    records: Iterable[dict],
    workspace: Path | str | None = None,
    prompt: str | None = None,
    times: list[float | None] | None = None,
) -> Transcript:
    """Codex ``exec --json`` events -> the common ``Transcript``. ``times[i]``: when record i appeared
    (seconds after the CLI started), where known; a call's ``at_s`` is when its item first appeared (a
    command: when it started)."""
    t = Transcript(agent=NAME)
    if prompt:
        t.messages.append(Message(role="user", text=prompt))
    items: dict[str, dict] = {}
    first_seen: dict[str, float | None] = {}
    order: list[str] = []
    usage = Usage()
    turns = 0
    for index, rec in enumerate(records):
        kind = rec.get("type")
        if kind == "thread.started":
            t.session_id = rec.get("thread_id")
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = rec.get("item") or {}
            item_id = str(item.get("id") or f"item{len(order)}")
            if item_id not in items:
                order.append(item_id)
                first_seen[item_id] = times[index] if times is not None and index < len(times) else None
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
                at_s=first_seen.get(item_id),
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
                at_s=first_seen.get(item_id),
            )
            t.tool_calls.append(call)
        elif itype == "mcp_tool_call":
            t.tool_calls.append(
                ToolCall(
                    id=item_id,
                    name=f"{item.get('server')}.{item.get('tool')}",
                    input=item.get("arguments") if isinstance(item.get("arguments"), dict) else {},
                    is_error=status == "failed",
                    at_s=first_seen.get(item_id),
                )
            )
        elif itype == "web_search":
            t.tool_calls.append(
                ToolCall(
                    id=item_id,
                    name="web_search",
                    input={"query": item.get("query")},
                    kind="search",
                    at_s=first_seen.get(item_id),
                )
            )
        elif itype == "error":
            t.is_error = True
    t.permission_denials = [c for c in t.tool_calls if c.denied]
    if t.final_message is None:
        t.final_message = last_message
    return t
