"""The sandbox layer's result: the plan's JSON (``plan_json()``) plus the evidence behind every point."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay.seam.behaviour.trace import SeamTrace

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
    # build: health URL, start command, log tail on failure
    details: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float = 0.0

    def ok(self, note: str | None = None) -> CheckResult:
        self.passed, self.points, self.reason = True, self.max_points, note
        return self

    def fail(self, reason: str) -> CheckResult:
        self.passed, self.points, self.reason = False, 0, reason
        return self


def empty_checks() -> dict[str, CheckResult]:
    return {n: CheckResult(name=n, max_points=p) for n, p in CHECK_POINTS.items()}


class SandboxResult(BaseModel):
    fixture: str
    run_id: str
    seam_mode: Literal["emulator", "live"]
    backend: Literal["host", "docker"]
    total: int = 0
    checks: dict[str, CheckResult] = Field(default_factory=empty_checks)
    # seconds: copy, install, build, start, create, ...
    timings: dict[str, float] = Field(default_factory=dict)
    logs: dict[str, str] = Field(default_factory=dict)  # name -> path of the log file
    log_tail: str | None = None  # the app's last output when it failed to start or crashed
    emulator_spec_version: str | None = None
    # the bootstrap: workspace, spaces, devices, customer key
    seam: dict[str, Any] = Field(default_factory=dict)
    # how the app was run: plan source, start argv, cache hits
    run: dict[str, Any] = Field(default_factory=dict)
    # the template values used (RUN_ID, STARTS_AT, ...)
    templates: dict[str, str] = Field(default_factory=dict)
    error: str | None = None  # an infrastructure problem that stopped the validation (not the app's fault)
    # every request the app sent Seam, each attributed to the step whose window it arrived in (emulator only)
    seam_trace: SeamTrace | None = None

    def finish(self) -> SandboxResult:
        self.total = sum(c.points for c in self.checks.values())
        return self

    def plan_json(self) -> dict[str, Any]:
        return {"total": self.total, "checks": {n: self.checks[n].points for n in CHECK_POINTS}}


def _window(item: dict[str, Any]) -> str:
    return f"{item.get('starts_at') or '…'}..{item.get('ends_at') or '…'}"


def check_evidence(check: dict[str, Any], limit: int = 12) -> list[str]:
    """A check's evidence as lines for people (the run page's criteria table), from its JSON: why it failed,
    the request sent to the app and its answer, the codes and grants found in Seam (on which device and
    space, with which times), and the app's own Seam requests with their statuses."""
    lines: list[str] = []
    if check.get("reason"):
        lines.append(str(check["reason"]))
    details = check.get("details") or {}
    if details.get("health_url"):
        steps = ", ".join(f"{k} {v:g} s" for k, v in (details.get("timings") or {}).items())
        lines.append(f"answered {details['health_url']}" + (f" ({steps})" if steps else ""))
    for ex in check.get("requests") or []:
        answer = ex.get("error") or (f"HTTP {ex['status']}" if ex.get("status") is not None else "no answer")
        lines.append(f"asked the app: {ex.get('method')} {ex.get('url')} -> {answer}")
    seam = check.get("seam") or {}
    expected = seam.get("expected") or {}
    if expected:
        lines.append("expected in Seam: " + ", ".join(f"{k} {v}" for k, v in expected.items()))
    for code in (seam.get("found") or [])[:4]:
        where = f" in space {', '.join(code['space_keys'])}" if code.get("space_keys") else ""
        via = f" for reservation {code['reservation_key']}" if code.get("reservation_key") else ""
        lines.append(
            f"code {code.get('code') or '?'} ({code.get('access_code_id')}) on device {code.get('device_id')}"
            f"{where}{via}, {_window(code)}, {code.get('status')}"
        )
    if "found" in seam and not seam.get("found"):
        lines.append("no code of this run found in Seam")
    for grant in (seam.get("grants") or [])[:3]:
        via = f" for reservation {grant['reservation_key']}" if grant.get("reservation_key") else ""
        lines.append(
            f"access grant {grant.get('access_grant_id')}{via} on space "
            f"{', '.join(grant.get('space_keys') or [])}, {_window(grant)}"
        )
    sent = seam.get("app_seam_requests")
    if isinstance(sent, list):
        if not sent:
            lines.append("the app sent Seam no request")
        for req in sent[:6]:
            if isinstance(req, dict):
                status = req.get("status")
                text = (
                    f"the app -> Seam: {req.get('method')} {req.get('path')} -> "
                    f"{status if status is not None else 'no answer'}"
                )
                if req.get("error"):
                    text += f" ({req['error']})"
                lines.append(text)
            else:  # results stored before statuses were recorded
                lines.append(f"the app -> Seam: {req}")
        if len(sent) > 6:
            lines.append(f"… {len(sent) - 6} more Seam requests")
    return lines[:limit]
