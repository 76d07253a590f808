"""Trigger metrics against values computed by hand on small synthetic sets."""

import pytest

from skillassay.kinds.trigger.scoring import (
    TriggerPoint,
    compare_triggers,
    summarize_triggers,
    trigger_stats,
)
from skillassay.scoring.skill_use import UsePoint, skill_use_split


def runs(prompt, category, should, *triggered, **first):
    return [
        TriggerPoint(prompt, category, should, i + 1, t, **(first if t else {}))
        for i, t in enumerate(triggered)
    ]


# 6 prompts x 2 runs.
#   explicit  e1 (should): T T      -> TP 2
#   implicit  i1 (should): T F      -> TP 1, FN 1
#   implicit  i2 (should): F F      -> FN 2
#   contextual c1 (should): T T     -> TP 2
#   negative  n1 (not):    T F      -> FP 1, TN 1
#   negative  n2 (not):    F F      -> TN 2
SET = (
    runs("e1", "explicit", True, True, True, turn=1, seconds=2.0, tokens=100)
    + runs("i1", "implicit", True, True, False, turn=3, seconds=6.0, tokens=900)
    + runs("i2", "implicit", True, False, False)
    + runs("c1", "contextual", True, True, True, turn=2, seconds=4.0, tokens=400)
    + runs("n1", "negative", False, True, False, turn=5, seconds=9.0, tokens=2000)
    + runs("n2", "negative", False, False, False)
)


def test_overall_counts_and_metrics_by_hand():
    s = summarize_triggers(SET, resamples=500)
    c = s.overall.confusion
    assert (c.tp, c.fp, c.fn, c.tn) == (5, 1, 3, 3)
    m = {k: e.value for k, e in s.overall.metrics.items()}
    assert m["recall"] == pytest.approx(5 / 8)
    assert m["precision"] == pytest.approx(5 / 6)
    assert m["f1"] == pytest.approx(2 * 5 / (2 * 5 + 1 + 3))  # = 2PR/(P+R) = 10/14
    assert m["f1"] == pytest.approx(2 * (5 / 6) * (5 / 8) / (5 / 6 + 5 / 8))
    assert m["false_trigger_rate"] == pytest.approx(1 / 4)
    assert m["accuracy"] == pytest.approx(8 / 12)
    assert (s.overall.prompts, s.overall.runs) == (6, 12)


def test_per_category_by_hand_with_undefined_metrics():
    s = summarize_triggers(SET, resamples=500)
    by = {c.group: c for c in s.per_category}
    assert list(by) == ["explicit", "implicit", "contextual", "negative"]
    assert by["explicit"].metrics["recall"].value == 1.0 and by["explicit"].metrics["precision"].value == 1.0
    assert by["implicit"].metrics["recall"].value == pytest.approx(1 / 4)
    assert by["implicit"].metrics["f1"].value == pytest.approx(2 / (2 + 0 + 3))
    assert by["contextual"].metrics["recall"].value == 1.0
    # negative prompts have no positives: recall undefined; one false trigger in four runs
    neg = by["negative"].metrics
    assert neg["recall"].value is None and neg["recall"].ci is None
    assert neg["precision"].value == 0.0 and neg["false_trigger_rate"].value == pytest.approx(1 / 4)
    assert neg["accuracy"].value == pytest.approx(3 / 4)


def test_prompts_time_to_trigger_misses_and_false_triggers():
    s = summarize_triggers(SET, resamples=200)
    p = {x.prompt: x for x in s.prompts}
    assert [x.prompt for x in s.prompts] == ["e1", "i1", "i2", "c1", "n1", "n2"]  # category order, then id
    assert (p["i1"].triggered, p["i1"].runs, p["i1"].unstable, p["i1"].correct) == (1, 2, True, 1)
    assert (p["n1"].correct, p["n2"].correct) == (1, 2)
    assert [x.prompt for x in s.missed] == ["i1", "i2"] and [x.prompt for x in s.false_triggers] == ["n1"]
    assert (p["e1"].turn, p["e1"].seconds, p["e1"].tokens) == (1, 2.0, 100)
    # medians over the 6 runs that triggered: turns 1,1,3,2,2,5 -> 2; seconds 2,2,6,4,4,9 -> 4; tokens -> 400
    assert (s.median_turn, s.median_seconds, s.median_tokens) == (2, 4.0, 400)


def test_intervals_hand_computable_cases():
    # every run of every should-trigger prompt triggered: every resample has recall 1
    all_hit = runs("a", "implicit", True, True, True) + runs("b", "implicit", True, True, True)
    assert trigger_stats(all_hit, resamples=300).metrics["recall"].ci == (1.0, 1.0)
    # two prompts, one always triggers, one never (no run-level noise): a resample's recall is the share of
    # draws of the first, so 0, 1/2, 1 with chances 1/4, 1/2, 1/4: the 95% percentile interval is (0, 1)
    split = runs("a", "implicit", True, True, True, True) + runs("b", "implicit", True, False, False, False)
    st = trigger_stats(split, resamples=2000)
    assert st.metrics["recall"].value == 0.5 and st.metrics["recall"].ci == (0.0, 1.0)
    # clustered by prompt: 20 runs of one prompt are one prompt, not 20 independent runs: no interval
    one = runs("a", "implicit", True, *([True] * 10 + [False] * 10))
    assert trigger_stats(one, resamples=500).metrics["recall"].ci is None
    # two such prompts: the run-level spread within each widens the interval beyond the prompts' own (0.5,
    # 0.5)
    two = one + runs("b", "implicit", True, *([True] * 10 + [False] * 10))
    lo, hi = trigger_stats(two, resamples=2000).metrics["recall"].ci
    assert lo < 0.5 < hi and lo > 0.2 and hi < 0.8
    # one negative prompt: recall has an interval (two positives), the false-trigger rate has none
    mixed = all_hit + runs("n", "negative", False, True, False)
    st = trigger_stats(mixed, resamples=300)
    assert st.metrics["recall"].ci is not None and st.metrics["false_trigger_rate"].ci is None


def test_same_runs_same_interval():
    a = trigger_stats(SET, resamples=400).metrics["f1"].ci
    b = trigger_stats(list(reversed(SET)), resamples=400).metrics["f1"].ci
    assert a == b and a[0] <= 10 / 14 <= a[1]


def test_compare_two_versions_paired_per_prompt():
    a = (
        runs("e1", "explicit", True, True, True)
        + runs("i1", "implicit", True, False, False)
        + runs("n1", "negative", False, True, True)
        + runs("only-a", "implicit", True, True, True)
    )
    b = (
        runs("e1", "explicit", True, True, True)
        + runs("i1", "implicit", True, True, True)
        + runs("n1", "negative", False, True, False)
        + runs("only-b", "negative", False, False, False)
    )
    cmp = compare_triggers(a, b, "old description", "new description", resamples=500)
    assert cmp.pairs == 3 and cmp.unpaired_a == ["only-a"] and cmp.unpaired_b == ["only-b"]
    d = {m.metric: m for m in cmp.overall}
    # A on the paired prompts: TP 2, FN 2, FP 2, TN 0. B: TP 4, FN 0, FP 1, TN 1
    assert d["recall"].a == pytest.approx(0.5) and d["recall"].b == pytest.approx(1.0)
    assert d["precision"].a == pytest.approx(0.5) and d["precision"].b == pytest.approx(0.8)
    assert d["f1"].a == pytest.approx(4 / 8) and d["f1"].b == pytest.approx(8 / 9)
    assert d["f1"].delta == pytest.approx(8 / 9 - 0.5)
    assert d["false_trigger_rate"].delta == pytest.approx(0.5 - 1.0)
    # i1 went from never to always (expected: better); n1 from always to half (majority: no longer triggers)
    assert [(f.prompt, f.rate_a, f.rate_b, f.better) for f in cmp.flips] == [
        ("i1", 0.0, 1.0, True),
        ("n1", 1.0, 0.5, True),
    ]
    assert [f.prompt for f in cmp.changed] == ["i1", "n1"]
    assert set(cmp.per_category) == {"explicit", "implicit", "negative"}
    assert "2 prompt(s) flipped: 2 to the expected decision" in cmp.verdict


def test_compare_identical_versions_has_a_zero_interval():
    cmp = compare_triggers(SET, SET, resamples=300)
    f1 = next(m for m in cmp.overall if m.metric == "f1")
    assert f1.delta == 0 and not cmp.flips and not f1.excludes_zero
    # both sides are resampled independently within each prompt, so unstable prompts still give some spread
    assert f1.ci[0] <= 0 <= f1.ci[1]


def test_skill_use_split_by_hand():
    pts = [
        UsePoint("a", 1, passed=True, used=True, listed=True),
        UsePoint("a", 2, passed=False, used=False, listed=True),
        UsePoint("a", 3, passed=True, used=True, listed=True),
        UsePoint("b", 1, passed=False, used=False, listed=False),
        UsePoint("b", 2, passed=True, used=False, listed=True),
        UsePoint("c", 1, passed=True, used=None),  # an agent without tool calls: not measured
    ]
    s = skill_use_split(pts, resamples=300)
    assert (s.runs, s.unmeasured, s.listed, s.used, s.unused) == (5, 1, 4, 2, 3)
    assert s.used_share.value == pytest.approx(2 / 5)
    assert (s.passed_used, s.pass_rate_used) == (2, 1.0)
    assert (s.passed_unused, s.pass_rate_unused) == (1, pytest.approx(1 / 3))
    assert s.evals_with_both == 1  # eval a; b never used it
    lo, hi = s.used_share.ci
    assert 0 <= lo <= 2 / 5 <= hi <= 1
    assert "used in 2 of 5 run(s)" in s.sentence() and "when not used: 33.3% (1/3)" in s.sentence()
