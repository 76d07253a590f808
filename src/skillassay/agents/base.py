"""The one interface every agent implements. Adding an agent is adding a module in this package.

An agent gets an ``AgentContext`` (a scratch git workspace, the prompt, the skill, a private home, a time
limit) and returns an ``AgentResult`` (how it ended, its normalised transcript, where its raw output is).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from skillassay.definitions.resources import Resources
from skillassay.isolation import Mount, Sandbox
from skillassay.services.model_proxy import ModelEndpoint
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillTarget, TriggerBudget
from skillassay.usage import ProviderError

SkillMode = Literal["native", "system-prompt"]
# The agent's own view of how its run ended (the trial decides the run's outcome from it):
# completed: it finished; agent_error: it failed on its own (crashed, exited non-zero, ran out of turns);
# timed_out: killed at the time limit; provider_error: the model provider failed it (429, 5xx, overloaded, no
# answer); harness_error: it could not run for reasons that are not its own (no CLI, no model endpoint, the
# operator's key).
AgentStatus = Literal["completed", "agent_error", "timed_out", "provider_error", "harness_error"]
# Why, as a type: the provider error kinds (skillassay.usage.ProviderErrorKind) and the agent's own ends.
ErrorKind = Literal[
    "rate_limited",
    "overloaded",
    "server_error",
    "connection",
    "auth_failed",
    "quota_exceeded",
    "context_exceeded",
    "bad_request",
    "max_turns",
    "crashed",
    "exit_nonzero",
    "cli_not_found",
    "no_model_endpoint",
    "bad_input",
    "sandbox_failed",
]

# The plan's allowed tools for Claude Code.
DEFAULT_ALLOWED_TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]


class AgentContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Path  # the agent's cwd: a scratch git repo holding the pristine app
    prompt: str
    output_dir: Path  # where the agent writes its raw transcript, stdout and stderr
    home: Path  # a private HOME / config dir for this run only
    timeout: float = 600.0
    skill_dir: Path | None = None  # a folder holding SKILL.md
    skill_mode: SkillMode = "native"
    model: str | None = None
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    # extra environment (never a provider key: see agents/installed.py)
    env: dict[str, str] = Field(default_factory=dict)
    # the agent's only way to a model: the job's model proxy and this run's token (None: the agent gets no
    # model)
    model_endpoint: ModelEndpoint | None = None
    fixture_dir: Path | None = None  # for the reference agent
    golden_dir: Path | None = None  # for the reference agent: the solution to apply
    command: str | None = None  # for the command agent: a line with {prompt} and {workspace}
    # a trigger run: the agent may be stopped once the skill's use is decided (used, or the budget spent)
    budget: TriggerBudget | None = None
    # the agent phase's live ``skillassay.isolation.Sandbox``: every process the agent starts goes through it
    # (None: started as is, as in unit tests of parsers)
    sandbox: Sandbox | None = Field(default=None, exclude=True)


class AgentResult(BaseModel):
    status: AgentStatus
    exit_code: int | None = None
    signal: int | None = None  # the signal that ended the CLI (not the time limit's kill)
    duration_s: float = 0.0
    cli_version: str | None = None
    cli_source: str | None = None  # where the CLI was found: "configured", "checkout" or "cache"
    transcript: Transcript
    raw_transcript: Path | None = None  # the CLI's own transcript file, as written
    stdout: Path | None = None
    stderr: Path | None = None
    error: str | None = None  # why it failed, in words
    error_kind: ErrorKind | None = None  # why it failed, as a type
    # what the CLI's own output said about the provider failing it; the model proxy's record is the authority
    provider_errors: list[ProviderError] = Field(default_factory=list)
    # how the run deviated from the plan (e.g. a skill-mode fallback)
    notes: list[str] = Field(default_factory=list)
    # the skill under test, where this run's CLI discovers it (None: no skill, or one given as a system
    # prompt)
    skill_target: SkillTarget | None = None
    # the harness ended the CLI early because the trigger decision was made, and why
    stopped: str | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _taxonomy(cls, value: str) -> str:
        # the names agents used before the outcome taxonomy (skillassay.outcomes)
        return {"crashed": "agent_error", "infrastructure_error": "harness_error"}.get(value, value)


class Agent(ABC):
    name: ClassVar[str]
    description: ClassVar[str] = ""
    # which model API the agent speaks through its endpoint ("anthropic", "openai"; None: it needs no model).
    # The job starts a model proxy only for agents that talk to a model, and checks it holds a key for this
    # API.
    model_api: ClassVar[str | None] = None  # "anthropic", "openai", "any" (both) or None
    # its transcript shows tool calls, so whether it used a skill can be read from it (trigger evals need
    # this)
    reports_skill_use: ClassVar[bool] = False
    # what one run of this agent needs beyond the eval's own declaration (the larger of each is reserved)
    resources: ClassVar[Resources | None] = None
    # globs of paths the CLI looks up on its own at start-up (its settings, memory files, plugins): the
    # out-of-bounds audit does not list them when the lookup finds nothing
    probes: ClassVar[list[str]] = []

    def mounts(self, ctx: AgentContext | None = None) -> list[Mount]:
        """What the agent needs to see, read-only, inside its sandbox (its CLI's installed package)."""
        return []

    def version(self) -> str | None:
        """The CLI's version, recorded in run.json; None when the agent has no CLI."""
        return None

    def skills_told(self, first_request: str) -> list[str] | None:
        """The skills the CLI listed to the model in its first model request (as the model proxy received it,
        before any command of the agent's ran); None when this agent's CLI does not say there. Preferred
        over anything read from the CLI's files afterwards, which the agent's commands can rewrite (the arm
        check, docs/sealing.md)."""
        return None

    def preflight(self, env: Mapping[str, str], command: str | None = None) -> str | None:
        """Why this agent cannot run with this environment (the user's plus --agent-env), or None when it can.
        Checked once before a job starts, so a missing key is a clear error, not a column of failed runs."""
        return None

    @abstractmethod
    def run(self, ctx: AgentContext) -> AgentResult: ...
