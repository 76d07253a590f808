"""What one run needs from the machine it runs on: CPUs and memory.

An eval says it (``resources`` in a native definition or in eval_config.json); an agent that needs more says
so too (``Agent.resources``); the run reserves the larger of each. The Ray executor schedules a run only where
that much is free; the local executor runs ``--jobs`` runs at once whatever they declare.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ByteSize, ConfigDict, Field, WithJsonSchema

Memory = Annotated[
    ByteSize,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*[A-Za-z]*\s*$"},
            ],
            "description": 'bytes, or a size such as "512MiB" or "2GiB"',
        }
    ),
]


class Resources(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpus: float = Field(1.0, gt=0, description="CPUs one run reserves (default 1)")
    memory: Memory | None = Field(None, description="memory one run reserves (default: none reserved)")

    def merged(self, other: Resources | None) -> Resources:
        """The larger of each field: an eval's needs and its agent's."""
        if other is None:
            return self
        mem = [m for m in (self.memory, other.memory) if m is not None]
        return Resources(cpus=max(self.cpus, other.cpus), memory=max(mem) if mem else None)

    def describe(self) -> str:
        text = f"{self.cpus:g} CPU"
        if self.memory is not None:
            text += f", {self.memory.human_readable(separator=' ')}"
        return text
