"""The one definition model every eval loads into, whatever file format it was written in.

The plan's JSON files (``rubric.json``, ``eval_config.json``, ``answer_key.json``) are modelled as written
(``PlanEvalConfig`` here; ``AnswerKey`` and ``Rubric`` in ``seam/plan.py``); loaders map them, and the
native format, onto ``EvalDefinition``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillassay import stacks
from skillassay.definitions.agent_eval import (
    MAX_PROMPT_CHARS,
    ChangeSize,
    Criterion,
    ForbiddenBehaviour,
    QualityGate,
)
from skillassay.definitions.resources import Resources
from skillassay.seam.plan import RUBRIC_CHECKS, AnswerKey, Rubric, RubricCategory  # noqa: F401 (re-exported)
from skillassay.triggers import TriggerBudget

# The plan's three Seam integration paths, and the calls that identify each.
API_PATHS = ("reservation_automations", "access_grants", "access_codes")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----------------------------------------------------------------------------- the plan's eval_config.json
class Endpoint(_Strict):
    method: str
    path: str
    payload: dict[str, Any] | None = None
    response_id_path: str | None = None
    headers: dict[str, str] | None = None


class TestEndpoints(_Strict):
    __test__ = False  # not a pytest class
    create: Endpoint
    update: Endpoint
    cancel: Endpoint


class SeamSpace(_Strict):
    """A space the validator creates before the app starts, with ``devices`` sandbox locks attached."""

    space_key: str
    name: str | None = None
    devices: int = 1


class SeamSetup(_Strict):
    """What the validator provides in Seam, and how the app learns of it. Declared, never guessed.

    ``env`` maps variable names the app reads to values; values may use ``{{DEVICE_ID}}``,
    ``{{DEVICE_IDS}}`` (comma separated), ``{{SPACE_ID}}``, ``{{SPACE_KEY}}``, ``{{CUSTOMER_KEY}}``.
    With no ``spaces``, one space is derived from the create payload: space key = the unit id.
    """

    spaces: list[SeamSpace] | None = None
    customer_key: str | None = None  # default: the property id of the create payload
    unit_id_field: str | None = None  # create-payload field holding the unit id (default: unitId / unit_id)
    property_id_field: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    # which Seam object a reservation's code hangs on: the device of the space (default)
    check_device: Literal["space", "env"] = "space"


class RunSteps(_Strict):
    """Explicit install/build/start commands; overrides what the Dockerfile says."""

    install: list[str] | None = None
    build: list[str] | None = None
    start: list[str] | str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    health_path: str = "/health"


class SandboxTimeouts(_Strict):
    """Seconds; each must be positive (a negative limit would end every wait at once)."""

    health: float = Field(60.0, gt=0)
    create: float = Field(60.0, gt=0)
    update: float = Field(30.0, gt=0)
    cancel: float = Field(30.0, gt=0)


class PlanEvalConfig(_Strict):
    fixture: str
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    expected_api_path: str
    seam_env_var: str = "SEAM_API_KEY"
    app_port: int | None = Field(None, ge=1, le=65535)
    test_endpoints: TestEndpoints
    sandbox_update_check: Literal["strict", "presence"] = "strict"
    # Extensions (optional; the plan's files work without them)
    title: str | None = None
    status: Literal["experimental", "stable"] = "stable"
    pass_threshold: float | None = Field(None, ge=0, le=1, description="a share, e.g. 0.8")
    seam: SeamSetup | None = None
    run: RunSteps | None = None
    timeouts: SandboxTimeouts | None = None
    resources: Resources | None = None  # what one run needs where it executes (the Ray executor reserves it)
    # hosts the agent and the app's install reach through the egress proxy, instead of the stack's (docs/sealing.md)
    registries: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9*.\-]+(:\d+)?$")]] | None = None
    max_change_size: ChangeSize | None = None


# ----------------------------------------------------------------------------- negative controls
class ControlExpectation(_Strict):
    """What a negative control (a deliberately flawed solution) must score. Kept beside the control.

    Scores are exact unless a ``*_max``/``*_min`` bound is given; absent keys are not checked.
    """

    description: str
    rubric_categories: dict[str, float] = Field(default_factory=dict)  # category -> score 0..1
    rubric_total_max: float | None = None
    rubric_total_min: float | None = None
    sandbox_checks: dict[str, float] = Field(default_factory=dict)  # check -> points
    sandbox_total: float | None = None
    verdict: Literal["pass", "fail"] | None = None
    disqualified: bool | None = None


class Control(BaseModel):
    name: str
    dir: Path
    expected_file: Path
    expected: ControlExpectation


# ----------------------------------------------------------------------------- trigger evals
TRIGGER_CATEGORIES = ("explicit", "implicit", "contextual", "negative")
TriggerCategory = Literal["explicit", "implicit", "contextual", "negative"]


class TriggerSpec(BaseModel):
    """One prompt of a trigger suite (``evals/trigger-evals/<suite>.toml``): should the agent pick the skill up?"""

    suite_id: str
    prompt_id: str
    should_trigger: bool
    category: TriggerCategory
    skill_dir: Path  # the skill under test, as the suite names it (a job's --skill replaces it)
    budget: TriggerBudget = Field(default_factory=TriggerBudget)
    fixture: str | None = None  # the fixture app the agent starts in; None: an empty git repository
    runs: int = 1  # the suite's runs per prompt


# ----------------------------------------------------------------------------- the one model
class EvalDefinition(BaseModel):
    """One eval, whatever format it came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    title: str
    status: Literal["experimental", "stable"] = "stable"
    format: Literal["plan-json", "native", "trigger"]
    source: Path  # the definition file
    suite_dir: Path
    fixture_dir: Path
    app_dir: Path
    prompt: str
    api_path: str | None = None
    stack: str  # e.g. "typescript-express", "typescript-nextjs", "python-flask", "python-fastapi", "python"
    language: str  # "typescript", "javascript", "python": one of its stack's ``definition_languages`` (stacks/)
    app_port: int | None = None
    dockerfile: Path | None = None
    golden_dir: Path | None = None
    controls: list[Control] = Field(default_factory=list)
    # layer inputs
    answer_key: AnswerKey | None = None
    rubric: Rubric | None = None
    rubric_file: Path | None = None
    config: PlanEvalConfig | None = None
    # agent-eval fields (native definitions; plan evals get defaults)
    pass_threshold: float = 0.8
    expected_behaviour: list[str] = Field(default_factory=list)
    forbidden_behaviour: list[ForbiddenBehaviour] = Field(default_factory=list)
    required_concepts: list[str] = Field(default_factory=list)
    quality_requirements: list[QualityGate] = Field(default_factory=list)
    criteria: list[Criterion] = Field(default_factory=list)
    notes: str | None = None
    max_change_size: int | None = None  # bytes (None: the job's limit, by default 20 MB)
    # a trigger-suite prompt (format "trigger"); without a fixture, fixture_dir and app_dir are os.devnull, which no
    # copy can read from: the run starts in an empty repository
    trigger: TriggerSpec | None = None
    resources: Resources = Field(default_factory=Resources)  # per run, where it executes (default 1 CPU)
    registries: list[str] | None = None  # the definition's own egress allow-list (None: the stack's registries)

    @property
    def has_sandbox(self) -> bool:
        return self.config is not None


def stack_registries(definition: EvalDefinition) -> list[str]:
    """What the agent and the app's installs may reach through skillassay's egress proxy: the definition's own
    list (``registries``), else the package registries of its stack's runtime (``stacks``). docs/sealing.md."""
    if definition.registries is not None:
        return list(definition.registries)
    return stacks.registries(definition.language)
