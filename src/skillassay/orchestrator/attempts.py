"""A run's agent phase, tried again from scratch when the model provider failed it.

Where retries happen, and why here:
- The CLIs retry a failed model call themselves (Claude Code, Codex: a few times, with backoff). That is part
  of the agent as users run it, and the proxy passes every error through unchanged so the CLI behaves as it
  would against the provider.
- When the CLI gives up, it has given up mid-run: the workspace holds half a change and the conversation
  cannot be resumed as it was. Grading that would blame the agent for the provider; resuming it would measure
  a different agent. So the unit of retry is the whole agent phase, from a fresh workspace, a fresh private
  home and a fresh model token, after an exponential backoff with jitter. Only the last attempt is graded;
  every attempt is recorded in run.json (``attempts``) with its own model usage, and the files of the earlier
  ones are kept under ``attempt-<n>/``.
- Only the provider's passing trouble is retried: 429 rate limits, 5xx, overloaded, no answer. Never retried:
  the operator's key refused or out of quota (a harness error: fix and ``--resume``), a context overflow or a
  bad request (the agent's doing, scored), the agent's own crash or non-zero exit, a timeout, a missing CLI.

The model proxy is the authority on what the provider did, and only its record of the conversation route (the
calls that carry the model's turns) counts. A CLI that reports a provider error the proxy did not see end its
conversation does not get a retry (an agent cannot buy itself a reroll by printing "overloaded", nor by
bursting token counts until the provider answers 429); a CLI that died right after the provider failed its
last conversation call, without saying so, gets one.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from skillassay.agents.base import AgentResult
from skillassay.services.model_proxy import GrantReport
from skillassay.store.records import Attempt
from skillassay.usage import RETRYABLE, ModelUsage, ProviderError

OPERATOR_KINDS = frozenset({"auth_failed", "quota_exceeded"})


class RetryPolicy(BaseModel):
    retries: int = 2  # attempts after the first, for provider errors only
    base_delay: float = 10.0  # seconds before the first retry; doubled for each next one
    max_delay: float = 300.0

    def delay(self, retry: int, rng: random.Random | None = None) -> float:
        """The wait before retry number ``retry`` (1-based): exponential, capped, with "equal jitter" (between
        half and all of it) so parallel runs that failed together do not come back together."""
        cap = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return (rng or random).uniform(cap / 2, cap)


def judge(result: AgentResult, report: GrantReport | None) -> tuple[str, str | None, str | None]:
    """The attempt's status (and error kind, error), the agent's word checked against the proxy's record.

    Only the conversation route counts (the calls that carry the model's turns): its last call failing is the
    provider's doing. A side route (token counts, model lists) that an agent bursts until the provider answers
    429, or the proxy's own refusals over a run's limits, are the agent's."""
    status, kind, error = result.status, result.error_kind, result.error
    if report is None or status in ("harness_error", "timed_out"):
        # no proxy (an agent that needs no model): the agent's own word stands; a timeout is never the
        # provider's
        return status, kind, error
    failed_run = status in ("provider_error", "agent_error") or (
        status == "completed" and result.transcript.is_error
    )
    last = last_conversation_error(report)
    if failed_run and last is not None and last.kind in RETRYABLE and report.usage.refused_requests:
        # a run the proxy had to hold back (a flood of calls) spent the shared limit itself: no reroll for
        # that
        return (
            "agent_error",
            last.kind,
            f"the provider failed the last model call ({_describe(last)}) after "
            f"the run went over the proxy's limits ({report.usage.refused_requests} request(s) refused)",
        )
    if failed_run and last is not None and last.kind in RETRYABLE:
        return "provider_error", last.kind, f"the provider failed the last model call: {_describe(last)}"
    if failed_run and last is not None and last.kind in OPERATOR_KINDS:
        return (
            "harness_error",
            last.kind,
            f"the provider refused the operator's key or account: {_describe(last)}",
        )
    if status != "provider_error":
        return status, kind, error
    if report.usage.requests == 0 and report.usage.refused_requests == 0:
        return "harness_error", "connection", "the agent never reached the model proxy: " + (error or "")
    return (
        "agent_error",
        kind,
        f"the CLI reported a provider error ({kind}) that the model proxy never saw "
        f"end its conversation: {error or ''}".strip(),
    )


def last_conversation_error(report: GrantReport) -> ProviderError | None:
    """The error of the run's last conversation call (None: it succeeded, or there was none)."""
    conversation = [c for c in report.calls if c.conversation]
    return max(conversation, key=lambda c: c.at).error if conversation else None


def _describe(e: ProviderError) -> str:
    return f"{e.http_status or 'no answer'} {e.kind}" + (f" ({e.message[:200]})" if e.message else "")


@dataclass
class AttemptsOutcome:
    result: AgentResult  # the last attempt's
    status: str  # the last attempt's, as judged
    error_kind: str | None
    error: str | None
    attempts: list[Attempt] = field(default_factory=list)
    usage: ModelUsage | None = None  # every attempt's calls: what the run cost
    calls: list = field(default_factory=list)


def run_attempts(
    attempt: Callable[[int], tuple[AgentResult, GrantReport | None]],
    policy: RetryPolicy,
    *,
    keep: Callable[[int], str | None] = lambda n: None,
    may_retry: Callable[[], bool] = lambda: True,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> AttemptsOutcome:
    """Call ``attempt(n)`` (a fresh agent phase; it returns the agent's result and the proxy's report of its
    calls) until it is not a provider error, or the retries or ``may_retry()`` (the job's budget) run out.
    Before a retry, ``keep(n)`` moves attempt n's files aside and says where they went."""
    attempts: list[Attempt] = []
    usage: ModelUsage | None = None
    calls: list = []
    n = 0
    while True:
        n += 1
        started = datetime.now(UTC)
        t = time.monotonic()
        result, report = attempt(n)
        status, kind, error = judge(result, report)
        record = Attempt(
            n=n,
            started_at=started,
            duration_s=round(time.monotonic() - t, 3),
            status=status,
            agent_status=result.status,
            error_kind=kind,
            error=error,
            exit_code=result.exit_code,
            model_usage=report.usage if report is not None else None,
        )
        attempts.append(record)
        if report is not None:
            usage = usage or ModelUsage()
            usage.add(report.usage)
            calls += [c.model_copy(update={}) for c in report.calls]
        if status != "provider_error" or n > policy.retries or not may_retry():
            return AttemptsOutcome(
                result=result,
                status=status,
                error_kind=kind,
                error=error,
                attempts=attempts,
                usage=usage,
                calls=calls,
            )
        kept = keep(n)
        record.kept = kept
        record.retry_after_s = round(policy.delay(n, rng), 3)
        sleep(record.retry_after_s)


def move_attempt_files(run_dir: Path, n: int, names: list[str]) -> Path:
    """Move what attempt ``n`` left in the run folder (transcripts, logs) into ``attempt-<n>/``."""
    target = run_dir / f"attempt-{n}"
    target.mkdir(exist_ok=True)
    for name in names:
        src = run_dir / name
        if src.exists():
            shutil.move(str(src), str(target / name))
    return target
