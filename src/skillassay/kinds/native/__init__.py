"""Native agent evals (``agent-evals/<id>.toml``): graded by the process graders (``skillassay.graders``)."""

from skillassay.kinds.native.agent_kind import AgentKind

__all__ = ["AgentKind"]
