"""Statistics: pass@k / pass^k against brute force, bootstrap intervals, paired comparison."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillassay.scoring import stats
from skillassay.scoring.verdict import CriterionResult, decide
from skillassay.store.records import RunRecord

T0 = datetime(2026, 11, 29, 22, 0, tzinfo=UTC)


def run(eval_id: str, i: int, score: float, outcome: str = "completed", variant: str = "skill") -> RunRecord:
    crit = [
        CriterionResult(id="c1", weight=50, fraction=score),
        CriterionResult(id="c2", weight=50, fraction=score),
    ]
    return RunRecord(
        job_id="j",
        eval_id=eval_id,
        run_index=i,
        variant=variant,
        run_dir=f"j/{eval_id}/run_{i}",
        agent="noop",
        outcome=outcome,
        started_at=T0,
        finished_at=T0,
        criteria=crit,
        verdict=decide(crit),
    )


# ----------------------------------------------------------------------------- pass@k, pass^k
def brute(n: int, c: int, k: int) -> tuple[float, float]:
    """Every k-subset of n runs (the first c passing): share with at least one pass, share with all
    passing.
    """
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    all_pass = sum(all(outcomes[i] for i in s) for s in subsets) / len(subsets)
    return any_pass, all_pass


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_and_pass_hat_k_match_brute_force(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            any_pass, all_pass = brute(n, c, k)
            assert stats.pass_at_k(n, c, k) == pytest.approx(any_pass)
            assert stats.pass_hat_k(n, c, k) == pytest.approx(all_pass)


def test_pass_at_k_known_values():
    assert stats.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert stats.pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert stats.pass_at_k(5, 1, 5) == 1.0
    assert stats.pass_hat_k(5, 4, 5) == 0.0
    assert stats.pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)
    assert stats.pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        stats.pass_hat_k(3, 4, 1)


# ----------------------------------------------------------------------------- bootstrap
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_bootstrap_interval_contains_the_mean(values):
    lo, hi = stats.bootstrap_mean_ci(values, resamples=300)
    m = sum(values) / len(values)
    assert lo - 1e-9 <= m <= hi + 1e-9
    assert min(values) - 1e-9 <= lo <= hi <= max(values) + 1e-9


def test_bootstrap_is_reproducible_and_sensible():
    rng = random.Random(7)
    values = [rng.gauss(0.6, 0.1) for _ in range(50)]
    a = stats.bootstrap_mean_ci(values)
    assert a == stats.bootstrap_mean_ci(values)  # fixed seed
    # close to the normal interval mean +- 1.96 * sd / sqrt(n)
    se = statistics.stdev(values) / math.sqrt(len(values))
    m = statistics.fmean(values)
    assert a[0] == pytest.approx(m - 1.96 * se, abs=0.01)
    assert a[1] == pytest.approx(m + 1.96 * se, abs=0.01)


def test_clustered_bootstrap_is_wider_when_evals_differ():
    """Runs of one eval are correlated: resampling evals too widens the interval."""
    groups = {f"e{i}": [0.1 * i + 0.01 * j for j in range(5)] for i in range(8)}
    flat = [x for v in groups.values() for x in v]
    lo, hi = stats.clustered_bootstrap_ci(groups)
    flo, fhi = stats.bootstrap_mean_ci(flat)
    mean = statistics.fmean(statistics.fmean(v) for v in groups.values())
    assert lo <= mean <= hi
    assert (hi - lo) > (fhi - flo)


# ----------------------------------------------------------------------------- summaries
def test_summarize_known_values():
    runs = [
        run("a", 1, 1.0),
        run("a", 2, 0.5),
        run("a", 3, 0.9),
        run("b", 1, 0.2),
        run("b", 2, 0.4),
        run("b", 3, 0.0, outcome="harness_error"),
    ]
    s = stats.summarize(runs)
    a, b = s.per_eval
    assert (a.eval_id, a.n, a.passes) == ("a", 3, 2)
    assert a.mean == pytest.approx(0.8)
    assert (a.min, a.max) == (0.5, 1.0)
    assert a.sd == pytest.approx(statistics.stdev([1.0, 0.5, 0.9]))
    assert a.pass_rate == pytest.approx(2 / 3)
    assert a.pass_at_k == {1: pytest.approx(2 / 3), 3: 1.0}
    assert a.pass_hat_k == {1: pytest.approx(2 / 3), 3: 0.0}
    assert b.n == 2  # the harness error is left out
    assert b.pass_at_k == {1: 0.0}
    o = s.overall
    assert o.excluded == 1 and o.evals == 2 and o.n == 5
    assert o.mean == pytest.approx((0.8 + 0.3) / 2)  # mean of eval means
    assert o.pass_at_k == {1: pytest.approx((2 / 3 + 0) / 2)}  # only k <= the fewest runs of any eval
    assert o.ci[0] <= o.mean <= o.ci[1]
    assert s.criteria["a"]["c1"] == pytest.approx(0.8)


def test_runs_without_verdict_score_zero_and_fail():
    r = run("a", 1, 1.0).model_copy(update={"verdict": None, "criteria": [], "outcome": "agent_error"})
    (p,) = stats.to_points([r])
    assert p.score == 0.0 and not p.passed
    r2 = r.model_copy(update={"grades": {"combined": 70.0}})
    assert stats.to_points([r2])[0].score == pytest.approx(0.7)
    assert stats.summarize([]).overall is None


# ----------------------------------------------------------------------------- comparison
def noisy_job(shift: float, seed: int, evals: int = 6, runs: int = 5, sd: float = 0.05) -> list[RunRecord]:
    rng = random.Random(seed)
    base = {f"e{e}": 0.3 + 0.08 * e for e in range(evals)}
    return [
        run(e, i, min(1.0, max(0.0, m + shift + rng.gauss(0, sd))))
        for e, m in base.items()
        for i in range(1, runs + 1)
    ]


def test_compare_identical_jobs():
    a = noisy_job(0.0, seed=1)
    c = stats.compare(a, a)
    assert c.overall.delta == 0
    assert c.overall.ci[0] <= 0 <= c.overall.ci[1]
    assert not c.significant
    assert all(d.delta == 0 for d in c.per_eval)
    assert all(v[2] == 0 for v in c.criteria.values())
    assert "No difference observed" in c.warning
    assert "score the same" in c.verdict
    assert not c.unpaired_a and not c.unpaired_b


def test_compare_clear_shift_excludes_zero():
    a, b = noisy_job(0.0, seed=1), noisy_job(0.2, seed=2)
    c = stats.compare(a, b, a_label="old", b_label="new")
    assert c.overall.delta == pytest.approx(0.2, abs=0.03)
    assert c.overall.ci[0] > 0
    assert c.significant and c.warning is None
    assert c.verdict.startswith("New scores") and "higher" in c.verdict and "excludes zero" in c.verdict
    assert c.criteria["c1"][2] == pytest.approx(0.2, abs=0.03)
    # and the other way round
    c2 = stats.compare(b, a)
    assert c2.overall.ci[1] < 0 and "lower" in c2.verdict


def test_compare_too_few_runs_warns_with_runs_needed():
    a, b = noisy_job(0.0, seed=3, evals=3, runs=3, sd=0.15), noisy_job(0.03, seed=4, evals=3, runs=3, sd=0.15)
    c = stats.compare(a, b)
    assert not c.significant
    assert c.warning and "Too few runs" in c.warning and "per eval" in c.warning
    expected_total = math.ceil(((1.96 + 0.84) * c.overall.sd / abs(c.overall.delta)) ** 2)
    assert c.overall.runs_needed == max(2, math.ceil(expected_total / 3))
    assert str(c.overall.runs_needed) in c.warning


def test_runs_needed_formula():
    assert stats.runs_needed(0.1, 0.05) == math.ceil((2.8 * 0.1 / 0.05) ** 2)  # 31.36 -> 32
    assert stats.runs_needed(0.1, -0.05) == 32
    assert stats.runs_needed(0.1, 0.0) is None
    assert stats.runs_needed(0.0, 0.1) == 2


def test_compare_pairs_by_eval_and_run_index():
    a = [run("x", 1, 0.5), run("x", 2, 0.5), run("y", 1, 0.5)]
    b = [run("x", 2, 0.9), run("x", 1, 0.7), run("z", 1, 0.1)]
    c = stats.compare(a, b)
    assert [d.eval_id for d in c.per_eval] == ["x"]
    assert c.per_eval[0].delta == pytest.approx(0.3)
    assert c.unpaired_a == [("y", 1)] and c.unpaired_b == [("z", 1)]
    assert "2 run(s) had no partner" in c.verdict
    assert stats.compare([], b).overall is None


def test_compare_counts_every_outcome_and_leaves_the_unscored_out():
    """Issue 14: compare says how many runs ended in each outcome, and no unscored run moves a figure."""
    a = [run("e", 1, 0.5), run("e", 2, 0.5), run("e", 3, 0.0, outcome="harness_error")]
    b = [
        run("e", 1, 1.0),
        run("e", 2, 0.0, outcome="agent_error"),
        run("e", 3, 1.0, outcome="provider_error"),
    ]
    cmp = stats.compare(a, b, a_label="base", b_label="skill")
    assert cmp.outcomes_a == {"completed": 2, "harness_error": 1}
    assert cmp.outcomes_b == {"completed": 1, "agent_error": 1, "provider_error": 1}
    assert cmp.unscored_a == {"harness_error": 1} and cmp.unscored_b == {"provider_error": 1}
    # run 3 is unscored on both sides: only runs 1 and 2 pair up (the agent error is scored, as the agent's)
    assert cmp.overall.pairs == 2 and cmp.overall.mean_b == pytest.approx(0.5)
    assert (
        "Not scored, so left out of every figure: base: 1 harness error; skill: 1 provider error."
        in cmp.verdict
    )
    assert cmp.to_dict()["outcomes_b"]["agent_error"] == 1
