"""What a run and a job leave behind. Written as ``run.json`` / ``job.json`` beside the per-run files and
indexed in SQLite (``skillassay.store.db``). Paths inside are relative to the results root so a results
folder can move."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, model_validator

from skillassay.outcomes import LEGACY, AgentExit, HarnessFailure, Outcome, is_scored
from skillassay.scoring import GRADING_VERSION
from skillassay.scoring.verdict import CriterionResult, Verdict
from skillassay.secrets import Redaction
from skillassay.triggers import SkillUse, TriggerBudget
from skillassay.usage import ModelUsage
from skillassay.workspace.bounded_copy import SizeReport

# How a run ended: skillassay.outcomes (docs/results.md). Only provider and harness errors are re-run by
# --resume.
Variant = Literal["skill", "baseline"]
# 2: the outcome taxonomy (outcomes.py); 3: grading_version; 4: the eval kind's figures in ``grades``. Older
# files are read as version 4 (``_upgrade``)
RUN_SCHEMA_VERSION = 4
# the figures an eval kind records of a run (``RunRecord.grades``): JSON scalars by name
GradeValue = float | int | str | bool | None
# what version 3 kept at the top level and version 4 keeps in ``grades`` (the Seam kind's figures)
FLAT_GRADES = (
    "rubric_total",
    "sandbox_total",
    "combined",
    "api_path",
    "api_path_correct",
    "emulator_spec_version",
)
GRADING_VERSION_OF_OLD_RUNS = 1  # what a run written before run.json held a grading version was graded with


class TranscriptSummary(BaseModel):
    turns: int | None = None
    tool_calls: int = 0
    denials: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    skill_loaded: bool = False  # the CLI listed the skill under test to the model
    # the skill under test was used (skillassay.triggers: any use in the transcript)
    skill_invoked: bool = False
    final_message: str | None = None


class Attempt(BaseModel):
    """One try at a run's agent phase (orchestrator/attempts.py): a provider error is tried again from
    scratch.
    """

    n: int  # 1-based
    started_at: datetime
    duration_s: float = 0.0
    # as judged against the model proxy: completed, agent_error, timed_out, provider_error, harness_error
    status: str
    agent_status: str  # as the agent itself reported it
    error_kind: str | None = None
    error: str | None = None
    exit_code: int | None = None
    model_usage: ModelUsage | None = None  # this attempt's model calls
    retry_after_s: float | None = None  # the wait before the next attempt
    kept: str | None = None  # where this attempt's files were kept, relative to the run folder


class TriggerOutcome(BaseModel):
    """A trigger run's decision: was the skill used (within the budget), and should it have been?"""

    suite: str
    prompt: str  # the prompt's id in the suite
    category: str  # explicit, implicit, contextual, negative
    should_trigger: bool
    triggered: bool  # the skill was used within the budget (skillassay.triggers.triggered)
    correct: bool
    budget: TriggerBudget = Field(default_factory=TriggerBudget)
    # the harness ended the agent once the decision was made: triggered, max_turns, ...
    stopped: str | None = None


class CanaryCheck(BaseModel):
    """Whether this machine can measure an eval: its golden solution graded here by every layer the job uses
    but the LLM judge, ``runs`` times (orchestrator/canary.py; docs/results.md, "The canary"). A failed
    canary makes every run of the eval a harness error; ``scores`` spread is the eval's grader noise on
    this machine."""

    eval_id: str
    status: Literal["passed", "failed", "skipped"]
    reason: str | None = None  # failed: why the golden fails here; skipped: why no canary ran
    key: str | None = None  # the cache key: the fixture's files and this machine's environment (sha256)
    scores: list[float] = Field(default_factory=list)  # the golden's score, 0-100, in each of its runs
    cached: bool = False  # a pass this machine recorded before: nothing ran
    # reference: the reference agent's runs were the golden's
    source: Literal["canary", "reference"] = "canary"

    @property
    def passed(self) -> bool:
        return self.status != "failed"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def noise(self) -> float | None:
        """The spread (max - min) of the golden's scores, from two runs on."""
        return round(max(self.scores) - min(self.scores), 2) if len(self.scores) > 1 else None


class RunRecord(BaseModel):
    schema_version: int = RUN_SCHEMA_VERSION
    job_id: str
    eval_id: str
    run_index: int  # 1-based, as in run_<n>
    variant: Variant = "skill"
    run_dir: str  # relative to the results root, e.g. "20261129-224512/express-ts/run_1"
    agent: str
    agent_version: str | None = None
    skill_path: str | None = None
    skill_hash: str | None = None  # sha256 of the skill folder's files
    outcome: Outcome
    error: str | None = None  # for an unscored run, why; for an agent error, what the agent's end looked like
    # every part of the harness that failed
    harness_failures: list[HarnessFailure] = Field(default_factory=list)
    agent_exit: AgentExit | None = None  # the agent process's exit code or signal
    empty_diff: bool = False  # the agent changed nothing: graded, and its verdict fails (the plan's rule)
    started_at: datetime
    finished_at: datetime
    timings: dict[str, float] = Field(default_factory=dict)  # seconds: workspace, agent, rubric, sandbox, ...
    # the eval kind's own figures (skillassay.kinds: the Seam kind's rubric_total, sandbox_total, combined,
    # api_path, api_path_correct, emulator_spec_version; a figure absent: its layer was not run)
    grades: dict[str, GradeValue] = Field(default_factory=dict)
    # agent-eval criteria and verdict (every eval has one; the Seam suite's criteria are its rubric categories
    # and sandbox checks, weighted 40/60)
    criteria: list[CriterionResult] = Field(default_factory=list)
    verdict: Verdict | None = None
    transcript: TranscriptSummary = Field(default_factory=TranscriptSummary)
    # what the agent's model calls used and cost, measured by the job's model proxy, over every attempt (None:
    # the agent talks to no model, or the run predates the proxy)
    model_usage: ModelUsage | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    # the skill under test, read from the whole transcript (None: no skill, or an agent whose transcript
    # cannot show it); where it was installed is skill_use.location
    skill_use: SkillUse | None = None
    trigger: TriggerOutcome | None = None  # trigger-suite runs only
    files_changed: int = 0
    config: dict[str, Any] = Field(default_factory=dict)  # the full configuration of the run
    machine: dict[str, Any] = Field(default_factory=dict)  # cpu count, memory, platform, python, node
    regraded_at: datetime | None = None  # set by `skillassay regrade`; the agent's work is the original's
    # what the score means: the graders' version it was made with (scoring.GRADING_VERSION; `regrade` writes
    # the current one). Only scored runs have a score to compare; `compare` refuses to mix versions
    grading_version: int = GRADING_VERSION
    # how each phase was sealed: isolation ("bubblewrap" | "none"), registries, grants, per phase
    # (docs/sealing.md)
    sealing: dict[str, Any] = Field(default_factory=dict)
    # the skills the agent actually had and the user-level configuration it could see (agents/arm.py)
    arm: dict[str, Any] | None = None
    # secrets found in what the run was about to store, and what was done with each: where, in which form,
    # from which variable (never the value); and the secret variables whose values were too short to search
    # for
    redactions: list[Redaction] = Field(default_factory=list)
    unscrubbable: list[str] = Field(default_factory=list)
    # the change's size against the run's limit: files left out (path, size, sha256), logs cut
    # (workspace/bounded_copy.py)
    size: SizeReport | None = None
    # the canary that let this run be scored (or made it a harness error): orchestrator/canary.py
    canary: CanaryCheck | None = None

    @property
    def scored(self) -> bool:
        return is_scored(self.outcome)

    def figure(self, name: str) -> float | None:
        """The kind's figure ``name`` (``grades``) as a number; None when the run has none."""
        value = self.grades.get(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Older results keep loading: outcome names before the taxonomy map onto it (outcomes.LEGACY); a
        record from before grading versions was graded with version 1; one from before ``grades`` kept the
        Seam figures at the top level (``FLAT_GRADES``). A record made in code gets the current
        schema and grading version by default: only a stored one carries an older ``schema_version``."""
        if not isinstance(data, dict):
            return data
        schema = data.get("schema_version", RUN_SCHEMA_VERSION)
        legacy = data.get("outcome") in LEGACY
        if not legacy and not (isinstance(schema, int) and schema < RUN_SCHEMA_VERSION):
            return data
        data = {**data, "schema_version": RUN_SCHEMA_VERSION}
        if legacy:
            if data["outcome"] == "empty_diff":
                data["empty_diff"] = True
            data["outcome"] = LEGACY[data["outcome"]]
        if isinstance(schema, int) and schema < 3:
            data.setdefault("grading_version", GRADING_VERSION_OF_OLD_RUNS)
        if isinstance(schema, int) and schema < 4:
            flat = {k: data.pop(k) for k in FLAT_GRADES if k in data}
            data["grades"] = {
                **{k: v for k, v in flat.items() if v is not None},
                **(data.get("grades") or {}),
            }
        return data


class JobRecord(BaseModel):
    schema_version: int = 1
    job_id: str
    created_at: datetime
    suite: str
    agent: str
    skill_path: str | None = None
    skill_hash: str | None = None
    # flags as given (layers, runs, jobs, timeout, seam, ...)
    options: dict[str, Any] = Field(default_factory=dict)
    planned: list[tuple[str, int, Variant]] = Field(default_factory=list)  # (eval_id, run_index, variant)
    # stopped: runs were left unstarted on purpose (--max-cost spent); --resume starts them.
    # incomplete: the job ran to its end, but a run could not be written (it is recorded as a harness error
    # when it can be; --resume runs it again)
    status: Literal["running", "finished", "interrupted", "stopped", "incomplete"] = "running"
    finished_at: datetime | None = None
    stop_reason: str | None = None
    # every model call the job's runs made (through its model proxy), over all its sessions (--resume
    # included)
    model_usage: ModelUsage | None = None
    # each eval's canary on this machine (its grader noise beside the job's figures), and why none ran when
    # the job was told not to run one (--canary-runs 0)
    canaries: dict[str, CanaryCheck] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
