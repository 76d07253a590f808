"""How to reach the LLM judge (``judge.py``): provider, model, endpoint and the *name* of the key's variable.

Its own module, below both the grading context (``base.ProcessContext`` carries one) and the judge that reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

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
        return cls(
            provider=env.get("SKILLASSAY_JUDGE_PROVIDER") or "anthropic",
            model=model,  # type: ignore[arg-type]
            base_url=env.get("SKILLASSAY_JUDGE_BASE_URL") or None,
            api_key_env=env.get("SKILLASSAY_JUDGE_API_KEY_ENV") or None,
        )

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
