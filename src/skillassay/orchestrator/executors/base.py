"""Where runs execute. The job hands its runs to an executor and records what comes back; it never knows which
executor runs them. One file per executor (``local``, ``ray``), found by name (see
``executors/__init__.py``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from skillassay.definitions.models import EvalDefinition
from skillassay.orchestrator.config import JobOptions
from skillassay.orchestrator.run_services import JobServices
from skillassay.orchestrator.trial import RunSpec
from skillassay.store.records import RunRecord

# the runs as they finish: each with its record, or what stopped it (the job closes it on Ctrl-C)
Finished = Generator[tuple[RunSpec, RunRecord | BaseException], None, None]


class JobWork(BaseModel):
    """What every run of a job shares, as the job hands it over: picklable, nothing live."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    job_id: str
    results_root: Path  # the job's results root (on the machine the job runs from)
    definitions: dict[str, EvalDefinition]  # by eval id
    skill: Path | None = None  # the skill under test (a folder holding SKILL.md), as the job names it
    services: JobServices = Field(default_factory=JobServices)


class Executor(ABC):
    name: ClassVar[str]

    @classmethod
    def from_options(cls, opts: JobOptions) -> Executor:
        """Built from the job's options (``JobOptions``: jobs, ray_address, ...)."""
        return cls()

    def prepare(self, definitions: list[EvalDefinition], agent: str) -> None:  # noqa: B027 - a hook: nothing unless a subclass needs it
        """Called before the job records anything: connect, and check these runs can execute here; raise
        SkillassayError when not (a clear error, exit 2, and no job left behind)."""

    def service_host(self) -> str | None:
        """The address a service the job runs on this machine (the model proxy) must listen on and be reached
        at, when runs execute on other machines; None: they run here, loopback will do."""
        return None

    def close(self) -> None:  # noqa: B027 - a hook: nothing unless a subclass needs it
        """Called when the job ends, whatever happened: release what ``prepare`` or ``run`` opened."""

    @abstractmethod
    def run(self, work: JobWork, specs: list[RunSpec]) -> Finished:
        """Execute every run; yield (spec, record) as each finishes, once the run's whole folder (run.json
        last) is under ``work.results_root``; or (spec, exception) for a run that produced nothing (the job
        reports it). Ctrl-C (KeyboardInterrupt, or the consumer closing the generator) ends every run still
        going, wherever it executes, before it propagates: no agent or app process is left behind."""

    def describe(self) -> str:
        return self.name
