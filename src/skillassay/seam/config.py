"""The plan's ``eval_config.json``, modelled as written: the app's endpoints the sandbox drives, what it sets
up in Seam, and the run's limits. ``seam/definition.py`` loads it onto ``EvalDefinition``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillassay.definitions.agent_eval import MAX_PROMPT_CHARS, ChangeSize
from skillassay.definitions.app import RunSteps
from skillassay.definitions.resources import Resources

# The plan's three Seam integration paths, and the calls that identify each.
API_PATHS = ("reservation_automations", "access_grants", "access_codes")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    ``{{DEVICE_IDS}}`` (comma separated), ``{{SPACE_ID}}``, ``{{SPACE_KEY}}``, ``{{CUSTOMER_KEY}}``, and with
    ``check_device: "acs_entrance"`` ``{{ACS_SYSTEM_ID}}``, ``{{ACS_ENTRANCE_ID}}``.
    With no ``spaces``, one space is derived from the create payload: space key = the unit id.
    """

    spaces: list[SeamSpace] | None = None
    customer_key: str | None = None  # default: the property id of the create payload
    unit_id_field: str | None = None  # create-payload field holding the unit id (default: unitId / unit_id)
    property_id_field: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    # which Seam object a reservation's code hangs on: the device of the space (default), the devices the
    # env names, or (acs_entrance) a PIN credential on the first entrance of the workspace's access system
    check_device: Literal["space", "env", "acs_entrance"] = "space"


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
    # hosts the agent and the app's install reach through the egress proxy, instead of the stack's
    # (docs/sealing.md)
    registries: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9*.\-]+(:\d+)?$")]] | None = None
    max_change_size: ChangeSize | None = None
