"""The floor: an agent that changes nothing."""

from __future__ import annotations

from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.transcripts import Message, Transcript

NAME = "noop"


class NoopAgent(Agent):
    name = NAME
    description = "changes nothing (the floor every score is compared with)"

    def run(self, ctx: AgentContext) -> AgentResult:
        return AgentResult(
            status="completed",
            exit_code=0,
            transcript=Transcript(
                agent=NAME, messages=[Message(role="user", text=ctx.prompt)], turns=0, exit_status="success"
            ),
        )
