"""Options more than one command takes (the LLM judge's), in one place."""

from __future__ import annotations

import typer

from skillassay.errors import SkillassayError

# the LLM judge's options (graders/judge_config.py says where each default comes from)
JUDGE_MODEL = typer.Option(
    None,
    "--judge-model",
    help="The LLM judge's model, for llm_judge criteria (default: "
    "$SKILLASSAY_JUDGE_MODEL, or the job's for --resume/regrade).",
)
JUDGE_PROVIDER = typer.Option(
    None,
    "--judge-provider",
    help="anthropic (default), openai-responses or openai-chat ($SKILLASSAY_JUDGE_PROVIDER).",
)
JUDGE_BASE_URL = typer.Option(
    None,
    "--judge-base-url",
    help="The judge's API root (default: the provider's; $SKILLASSAY_JUDGE_BASE_URL).",
)
JUDGE_KEY_ENV = typer.Option(
    None,
    "--judge-key-env",
    help="The NAME of the variable holding the judge's key (default ANTHROPIC_API_KEY / OPENAI_API_KEY).",
)


def judge_from_options(model: str | None, provider: str | None, base_url: str | None, key_env: str | None):
    """The judge from the options, else the environment; None when none names a model (exit 2 when half
    given).
    """
    from skillassay.graders.judge_config import resolve

    try:
        return resolve(model, provider, base_url, key_env)
    except SkillassayError as exc:
        raise typer.BadParameter(str(exc), param_hint="--judge-model") from None
