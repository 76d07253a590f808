"""How an app is installed, built and started, when its Dockerfile does not say it all
(``apps/runplan.py``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RunSteps(BaseModel):
    """Explicit install/build/start commands; overrides what the Dockerfile says."""

    model_config = ConfigDict(extra="forbid")

    install: list[str] | None = None
    build: list[str] | None = None
    start: list[str] | str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    health_path: str = "/health"
