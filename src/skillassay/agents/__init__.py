"""Agents: one module each behind ``skillassay.agents.base.Agent``, found by name through the
``skillassay.agents`` entry points (``skillassay.plugins``); a module is imported when its agent is first
asked for."""

from __future__ import annotations

from skillassay import plugins
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.errors import SkillassayError

GROUP = "skillassay.agents"


class UnknownAgentError(SkillassayError):
    """An agent name that no module provides."""


def available_agents() -> list[str]:
    return plugins.names(GROUP)


def agent_class(name: str) -> type[Agent]:
    if not plugins.registered(GROUP, name):
        raise UnknownAgentError(f"unknown agent {name!r}; available: {', '.join(available_agents())}")
    cls = plugins.load(GROUP, name)
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise UnknownAgentError(f"the agent {name!r} ({cls!r}) is not an Agent class")
    return cls


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
