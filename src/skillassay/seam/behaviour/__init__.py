"""Layer 2: build, run and drive the modified app, and check its side effects in Seam.

``validate(modified_dir, definition, run_id, ...) -> SandboxResult``; ``SandboxResult.plan_json()`` is the
plan's ``{"total", "checks": {"build", "create", "update", "cancel"}}``. See docs/sandbox.md.
"""

from skillassay.seam.behaviour.result import CheckResult, HttpExchange, SandboxResult
from skillassay.seam.behaviour.validate import validate

__all__ = ["CheckResult", "HttpExchange", "SandboxResult", "validate"]
