"""The job's side of the agent's model: which upstream and keys its model proxy gets, whether the job can run
at all, and how much it has spent.

The provider keys are read from the harness's environment and ``--agent-env``, handed to the proxy, and never
to an agent. ``--model-upstream URL`` (or, as before, ``--agent-env SKILLASSAY_MODEL_BASE_URL=URL``) sends
both APIs to one place instead of the providers: the scripted model server in tests, a gateway in production.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from skillassay.errors import SkillassayError
from skillassay.services.model_proxy.proxy import PROVIDER_KEYS, ModelProxy, upstreams_from_env
from skillassay.usage import ModelUsage, load_prices

UPSTREAM_ENV = "SKILLASSAY_MODEL_BASE_URL"


def upstream_override(model_upstream: str | None, agent_env: Mapping[str, str]) -> str | None:
    return model_upstream or agent_env.get(UPSTREAM_ENV) or None


def harness_env(agent_env: Mapping[str, str]) -> dict[str, str]:
    """What the proxy reads its keys and provider URLs from: the harness's environment, then --agent-env."""
    return {**os.environ, **agent_env}


def model_preflight(
    model_api: str | None, agent_name: str, agent_env: Mapping[str, str], model_upstream: str | None
) -> str | None:
    """Why the job cannot give this agent a model (a missing key), or None. Checked before the job starts."""
    if model_api is None or model_api == "any" or upstream_override(model_upstream, agent_env):
        return None
    env = harness_env(agent_env)
    names = [name for name, (api, _) in PROVIDER_KEYS.items() if api == model_api]
    if any(env.get(n) for n in names):
        return None
    return (
        f"{agent_name} talks to its model through skillassay's model proxy, which needs "
        f"{' or '.join(names)} in the environment (or --agent-env); the agent itself never sees it. "
        f"For a model server or gateway: --model-upstream URL"
    )


def start_proxy(
    model_upstream: str | None,
    agent_env: Mapping[str, str],
    pricing: Path | None,
    host: str = "127.0.0.1",
    port: int = 0,
    public_host: str | None = None,
) -> ModelProxy:
    upstreams = upstreams_from_env(harness_env(agent_env), upstream_override(model_upstream, agent_env))
    return ModelProxy(upstreams, load_prices(pricing), host=host, port=port, public_host=public_host).start()


class Budget:
    """``--max-cost``: what the job has spent (earlier sessions of it, plus this one's proxy), against the
    limit.
    """

    def __init__(self, max_cost: float | None, before: ModelUsage | None, proxy: ModelProxy | None):
        self.max_cost = max_cost
        self.before = before
        self.proxy = proxy
        self._lock = threading.Lock()
        self.stopped = 0  # runs not started because the budget was spent

    def spent(self) -> float:
        now = self.proxy.job_usage().cost_usd if self.proxy is not None else 0.0
        return (self.before.cost_usd if self.before is not None else 0.0) + now

    def left(self) -> bool:
        return self.max_cost is None or self.spent() < self.max_cost

    def note_stopped(self) -> None:
        with self._lock:
            self.stopped += 1

    def usage(self) -> ModelUsage | None:
        if self.proxy is None:
            return self.before
        total = ModelUsage()
        if self.before is not None:
            total.add(self.before)
        total.add(self.proxy.job_usage())
        return total


class BudgetSpent(SkillassayError):
    """A run was not started: the job has spent its --max-cost."""
