"""What the agent's model calls used and cost, and the provider errors they met.

The model proxy (``services/model_proxy``) fills these records, one ``ModelCall`` per request; a run keeps the
sum (``ModelUsage``) in run.json and every call in ``model_calls.jsonl``; a job adds its runs up. Prices come
from the table shipped beside this module (``prices.toml``), which a user may extend or override with a file
of the same form.

Token counts are normalised across the two APIs so one formula prices both: ``input_tokens`` are the input
tokens billed at the base input price. Anthropic reports them that way; OpenAI's ``input_tokens`` include the
cached ones, so ``cached_tokens`` are moved to ``cache_read_input_tokens``.
"""

from __future__ import annotations

import re
import tomllib
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillassay.errors import SkillassayError

Api = Literal["anthropic", "openai"]

# The routes that carry the model's turns (what the agent's conversation is made of, and what bills tokens);
# the others (token counts, model lists) are side routes. Only a conversation call failing can make a run the
# provider's failure (orchestrator/attempts.py).
CONVERSATION_PATHS = frozenset({"/v1/messages", "/v1/responses", "/v1/responses/compact"})


def is_conversation(path: str) -> bool:
    return path in CONVERSATION_PATHS


# -- provider errors -----------------------------------------------------------------------------------------

ProviderErrorKind = Literal[
    "rate_limited",  # 429
    "overloaded",  # 529, overloaded_error
    "server_error",  # 500, 502, 503, 504
    "connection",  # no answer: refused, reset, timed out, a stream cut off
    "auth_failed",  # 401, 403: the operator's key
    "quota_exceeded",  # out of credit / quota: the operator's account
    "context_exceeded",  # the prompt is longer than the model's window: the agent's doing
    "bad_request",  # any other 4xx
]
# Worth waiting and trying again: the provider's passing trouble, not the agent's and not a set-up mistake.
RETRYABLE: frozenset[str] = frozenset({"rate_limited", "overloaded", "server_error", "connection"})

_CONTEXT = re.compile(
    r"prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|context window|input is too "
    r"long|"
    r"too many tokens",
    re.IGNORECASE,
)
_QUOTA = re.compile(r"insufficient_quota|credit balance|billing|exceeded your current quota", re.IGNORECASE)
_OVERLOADED = re.compile(r"overloaded", re.IGNORECASE)


def classify(status: int | None, text: str = "") -> ProviderErrorKind | None:
    """The kind of a provider's error answer (status and body, or an error event's text); None for a
    success.
    """
    if status is None:
        return "connection"
    if status < 400:
        return _kind_from_text(text)
    if status == 429:
        return "quota_exceeded" if _QUOTA.search(text) else "rate_limited"
    if status == 529 or (status >= 500 and _OVERLOADED.search(text)):
        return "overloaded"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth_failed"
    if status == 402 or _QUOTA.search(text):
        return "quota_exceeded"
    if _CONTEXT.search(text):
        return "context_exceeded"
    return "bad_request"


# What only the provider says about the operator's account: an error type or code, or a message that BEGINS
# with one of these sentences. Never a phrase found anywhere in the message: providers echo the request in
# their errors ("model: <the name asked for>", "... tag '<the value sent>' ..."), and an agent that sends a
# model named "credit balance is too low" must not turn its own bad request into the operator's problem (an
# unscored run).
_QUOTA_CODES = frozenset(
    {"insufficient_quota", "billing_error", "billing_hard_limit_reached", "quota_exceeded"}
)
_QUOTA_START = re.compile(
    r"\s*(your credit balance is too low|you exceeded your current quota|"
    r"you have exceeded your (monthly )?(spend|usage|quota))",
    re.IGNORECASE,
)


def classify_answer(status: int, body: bytes) -> ProviderErrorKind | None:
    """The kind of a provider's error answer (``status`` >= 400 and its body as received), read from the
    error's type/code and the start of its message, so nothing the request put into the message (providers
    echo it) can make the agent's own bad request look like the provider's or the operator's failure."""
    kind, code, message = _error_fields(body)
    codes = {c.lower() for c in (kind, code) if c}
    if status == 429:
        return "quota_exceeded" if codes & _QUOTA_CODES or _QUOTA_START.match(message) else "rate_limited"
    if status == 529 or "overloaded_error" in codes:
        return "overloaded"
    if status >= 500:
        return "overloaded" if re.match(r"\s*overloaded", message, re.IGNORECASE) else "server_error"
    if status in (401, 403):
        return "auth_failed"
    if status == 402 or codes & _QUOTA_CODES or _QUOTA_START.match(message):
        return "quota_exceeded"
    if "context_length_exceeded" in codes or _CONTEXT.search(message):
        return "context_exceeded"  # the agent's doing either way: an echo cannot move it off the agent
    return "bad_request"


def _error_fields(body: bytes) -> tuple[str, str, str]:
    """(type, code, message) of a provider error body (Anthropic's ``{"error": {"type", "message"}}``,
    OpenAI's ``{"error": {"type", "code", "message"}}``), or ("", "", the text) when it is not JSON."""
    import json

    try:
        doc = json.loads(body)
    except ValueError:
        return "", "", body[:500].decode("utf-8", "replace")
    err = doc.get("error", doc) if isinstance(doc, dict) else doc
    if not isinstance(err, dict):
        return "", "", str(err)[:500]
    return tuple(str(err.get(k) or "") for k in ("type", "code", "message"))  # type: ignore[return-value]


def _kind_from_text(text: str) -> ProviderErrorKind | None:
    """An error inside a 200 stream (Anthropic ``event: error``, OpenAI ``response.failed``): by its
    type/code.
    """
    low = text.lower()
    if not low:
        return None
    if "overloaded" in low:
        return "overloaded"
    if "rate_limit" in low or "rate limit" in low:
        return "quota_exceeded" if _QUOTA.search(text) else "rate_limited"
    if _QUOTA.search(text):
        return "quota_exceeded"
    if _CONTEXT.search(text):
        return "context_exceeded"
    if "authentication" in low or "permission" in low:
        return "auth_failed"
    if "invalid_request" in low or "invalid_prompt" in low:
        return "bad_request"
    return "server_error"


class ProviderError(BaseModel):
    """One error answer (or no answer) from the model provider, as the proxy saw it."""

    at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    api: Api | None = None
    kind: ProviderErrorKind
    http_status: int | None = None  # None when there was no answer, or the error came inside a 200 stream
    message: str = ""  # the provider's message, shortened (it never holds a key: the proxy scrubs it)
    model: str | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


# -- tokens and prices ---------------------------------------------------------------------------------------


class TokenCounts(BaseModel):
    input_tokens: int = 0  # billed at the input price (never includes the cached ones)
    output_tokens: int = 0  # reasoning tokens included
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_tokens: int = 0  # part of output_tokens, shown on its own where the provider says

    def add(self, other: TokenCounts) -> None:
        for name in TokenCounts.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class Price(BaseModel):
    """USD per million tokens. Cache prices default to the input price: no discount assumed unless stated."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    aliases: list[str] = Field(default_factory=list)

    def cost(self, t: TokenCounts) -> float:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        return (
            t.input_tokens * self.input
            + t.output_tokens * self.output
            + t.cache_read_input_tokens * cache_read
            + t.cache_creation_input_tokens * cache_write
        ) / 1_000_000


_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    as_of: str | None = None
    models: dict[str, Price] = Field(default_factory=dict)
    sources: list[str] = Field(default_factory=list)  # the files the table was read from, in order

    def price(self, model: str | None) -> Price | None:
        """The price of ``model``: its entry, an alias, or either with the provider's date suffix removed."""
        if not model:
            return None
        for name in (model, _DATE_SUFFIX.sub("", model)):
            if name in self.models:
                return self.models[name]
            for price in self.models.values():
                if name in price.aliases:
                    return price
        return None

    def cost(self, model: str | None, tokens: TokenCounts) -> float | None:
        price = self.price(model)
        return None if price is None else price.cost(tokens)

    def merged(self, other: PriceTable) -> PriceTable:
        return PriceTable(
            as_of=other.as_of or self.as_of,
            models={**self.models, **other.models},
            sources=self.sources + other.sources,
        )


def _read_table(text: str, source: str) -> PriceTable:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SkillassayError(f"{source}: not valid TOML: {exc}") from None
    try:
        table = PriceTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in first["loc"])
        raise SkillassayError(f"{source} at {where}: {first['msg']}") from None
    table.sources = [source]
    return table


def load_prices(override: Path | None = None) -> PriceTable:
    """The shipped table, extended (and overridden entry by entry) by ``override`` when given."""
    shipped = _read_table(
        resources.files(__package__).joinpath("prices.toml").read_text("utf-8"), "prices.toml"
    )
    if override is None:
        return shipped
    path = Path(override)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SkillassayError(f"--pricing {path}: cannot read it: {exc.strerror or exc}") from None
    return shipped.merged(_read_table(text, str(path)))


# -- what a run (or a job) used ------------------------------------------------------------------------------


class ModelCall(BaseModel):
    """One request the agent made to its model, through the proxy."""

    at: datetime
    api: Api
    path: str
    model: str | None = None  # as the provider answered (else as requested)
    status: int | None = None  # None: no HTTP answer from the provider
    duration_s: float = 0.0
    stream: bool = False
    tokens: TokenCounts = Field(default_factory=TokenCounts)
    cost_usd: float | None = None  # None: the model is not in the price table
    error: ProviderError | None = None

    @property
    def conversation(self) -> bool:
        return is_conversation(self.path)


class ModelTotals(TokenCounts):
    requests: int = 0
    cost_usd: float | None = 0.0  # None when the model is unpriced


MAX_ERRORS_KEPT = 50


class ModelUsage(TokenCounts):
    """The sum of a run's (or a job's) model calls. ``cost_usd`` counts priced calls only: when
    ``unpriced_models`` is not empty, it is a lower bound, and every report says so."""

    requests: int = 0
    failed_requests: int = 0  # answered with an error, or not at all
    cost_usd: float = 0.0
    unpriced_models: list[str] = Field(default_factory=list)
    by_model: dict[str, ModelTotals] = Field(default_factory=dict)
    provider_errors: list[ProviderError] = Field(default_factory=list)  # the first MAX_ERRORS_KEPT, in order
    provider_error_count: int = 0
    # requests the proxy answered itself, over the run's limits (concurrency, side-route rate): never sent
    # upstream, not in ``requests``, never a provider error
    refused_requests: int = 0

    @property
    def cost_known(self) -> bool:
        return not self.unpriced_models

    @property
    def retryable_errors(self) -> list[ProviderError]:
        return [e for e in self.provider_errors if e.retryable]

    def add_call(self, call: ModelCall) -> None:
        self.requests += 1
        if call.error is not None or (call.status is not None and call.status >= 400) or call.status is None:
            self.failed_requests += 1
        TokenCounts.add(self, call.tokens)
        name = call.model or "unknown"
        totals = self.by_model.setdefault(name, ModelTotals())
        totals.requests += 1
        totals.add(call.tokens)
        if call.cost_usd is None:
            has_tokens = (
                call.tokens.input_tokens or call.tokens.output_tokens or call.tokens.cache_read_input_tokens
            )
            if has_tokens or call.tokens.cache_creation_input_tokens:
                totals.cost_usd = None
                if name not in self.unpriced_models:
                    self.unpriced_models.append(name)
        else:
            self.cost_usd += call.cost_usd
            if totals.cost_usd is not None:
                totals.cost_usd += call.cost_usd
        if call.error is not None:
            self.add_error(call.error)

    def add_error(self, error: ProviderError) -> None:
        self.provider_error_count += 1
        if len(self.provider_errors) < MAX_ERRORS_KEPT:
            self.provider_errors.append(error)

    def add(self, other: ModelUsage) -> None:  # type: ignore[override]
        """Add another run's (or attempt's) usage to this one."""
        TokenCounts.add(self, other)
        self.requests += other.requests
        self.failed_requests += other.failed_requests
        self.cost_usd += other.cost_usd
        for m in other.unpriced_models:
            if m not in self.unpriced_models:
                self.unpriced_models.append(m)
        for name, t in other.by_model.items():
            mine = self.by_model.setdefault(name, ModelTotals())
            TokenCounts.add(mine, t)
            mine.requests += t.requests
            mine.cost_usd = (
                None if mine.cost_usd is None or t.cost_usd is None else mine.cost_usd + t.cost_usd
            )
        for e in other.provider_errors:
            if len(self.provider_errors) < MAX_ERRORS_KEPT:
                self.provider_errors.append(e)
        self.provider_error_count += other.provider_error_count
        self.refused_requests += other.refused_requests


def total(usages: list[ModelUsage | None]) -> ModelUsage:
    out = ModelUsage()
    for u in usages:
        if u is not None:
            out.add(u)
    return out


__all__ = [
    "CONVERSATION_PATHS",
    "RETRYABLE",
    "Api",
    "ModelCall",
    "ModelTotals",
    "ModelUsage",
    "Price",
    "PriceTable",
    "ProviderError",
    "ProviderErrorKind",
    "TokenCounts",
    "classify",
    "is_conversation",
    "load_prices",
    "total",
]
