"""The sandbox layer's result: the plan's JSON (``plan_json()``) plus the evidence behind every point."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

CHECK_POINTS = {"build": 10, "create": 30, "update": 30, "cancel": 30}


class HttpExchange(BaseModel):
    """One request the harness sent to the app, and the app's answer."""

    method: str
    url: str
    request_body: Any = None
    status: int | None = None
    response_body: Any = None  # parsed JSON when the answer was JSON, else text (truncated)
    error: str | None = None  # connection refused, timeout, ...
    elapsed_s: float = 0.0


class CheckResult(BaseModel):
    name: Literal["build", "create", "update", "cancel"]
    points: int = 0
    max_points: int
    passed: bool = False
    reason: str | None = None  # why it failed (or a note when it passed)
    requests: list[HttpExchange] = Field(default_factory=list)
    seam: dict[str, Any] = Field(default_factory=dict)  # what was expected and found in Seam
    details: dict[str, Any] = Field(default_factory=dict)  # build: health URL, start command, log tail on failure
    elapsed_s: float = 0.0

    def ok(self, note: str | None = None) -> CheckResult:
        self.passed, self.points, self.reason = True, self.max_points, note
        return self

    def fail(self, reason: str) -> CheckResult:
        self.passed, self.points, self.reason = False, 0, reason
        return self


def empty_checks() -> dict[str, CheckResult]:
    return {n: CheckResult(name=n, max_points=p) for n, p in CHECK_POINTS.items()}  # type: ignore[arg-type]


class SandboxResult(BaseModel):
    fixture: str
    run_id: str
    seam_mode: Literal["emulator", "live"]
    backend: Literal["host", "docker"]
    total: int = 0
    checks: dict[str, CheckResult] = Field(default_factory=empty_checks)
    timings: dict[str, float] = Field(default_factory=dict)  # seconds: copy, install, build, start, create, ...
    logs: dict[str, str] = Field(default_factory=dict)  # name -> path of the log file
    log_tail: str | None = None  # the app's last output when it failed to start or crashed
    emulator_spec_version: str | None = None
    seam: dict[str, Any] = Field(default_factory=dict)  # the bootstrap: workspace, spaces, devices, customer key
    run: dict[str, Any] = Field(default_factory=dict)  # how the app was run: plan source, start argv, cache hits
    templates: dict[str, str] = Field(default_factory=dict)  # the template values used (RUN_ID, STARTS_AT, ...)
    error: str | None = None  # an infrastructure problem that stopped the validation (not the app's fault)

    def finish(self) -> SandboxResult:
        self.total = sum(c.points for c in self.checks.values())
        return self

    def plan_json(self) -> dict[str, Any]:
        return {"total": self.total, "checks": {n: self.checks[n].points for n in CHECK_POINTS}}
