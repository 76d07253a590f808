"""How to reach the LLM judge (``judge.py``): provider, model, endpoint and the *name* of the key's variable.

Its own module, below both the grading context (``base.ProcessContext`` carries one) and the judge that reads
it.

Where it comes from (``resolve``), first found wins: the command's options (``--judge-model``,
``--judge-provider``, ``--judge-base-url``, ``--judge-key-env``: on ``run``, ``regrade`` and ``check
--controls``), the environment (``SKILLASSAY_JUDGE_MODEL``, ``_PROVIDER``, ``_BASE_URL``, ``_API_KEY_ENV``),
and for ``--resume`` and ``regrade`` the judge the job was run with (kept in job.json: never a key, only the
name of the variable holding it). An eval with an ``llm_judge`` criterion is refused before anything runs when
no judge is configured (``require``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import BaseModel, ValidationError

from skillassay.errors import SkillassayError

if TYPE_CHECKING:
    from skillassay.definitions.models import EvalDefinition

Provider = Literal["anthropic", "openai-responses", "openai-chat"]
DEFAULT_BASE_URLS = {
    "anthropic": "https://api.anthropic.com",
    "openai-responses": "https://api.openai.com",
    "openai-chat": "https://api.openai.com",
}
DEFAULT_KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
}


class JudgeConfig(BaseModel):
    provider: Provider = "anthropic"
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 120.0
    max_tokens: int = 1024

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JudgeConfig | None:
        env = os.environ if env is None else env
        model = env.get("SKILLASSAY_JUDGE_MODEL")
        if not model:
            return None
        given = {
            "provider": env.get("SKILLASSAY_JUDGE_PROVIDER"),
            "base_url": env.get("SKILLASSAY_JUDGE_BASE_URL"),
            "api_key_env": env.get("SKILLASSAY_JUDGE_API_KEY_ENV"),
        }
        return cls(model=model, **{k: v for k, v in given.items() if v})  # only what is set counts as given

    @property
    def url(self) -> str:
        base = (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")
        path = {
            "anthropic": "/v1/messages",
            "openai-responses": "/v1/responses",
            "openai-chat": "/v1/chat/completions",
        }[self.provider]
        base = base.removesuffix("/v1")
        return base + path

    def headers(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        env = os.environ if env is None else env
        key = env.get(self.api_key_env or DEFAULT_KEY_ENV[self.provider], "")
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.provider == "anthropic":
            headers["anthropic-version"] = "2023-06-01"
            if key:
                headers["x-api-key"] = key
        elif key:
            headers["authorization"] = f"Bearer {key}"
        return headers


class JudgeOverrides(TypedDict, total=False):
    """The judge options given on the command line, laid over a job's own judge (``resolve``'s keywords)."""

    model: str
    provider: str
    base_url: str
    api_key_env: str


def resolve(
    model: str | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    stored: Mapping[str, Any] | JudgeConfig | None = None,
) -> JudgeConfig | None:
    """The judge to use: options over the environment over what the job stored; None when none names a
    model.
    """
    found = JudgeConfig.from_env(env)
    base = stored.model_dump() if isinstance(stored, JudgeConfig) else dict(stored or {})
    if found is not None:
        base = {**base, **found.model_dump(exclude_unset=True)}
    given = {"model": model, "provider": provider, "base_url": base_url, "api_key_env": api_key_env}
    base.update({k: v for k, v in given.items() if v})
    if not base.get("model"):
        if any(given.values()):
            raise SkillassayError(
                "--judge-provider/--judge-base-url/--judge-key-env need --judge-model (or "
                "SKILLASSAY_JUDGE_MODEL)"
            )
        return None
    try:
        return JudgeConfig.model_validate(base)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise SkillassayError(f"--judge-{field.replace('_', '-')}: {err['msg']}") from None


def judged_criteria(definitions: Iterable[EvalDefinition]) -> list[tuple[str, str]]:
    """(eval id, criterion id) of every criterion an LLM judge grades."""
    return [(d.id, c.id) for d in definitions for c in d.criteria if c.grader == "llm_judge"]


def require(definitions: Iterable[EvalDefinition], config: JudgeConfig | None) -> None:
    """Refuse (exit 2) before anything runs when an eval needs the LLM judge and none is configured: every
    such criterion would otherwise be a harness error, run after run."""
    needed = judged_criteria(definitions)
    if needed and config is None:
        names = ", ".join(f"{e} ({c})" for e, c in needed[:5]) + (" ..." if len(needed) > 5 else "")
        raise SkillassayError(
            f"an LLM judge grades {names}: give --judge-model MODEL (and --judge-base-url, "
            "--judge-provider, --judge-key-env as needed) or set SKILLASSAY_JUDGE_MODEL"
        )
