"""Agents: one module each behind ``skillassay.agents.base.Agent``, found by name."""

from __future__ import annotations

import importlib

from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.errors import SkillassayError

# name -> "module:Class"; modules are imported on first use
_REGISTRY = {
    "claude-code": "skillassay.agents.claude_code:ClaudeCodeAgent",
    "codex": "skillassay.agents.codex:CodexAgent",
    "command": "skillassay.agents.command:CommandAgent",
    "reference": "skillassay.agents.reference:ReferenceAgent",
    "noop": "skillassay.agents.noop:NoopAgent",
}


class UnknownAgentError(SkillassayError):
    """An agent name that no module provides."""


def available_agents() -> list[str]:
    return list(_REGISTRY)


def agent_class(name: str) -> type[Agent]:
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise UnknownAgentError(f"unknown agent {name!r}; available: {', '.join(_REGISTRY)}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def get_agent(name: str) -> Agent:
    return agent_class(name)()


__all__ = [
    "Agent",
    "AgentContext",
    "AgentResult",
    "UnknownAgentError",
    "agent_class",
    "available_agents",
    "get_agent",
]
