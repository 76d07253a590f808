"""An LLM judge for criteria no program can decide.

Configured by the user, never guessed: ``SKILLASSAY_JUDGE_MODEL`` (required to enable the judge),
``SKILLASSAY_JUDGE_PROVIDER`` (``anthropic``, ``openai-responses`` or ``openai-chat``; default ``anthropic``),
``SKILLASSAY_JUDGE_BASE_URL`` (default: the provider's public API), ``SKILLASSAY_JUDGE_API_KEY_ENV`` (the
*name* of the variable holding the key; default ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``). Without a model
the criteria it grades are unjudged, and the result says so.

The judge answers by calling one tool, ``record_judgement`` {score 0..1, quotes, reasoning}, over a streamed
(server-sent events) request. Every quote must appear verbatim in the material it was shown (the diff, the
transcript, the final message); a judgement with no quote, or with a quote not found, is rejected: the
criterion is unjudged, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx
from pydantic import BaseModel, Field, ValidationError

from skillassay.definitions.agent_eval import Criterion, JudgeOptions
from skillassay.graders.base import GradeResult, HarnessFault, ProcessContext
from skillassay.graders.judge_config import (  # noqa: F401 (re-exported: the judge's configuration)
    DEFAULT_BASE_URLS,
    DEFAULT_KEY_ENV,
    JudgeConfig,
    Provider,
)

TOOL_NAME = "record_judgement"

JUDGEMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "the share of the criterion met: 0 not at all, 1 fully",
        },
        "quotes": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "exact excerpts, copied character for character from the material, that support "
            "the score",
        },
        "reasoning": {"type": "string", "description": "why, in a few sentences"},
    },
    "required": ["score", "quotes", "reasoning"],
}

SYSTEM = (
    "You grade one criterion of a coding agent's work. Read the material, decide what share of the "
    "criterion was met, and answer only by calling the record_judgement tool. Support the score with quotes "
    "copied exactly, character for character, from the material (lines of the diff without their leading +/- "
    "marker are fine); a judgement whose quotes cannot be found is discarded."
)


class Judgement(BaseModel):
    score: float = Field(ge=0, le=1)
    quotes: list[str] = Field(min_length=1)
    reasoning: str = ""


class JudgeError(Exception):
    pass


# ----------------------------------------------------------------------------- requests
def request_body(config: JudgeConfig, system: str, user: str) -> dict[str, Any]:
    if config.provider == "anthropic":
        return {
            "model": config.model,
            "max_tokens": config.max_tokens,
            "stream": True,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [
                {"name": TOOL_NAME, "description": "Record the judgement.", "input_schema": JUDGEMENT_SCHEMA}
            ],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
        }
    if config.provider == "openai-responses":
        return {
            "model": config.model,
            "stream": True,
            "instructions": system,
            "max_output_tokens": config.max_tokens,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": user}]}],
            "tools": [
                {
                    "type": "function",
                    "name": TOOL_NAME,
                    "description": "Record the judgement.",
                    "parameters": JUDGEMENT_SCHEMA,
                }
            ],
            "tool_choice": {"type": "function", "name": TOOL_NAME},
        }
    return {
        "model": config.model,
        "stream": True,
        "max_tokens": config.max_tokens,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": TOOL_NAME,
                    "description": "Record the judgement.",
                    "parameters": JUDGEMENT_SCHEMA,
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}},
    }


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str | None, str]]:
    """(event name, data) for each server-sent event."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


def read_stream(provider: Provider, events: Iterator[tuple[str | None, str]]) -> tuple[str | None, str]:
    """(the record_judgement arguments as JSON text, or None; the text the model wrote)."""
    text: list[str] = []
    args: dict[int | str, list[str]] = {}
    names: dict[int | str, str] = {}
    done_args: str | None = None
    for _event, data in events:
        if data.strip() == "[DONE]":
            break
        try:
            msg = json.loads(data)
        except ValueError:
            continue
        kind = msg.get("type")
        if provider == "anthropic":
            if kind == "content_block_start":
                block = msg.get("content_block") or {}
                if block.get("type") == "tool_use":
                    names[msg["index"]] = block.get("name", "")
                    args[msg["index"]] = [json.dumps(block["input"])] if block.get("input") else []
            elif kind == "content_block_delta":
                delta = msg.get("delta") or {}
                if delta.get("type") == "text_delta":
                    text.append(delta.get("text", ""))
                elif delta.get("type") == "input_json_delta":
                    args.setdefault(msg["index"], []).append(delta.get("partial_json", ""))
            elif kind == "error":
                raise JudgeError(f"the judge's stream failed: {msg.get('error')}")
        elif provider == "openai-responses":
            if kind == "response.output_text.delta":
                text.append(msg.get("delta", ""))
            elif kind == "response.function_call_arguments.delta":
                args.setdefault(msg.get("item_id", ""), []).append(msg.get("delta", ""))
            elif kind == "response.output_item.done":
                item = msg.get("item") or {}
                if item.get("type") == "function_call" and item.get("name") == TOOL_NAME:
                    done_args = item.get("arguments")
            elif kind in ("response.failed", "error"):
                raise JudgeError(f"the judge's stream failed: {msg.get('response', msg).get('error')}")
        else:
            for choice in msg.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                for call in delta.get("tool_calls") or []:
                    idx = call.get("index", 0)
                    fn = call.get("function") or {}
                    if fn.get("name"):
                        names[idx] = fn["name"]
                    if fn.get("arguments"):
                        args.setdefault(idx, []).append(fn["arguments"])
    if done_args is not None:
        return done_args, "".join(text)
    for key, parts in args.items():
        if names.get(key, TOOL_NAME) == TOOL_NAME and parts:
            return "".join(parts), "".join(text)
    return None, "".join(text)


def _json_in_text(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def ask(config: JudgeConfig, system: str, user: str, env: Mapping[str, str] | None = None) -> Judgement:
    body = request_body(config, system, user)
    try:
        with (
            httpx.Client(timeout=config.timeout) as client,
            client.stream("POST", config.url, headers=config.headers(env), json=body) as resp,
        ):
            if resp.status_code >= 400:
                resp.read()
                raise JudgeError(f"the judge answered HTTP {resp.status_code}: {resp.text[:300]}")
            raw, text = read_stream(config.provider, sse_events(resp.iter_lines()))
    except httpx.HTTPError as exc:
        raise JudgeError(f"could not reach the judge at {config.url}: {exc}") from exc
    raw = raw if raw is not None else _json_in_text(text)
    if raw is None:
        raise JudgeError("the judge gave no judgement (no record_judgement call)")
    try:
        return Judgement.model_validate_json(raw)
    except ValidationError as exc:
        raise JudgeError(f"the judge's answer is not a valid judgement: {exc.errors()[0]['msg']}") from exc


# ----------------------------------------------------------------------------- the grader
def material(ctx: ProcessContext, inputs: Sequence[str], max_chars: int) -> str:
    parts = []
    if "diff" in inputs:
        parts.append(
            "=== DIFF (pristine -> modified) ===\n" + (ctx.change.patch(max_chars=200_000) or "(no change)")
        )
    t = ctx.transcript
    if "transcript" in inputs and t is not None:
        lines = []
        for m in t.messages:
            lines.append(f"[{m.role}] {m.text}")
        for c in t.tool_calls:
            what = c.command or ", ".join(c.paths) or json.dumps(c.input)[:500]
            lines.append(
                f"[tool {c.name}{' denied' if c.denied else ''}] {what}"
                + (f" -> exit {c.exit_code}" if c.exit_code is not None else "")
            )
        parts.append("=== TRANSCRIPT ===\n" + "\n".join(lines))
    if "final_message" in inputs and t is not None and t.final_message:
        parts.append("=== FINAL MESSAGE ===\n" + t.final_message)
    return "\n\n".join(parts)[:max_chars]


def _without_diff_markers(text: str) -> str:
    """The material with each diff line's leading ``+``/``-``/space marker removed, so a quote of several
    lines of new code, copied without the markers, is still found verbatim."""
    out = []
    for line in text.splitlines():
        if line.startswith(("+++ ", "--- ")):
            out.append(line)
        elif line[:1] in ("+", "-", " "):
            out.append(line[1:])
        else:
            out.append(line)
    return "\n".join(out)


def unverified_quotes(judgement: Judgement, text: str) -> list[str]:
    """Quotes not found verbatim in ``text`` (nor in it without diff markers)."""
    plain = _without_diff_markers(text)
    return [
        q for q in judgement.quotes if not q.strip() or (q.strip() not in text and q.strip() not in plain)
    ]


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = JudgeOptions.model_validate(criterion.options)
    config = ctx.judge_config
    if config is None:
        # `run`, `regrade` and `check --controls` refuse before this (judge.require_judge); a direct caller
        # lands here
        raise HarnessFault(
            "no LLM judge configured (--judge-model, or SKILLASSAY_JUDGE_MODEL): this criterion needs one"
        )
    if "transcript" in opts.inputs and "diff" not in opts.inputs and ctx.transcript is None:
        return GradeResult(fraction=None, evidence=["no transcript to show the judge"])
    shown = material(ctx, opts.inputs, opts.max_chars)
    user = (
        f"Criterion: {criterion.id}: {criterion.description}\nQuestion: {opts.question}\n\n"
        f"Task the agent was given:\n{ctx.definition.prompt}\n\nMaterial:\n{shown}"
    )
    try:
        judgement = ask(config, SYSTEM, user)
    except JudgeError as exc:
        raise HarnessFault(f"the LLM judge ({config.model}) failed: {exc}") from exc
    missing = unverified_quotes(judgement, shown)
    if missing:
        # the judge's answer cannot be checked against the material: the judge failed, not the agent
        raise HarnessFault(
            f"the LLM judge ({config.model}) quoted something not in the material: "
            f'"{missing[0][:200]}" (it said {judgement.score:g}: {judgement.reasoning[:200]})'
        )
    return GradeResult(
        fraction=judgement.score,
        evidence=[f"judge ({config.model}): {judgement.reasoning[:500]}"]
        + [f'quote: "{q[:300]}"' for q in judgement.quotes],
    )
