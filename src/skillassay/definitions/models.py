"""The one definition model every eval loads into, whatever file format it was written in.

Each format's loader maps its files onto ``EvalDefinition``: the native and trigger formats here, the plan's
JSON files in the Seam wing (``seam/loader.py``, onto its subclass ``SeamEval``, which carries
``rubric.json``, ``answer_key.json`` and ``eval_config.json`` as written: ``seam/plan.py``,
``seam/config.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from skillassay import plugins, stacks
from skillassay.definitions.agent_eval import (
    Criterion,
    ForbiddenBehaviour,
    QualityGate,
)
from skillassay.definitions.app import RunSteps
from skillassay.definitions.resources import Resources
from skillassay.triggers import TriggerBudget

# the formats the harness loads itself (native agent evals, trigger suites); a wing's are the names of its
# ``skillassay.definitions`` entry points (``definitions/formats.py``)
OWN_FORMATS = ("native", "trigger")
FORMATS_GROUP = "skillassay.definitions"
# a kind's class says the format it grades (kinds/base.py: ``EvalKind.format``)
KINDS_GROUP = "skillassay.kinds"


def loaded_formats() -> list[str]:
    """The formats a loader is registered for: each wing's, then the harness's own (no kind imported)."""
    wings = [name for name in plugins.names(FORMATS_GROUP) if name not in OWN_FORMATS]
    return [*wings, *OWN_FORMATS]


def known_formats() -> list[str]:
    """Every ``EvalDefinition.format`` there is: ``loaded_formats``, then any other registered kind's."""
    found = loaded_formats()
    for name in plugins.names(KINDS_GROUP):
        fmt = getattr(plugins.load(KINDS_GROUP, name), "format", None)
        if isinstance(fmt, str) and fmt not in found:
            found.append(fmt)
    return found


def _one_of(values: list[str]) -> str:
    """``'a', 'b' or 'c'``, as pydantic words a choice."""
    quoted = [repr(v) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    """One prompt of a trigger suite (``evals/trigger-evals/<suite>.toml``): should the agent pick the
    skill up?
    """

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
    format: str  # one of ``known_formats()``: the kind that grades it has this ``format`` (kinds/base.py)
    source: Path  # the definition file
    suite_dir: Path
    fixture_dir: Path
    app_dir: Path
    prompt: str
    api_path: str | None = None
    stack: str  # e.g. "typescript-express", "typescript-nextjs", "python-flask", "python-fastapi", "python"
    # "typescript", "javascript", "python": one of its stack's ``definition_languages`` (stacks/)
    language: str
    app_port: int | None = None
    dockerfile: Path | None = None
    golden_dir: Path | None = None
    controls: list[Control] = Field(default_factory=list)
    # a file of the suite that grading reads beside the fixture (the Seam wing's: rubric.json); a wing's own
    # inputs are fields of its subclass (seam/eval.py: SeamEval)
    rubric_file: Path | None = None
    # agent-eval fields (native definitions; plan evals get defaults)
    pass_threshold: float = 0.8
    expected_behaviour: list[str] = Field(default_factory=list)
    forbidden_behaviour: list[ForbiddenBehaviour] = Field(default_factory=list)
    required_concepts: list[str] = Field(default_factory=list)
    quality_requirements: list[QualityGate] = Field(default_factory=list)
    criteria: list[Criterion] = Field(default_factory=list)
    notes: str | None = None
    max_change_size: int | None = None  # bytes (None: the job's limit, by default 20 MB)
    # a trigger-suite prompt (format "trigger"); without a fixture, fixture_dir and app_dir are os.devnull,
    # which no copy can read from: the run starts in an empty repository
    trigger: TriggerSpec | None = None
    resources: Resources = Field(default_factory=Resources)  # per run, where it executes (default 1 CPU)
    # the definition's own egress allow-list (None: the stack's registries)
    registries: list[str] | None = None

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value in loaded_formats() or value in (known := known_formats()):
            return value
        # worded and typed as a Literal's error, which this field was
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": _one_of(known)})

    @property
    def has_sandbox(self) -> bool:
        """Whether grading runs the app against an emulated service (a wing's definitions may)."""
        return False

    @property
    def run_steps(self) -> RunSteps | None:
        """Install, build and start commands that override the Dockerfile's (a wing's definitions may have
        them).
        """
        return None


def stack_registries(definition: EvalDefinition) -> list[str]:
    """What the agent and the app's installs may reach through skillassay's egress proxy: the definition's own
    list (``registries``), else the package registries of its stack's runtime (``stacks``).
    docs/sealing.md."""
    if definition.registries is not None:
        return list(definition.registries)
    return stacks.registries(definition.language)
