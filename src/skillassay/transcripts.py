"""The transcript model common to every agent: what the agent said, which tools it called, what it cost.

Each agent module parses its CLI's own format (Claude Code stream-json, Codex --json) into this model; graders
of the agent's process (issue: agent evals) read only this model, never a CLI's raw format.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Message(BaseModel):
    role: Literal["user", "assistant", "system"]
    text: str
    turn: int | None = None  # an assistant message's 1-based model turn, where the CLI says (as ToolCall's)


class ToolCall(BaseModel):
    id: str
    # the agent's own tool name: "Write", "Edit", "Bash", "Skill", "exec_command", "apply_patch", ...
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    result: str | None = None
    is_error: bool = False
    denied: bool = False  # refused by the permission policy
    # normalised kind, so graders need not know each CLI's tool names
    kind: Literal["read", "write", "edit", "shell", "search", "skill", "other"] = "other"
    command: str | None = None  # for shell calls: the command line
    exit_code: int | None = None  # for shell calls, where the CLI reports it
    paths: list[str] = Field(default_factory=list)  # files the call wrote or edited
    message_id: str | None = None  # the assistant message (model turn) that made the call, where the CLI says
    turn: int | None = None  # 1-based model turn (one model response) that made the call, where known
    at_s: float | None = None  # seconds after the CLI started when the call appeared in its output stream


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total(self) -> int:
        """Every token the model read (cached or not) and wrote."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )


class Transcript(BaseModel):
    agent: str
    cli_version: str | None = None
    model: str | None = None
    session_id: str | None = None
    messages: list[Message] = Field(default_factory=list)  # in order
    tool_calls: list[ToolCall] = Field(default_factory=list)  # in order
    permission_denials: list[ToolCall] = Field(default_factory=list)
    skills_available: list[str] = Field(default_factory=list)  # skills the CLI reported as loaded
    skills_invoked: list[str] = Field(default_factory=list)  # skills the model actually used
    # where skills_available came from: "cli" (the CLI reported them), "session" (the CLI's session file),
    # "model request" (the CLI's first request to the model, as the model proxy received it), "installed"
    # (what skillassay installed; the CLI does not report its skills)
    skills_source: str | None = None
    final_message: str | None = None
    usage: Usage = Field(default_factory=Usage)
    # tokens per model turn, in order, where the CLI reports them (input_tokens excludes cache reads for every
    # CLI)
    turn_usage: list[Usage] = Field(default_factory=list)
    cost_usd: float | None = None
    turns: int | None = None
    duration_ms: int | None = None
    exit_status: str | None = None  # the CLI's own end state, e.g. "success", "error_max_turns"
    is_error: bool = False

    @property
    def skill_loaded(self) -> bool:
        return bool(self.skills_available)

    @property
    def shell_commands(self) -> list[str]:
        return [c.command for c in self.tool_calls if c.kind == "shell" and c.command]
