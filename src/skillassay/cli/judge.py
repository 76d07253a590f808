"""The LLM judge's options, shared by ``run``, ``regrade`` and ``check --controls`` (not a command module)."""

from __future__ import annotations

from typing import Any

import typer

MODEL = typer.Option(None, "--judge-model", help="The LLM judge's model, for llm_judge criteria (default: "
                                                 "$SKILLASSAY_JUDGE_MODEL, or the job's for --resume/regrade).")
PROVIDER = typer.Option(None, "--judge-provider",
                        help="anthropic (default), openai-responses or openai-chat ($SKILLASSAY_JUDGE_PROVIDER).")
BASE_URL = typer.Option(None, "--judge-base-url",
                        help="The judge's API root (default: the provider's; $SKILLASSAY_JUDGE_BASE_URL).")
KEY_ENV = typer.Option(None, "--judge-key-env", help="The NAME of the variable holding the judge's key (default "
                                                     "ANTHROPIC_API_KEY / OPENAI_API_KEY; $SKILLASSAY_JUDGE_API_KEY_ENV).")


def config(model: str | None, provider: str | None, base_url: str | None, key_env: str | None) -> Any:
    """The judge from the options, else the environment; None when none names a model."""
    from skillassay.errors import SkillassayError
    from skillassay.graders.process.judge_config import resolve

    try:
        return resolve(model, provider, base_url, key_env)
    except SkillassayError as exc:
        raise typer.BadParameter(str(exc), param_hint="--judge-model") from None


def overrides(model: str | None, provider: str | None, base_url: str | None, key_env: str | None) -> dict[str, str]:
    """The options given, to lay over a job's own judge (``--resume``, ``regrade``)."""
    given = {"model": model, "provider": provider, "base_url": base_url, "api_key_env": key_env}
    return {k: v for k, v in given.items() if v}
