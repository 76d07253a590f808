"""The one interface every agent implements. Adding an agent is adding a module in this package.

An agent gets an ``AgentContext`` (a scratch git workspace, the prompt, the skill, a private home, a time limit) and
returns an ``AgentResult`` (how it ended, its normalised transcript, where its raw output is).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from skillassay.transcripts import Transcript

SkillMode = Literal["native", "system-prompt"]
AgentStatus = Literal["completed", "timed_out", "crashed", "infrastructure_error"]

# The plan's allowed tools for Claude Code.
DEFAULT_ALLOWED_TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]


class AgentContext(BaseModel):
    workspace: Path  # the agent's cwd: a scratch git repo holding the pristine app
    prompt: str
    output_dir: Path  # where the agent writes its raw transcript, stdout and stderr
    home: Path  # a private HOME / config dir for this run only
    timeout: float = 600.0
    skill_dir: Path | None = None  # a folder holding SKILL.md
    skill_mode: SkillMode = "native"
    model: str | None = None
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    env: dict[str, str] = Field(default_factory=dict)  # extra environment (e.g. a model server's base URL)
    fixture_dir: Path | None = None  # for the reference agent
    golden_dir: Path | None = None  # for the reference agent: the solution to apply
    command: str | None = None  # for the command agent: a line with {prompt} and {workspace}


class AgentResult(BaseModel):
    status: AgentStatus
    exit_code: int | None = None
    duration_s: float = 0.0
    cli_version: str | None = None
    transcript: Transcript
    raw_transcript: Path | None = None  # the CLI's own transcript file, as written
    stdout: Path | None = None
    stderr: Path | None = None
    error: str | None = None  # why it crashed / what infrastructure failed
    notes: list[str] = Field(default_factory=list)  # how the run deviated from the plan (e.g. a skill-mode fallback)


class Agent(ABC):
    name: ClassVar[str]
    description: ClassVar[str] = ""

    def version(self) -> str | None:
        """The CLI's version, recorded in run.json; None when the agent has no CLI."""
        return None

    def preflight(self, env: Mapping[str, str], command: str | None = None) -> str | None:
        """Why this agent cannot run with this environment (the user's plus --agent-env), or None when it can.
        Checked once before a job starts, so a missing key is a clear error, not a column of failed runs."""
        return None

    @abstractmethod
    def run(self, ctx: AgentContext) -> AgentResult: ...
