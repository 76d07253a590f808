"""Prices, token sums and the kinds of provider errors."""

from __future__ import annotations

import pytest

from skillassay.errors import SkillassayError
from skillassay.usage import ModelCall, ModelUsage, TokenCounts, classify, load_prices


def test_shipped_prices_match_dated_ids_and_aliases_but_never_guess():
    table = load_prices()
    assert table.as_of and table.price("claude-haiku-4-5-20251001") is table.price("claude-haiku-4-5")
    assert table.price("gpt-5.4-2026-03-05") is table.price("gpt-5.4")
    assert table.price("claude-opus-4") is table.price("claude-opus-4-0")
    # a newer model of a known family is unpriced, not priced like its neighbour
    assert table.price("claude-opus-4-9") is None and table.price("gpt-5.5-codex-max") is None
    # OpenAI charges no cache writes: the cache-write price defaults to the input price
    t = TokenCounts(input_tokens=1_000_000, cache_creation_input_tokens=1_000_000)
    assert table.cost("gpt-5.5", t) == pytest.approx(10.0)


@pytest.mark.parametrize(
    "text",
    [
        '[models."x"]\ninput = -1\noutput = 1\n',
        '[models."x"]\ninput = 1\n',
        '[models."x"]\ninput = 1\noutput = 2\ncolour = "red"\n',
        "not toml [",
    ],
)
def test_a_bad_price_file_names_the_file_and_field(tmp_path, text):
    f = tmp_path / "mine.toml"
    f.write_text(text)
    with pytest.raises(SkillassayError, match=r"mine.toml") as exc:
        load_prices(f)
    if "TOML" not in str(exc.value):
        assert "/models/x/" in str(exc.value)


def test_a_missing_price_file_is_a_clear_error(tmp_path):
    with pytest.raises(SkillassayError, match=r"--pricing .*nope.toml"):
        load_prices(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (429, "rate_limit_error: slow down", "rate_limited"),
        (429, "insufficient_quota: You exceeded your current quota", "quota_exceeded"),
        (529, "overloaded_error: Overloaded", "overloaded"),
        (503, "overloaded", "overloaded"),
        (500, "api_error", "server_error"),
        (502, "", "server_error"),
        (401, "authentication_error: invalid x-api-key", "auth_failed"),
        (403, "permission_error", "auth_failed"),
        (
            400,
            "invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum",
            "context_exceeded",
        ),
        (400, "context_length_exceeded", "context_exceeded"),
        (400, "invalid_request_error: Your credit balance is too low", "quota_exceeded"),
        (400, "invalid_request_error: bad tool", "bad_request"),
        (None, "", "connection"),
        (200, "", None),
        (200, "overloaded_error: Overloaded", "overloaded"),
    ],
)
def test_provider_errors_are_classified(status, text, kind):
    assert classify(status, text) == kind


def test_usage_adds_up_and_flags_unpriced_models():
    from datetime import UTC, datetime

    def call(model, cost, **tokens):
        return ModelCall(
            at=datetime.now(UTC),
            api="anthropic",
            path="/v1/messages",
            model=model,
            status=200,
            tokens=TokenCounts(**tokens),
            cost_usd=cost,
        )

    a, b = ModelUsage(), ModelUsage()
    a.add_call(call("m1", 0.5, input_tokens=10, output_tokens=2))
    b.add_call(call("m2", None, input_tokens=5))
    b.add_call(call("m1", 0.25, output_tokens=1))
    a.add(b)
    assert (a.requests, a.input_tokens, a.output_tokens, a.cost_usd) == (3, 15, 3, 0.75)
    assert a.unpriced_models == ["m2"] and not a.cost_known
    assert a.by_model["m1"].cost_usd == 0.75 and a.by_model["m2"].cost_usd is None
