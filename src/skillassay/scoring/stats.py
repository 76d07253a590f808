"""Statistics over runs: summaries per eval and overall, pass@k / pass^k, bootstrap intervals, paired
comparison.

Pure functions, standard library only. Every bootstrap uses ``random.Random(seed)`` so the same runs always
give the same interval. Scores are fractions 0..1 (``Verdict.score``); reports show them as percentages.

Which runs count: the scored outcomes of ``skillassay.outcomes`` (completed, agent error, timed out).
Provider, harness and definition errors are not the agent's doing: left out of every figure, and counted. A
scored run with no verdict scores 0 and fails.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Literal, Protocol

from skillassay.outcomes import (
    LEGACY,
    OUTCOMES,
    RERUN,
    SERVICE_GAP,
    SERVICE_GAP_FIGURE,
    is_scored,
    label,
)
from skillassay.scoring import GRADING_VERSION


class _Verdict(Protocol):
    @property
    def score(self) -> float: ...
    @property
    def passed(self) -> bool: ...


class _CriterionScore(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def fraction(self) -> float | None: ...


class ScoredRun(Protocol):
    """What statistics read from a run (``store.records.RunRecord`` is one): scoring stays below the store and
    can be tested with plain objects. Read-only: a run whose fields are narrower (a Literal outcome) is one
    too."""

    @property
    def job_id(self) -> str: ...
    @property
    def eval_id(self) -> str: ...
    @property
    def run_index(self) -> int: ...
    @property
    def outcome(self) -> str: ...
    @property
    def grading_version(self) -> int: ...
    @property
    def verdict(self) -> _Verdict | None: ...
    @property
    def criteria(self) -> Sequence[_CriterionScore]: ...

    def figure(self, name: str) -> float | None: ...  # one of the eval kind's own figures (``grades``)


DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20261129
DEFAULT_KS = (1, 3, 5)
Z_ALPHA = 1.96  # two-sided 5%
Z_BETA = 0.84  # 80% power
# the most the arms' shares of unscored runs may differ by before `compare` refuses a verdict
# (docs/results.md): an arm whose failures go unscored would otherwise look better than it is
DEFAULT_MAX_UNSCORED_GAP = 0.1


# --------------------------------------------------------------------------- points
@dataclass(frozen=True)
class Point:
    """What statistics need from one run."""

    eval_id: str
    run_index: int
    score: float  # 0..1
    passed: bool
    # criterion id -> fraction earned (unjudged = 0)
    criteria: Mapping[str, float] = field(default_factory=dict)


def run_score(run: ScoredRun) -> float:
    if run.verdict is not None:
        return run.verdict.score
    combined = run.figure("combined")
    if combined is not None:  # a Seam-layers-only run: the plan's combined score, 0-100
        return combined / 100.0
    return 0.0


def to_points(runs: Iterable[ScoredRun]) -> list[Point]:
    out = []
    for r in runs:
        # provider/harness/definition errors: not the agent's doing, in no figure
        if not is_scored(r.outcome):
            continue
        out.append(
            Point(
                eval_id=r.eval_id,
                run_index=r.run_index,
                score=run_score(r),
                passed=bool(r.verdict and r.verdict.passed),
                criteria={c.id: (c.fraction or 0.0) for c in r.criteria},
            )
        )
    return out


def by_eval(points: Iterable[Point]) -> dict[str, list[Point]]:
    groups: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        groups[p.eval_id].append(p)
    return {k: sorted(v, key=lambda p: p.run_index) for k, v in sorted(groups.items())}


# --------------------------------------------------------------------------- pass@k, pass^k
def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k runs drawn without replacement from n runs (c of them passing) passes.
    Unbiased estimator: 1 - C(n-c, k) / C(n, k)."""
    _check_nck(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance that all k runs drawn without replacement pass. Unbiased estimator: C(c, k) / C(n,
    k).
    """
    _check_nck(n, c, k)
    return comb(c, k) / comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


# --------------------------------------------------------------------------- bootstrap
def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def _percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    if not sorted_xs:
        raise ValueError("no values")
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def _interval(stats: list[float], level: float) -> tuple[float, float]:
    stats.sort()
    tail = (1.0 - level) / 2.0
    return _percentile(stats, tail), _percentile(stats, 1.0 - tail)


def _indices(rng: random.Random, n: int, k: int) -> Sequence[int]:
    """k uniform indices in range(n), from the seeded generator. For n <= 256 (the usual number of runs or
    evals) they come from random bytes, mapped with ``bytes.translate`` and with the bytes that would bias
    the mapping (the top 256 mod n values) rejected, which is unbiased and many times faster than
    ``choices``."""
    if n > 256:
        return rng.choices(range(n), k=k)
    usable = 256 - 256 % n
    table = bytes(b % n for b in range(256))
    reject = bytes(range(usable, 256))
    out = bytearray()
    while len(out) < k:
        out += rng.randbytes(k - len(out) + (k >> 3) + 16).translate(table, reject)
    return bytes(out[:k])


@functools.lru_cache(maxsize=512)
def _resample_means(values: tuple[float, ...], resamples: int, seed: int) -> tuple[float, ...]:
    """Means of ``resamples`` resamples (with replacement, same size) of ``values``, drawn in one go from
    ``random.Random(seed)``. Cached: an eval's own interval and the clustered interval over all evals use
    the same resamples of that eval (same values, same seed), so they are computed once."""
    n = len(values)
    idx = _indices(random.Random(seed), n, n * resamples)
    get = values.__getitem__
    return tuple(sum(map(get, idx[i : i + n])) / n for i in range(0, n * resamples, n))


def group_seed(seed: int, key: str) -> int:
    """The seed of one group's (eval's) resamples: fixed for a given seed and eval id."""
    return seed ^ zlib.crc32(key.encode("utf-8"))


def bootstrap_mean_ci(
    values: Sequence[float], resamples: int = DEFAULT_RESAMPLES, level: float = 0.95, seed: int = DEFAULT_SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean: resample the values with replacement ``resamples`` times."""
    if not values:
        raise ValueError("no values")
    return _interval(list(_resample_means(tuple(values), resamples, seed)), level)


def clustered_bootstrap_ci(
    groups: Mapping[str, Sequence[float]],
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """Two-stage (clustered) bootstrap of the mean of group means: resample the groups (evals) with
    replacement, then the values (runs) within each drawn group. Runs of one eval are not independent of
    each other, so resampling runs alone would give too narrow an interval.

    For speed, each group's second-stage resample means are computed once (``resamples`` of them per group,
    seeded by ``group_seed(seed, key)``) and each drawn group takes one of its own at random; that is the
    same two-stage distribution, sampled from a pool of ``resamples`` inner resamples per group rather than
    drawn afresh each time."""
    keys = [k for k, v in groups.items() if v]
    if not keys:
        raise ValueError("no values")
    rng = random.Random(seed)
    pools = [_resample_means(tuple(groups[k]), resamples, group_seed(seed, k)) for k in keys]
    e = len(keys)
    drawn = _indices(rng, e, e * resamples)
    picks = _indices(rng, resamples, e * resamples)
    stats = [
        sum(pools[g][p] for g, p in zip(drawn[i : i + e], picks[i : i + e], strict=True)) / e
        for i in range(0, e * resamples, e)
    ]
    return _interval(stats, level)


# --------------------------------------------------------------------------- summaries
@dataclass
class ScoreStats:
    """Summary of one eval's runs, or of all evals (``eval_id == "*"``)."""

    eval_id: str
    n: int  # runs counted
    passes: int
    mean: float
    min: float
    max: float
    sd: float  # sample standard deviation (n-1); 0 with one run
    pass_rate: float
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    ci: tuple[float, float]  # bootstrap 95% interval of the mean
    evals: int = 1
    excluded: int = 0  # unscored runs left out (provider, harness and definition errors)

    def to_dict(self) -> dict:
        return {
            "eval_id": self.eval_id,
            "n": self.n,
            "passes": self.passes,
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "sd": self.sd,
            "pass_rate": self.pass_rate,
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "ci95": list(self.ci),
            "evals": self.evals,
            "excluded": self.excluded,
        }


@dataclass
class Summary:
    per_eval: list[ScoreStats]
    overall: ScoreStats | None  # None when no run counted
    criteria: dict[str, dict[str, float]]  # eval id -> criterion id -> mean fraction

    def to_dict(self) -> dict:
        return {
            "per_eval": [s.to_dict() for s in self.per_eval],
            "overall": self.overall.to_dict() if self.overall else None,
            "criteria": self.criteria,
        }


def _sd(xs: Sequence[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def eval_stats(
    eval_id: str,
    points: Sequence[Point],
    ks: Sequence[int] = DEFAULT_KS,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> ScoreStats:
    scores = [p.score for p in points]
    n, c = len(points), sum(p.passed for p in points)
    return ScoreStats(
        eval_id=eval_id,
        n=n,
        passes=c,
        mean=_mean(scores),
        min=min(scores),
        max=max(scores),
        sd=_sd(scores),
        pass_rate=c / n,
        pass_at_k={k: pass_at_k(n, c, k) for k in ks if k <= n},
        pass_hat_k={k: pass_hat_k(n, c, k) for k in ks if k <= n},
        ci=bootstrap_mean_ci(scores, resamples=resamples, seed=group_seed(seed, eval_id)),
    )


def summarize(
    runs: Iterable[ScoredRun],
    ks: Sequence[int] = DEFAULT_KS,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Summary:
    """Per eval and overall. The overall mean is the mean of the per-eval means (each eval weighs the same
    however many runs it has); its interval is the clustered bootstrap; overall pass@k is the mean of the
    evals' pass@k, given for k no larger than the fewest runs of any eval."""
    runs = list(runs)
    excluded = sum(not is_scored(r.outcome) for r in runs)
    groups = by_eval(to_points(runs))
    per_eval = [eval_stats(e, pts, ks, seed, resamples) for e, pts in groups.items()]
    crit: dict[str, dict[str, float]] = {}
    for e, pts in groups.items():
        ids: dict[str, list[float]] = defaultdict(list)
        for p in pts:
            for cid, frac in p.criteria.items():
                ids[cid].append(frac)
        crit[e] = {cid: _mean(v) for cid, v in ids.items()}
    if not per_eval:
        return Summary(per_eval=[], overall=None, criteria=crit)
    all_points = [p for pts in groups.values() for p in pts]
    min_n = min(s.n for s in per_eval)
    overall = ScoreStats(
        eval_id="*",
        n=len(all_points),
        passes=sum(p.passed for p in all_points),
        mean=_mean([s.mean for s in per_eval]),
        min=min(s.min for s in per_eval),
        max=max(s.max for s in per_eval),
        sd=_sd([p.score for p in all_points]),
        pass_rate=_mean([s.pass_rate for s in per_eval]),
        pass_at_k={k: _mean([s.pass_at_k[k] for s in per_eval]) for k in ks if k <= min_n},
        pass_hat_k={k: _mean([s.pass_hat_k[k] for s in per_eval]) for k in ks if k <= min_n},
        ci=clustered_bootstrap_ci(
            {e: [p.score for p in pts] for e, pts in groups.items()}, resamples, seed=seed
        ),
        evals=len(per_eval),
        excluded=excluded,
    )
    return Summary(per_eval=per_eval, overall=overall, criteria=crit)


# --------------------------------------------------------------------------- paired comparison
@dataclass
class Delta:
    """B minus A, over the paired runs of one eval (or all evals: ``eval_id == "*"``)."""

    eval_id: str
    pairs: int
    mean_a: float
    mean_b: float
    delta: float
    sd: float  # SD of the paired differences
    ci: tuple[float, float] | None  # paired bootstrap 95% interval of the delta (None with one pair)
    pass_rate_a: float
    pass_rate_b: float
    # pairs per eval needed to detect this delta (see ``runs_needed``); None if undefined
    runs_needed: int | None

    @property
    def excludes_zero(self) -> bool:
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)

    def to_dict(self) -> dict:
        return {
            "eval_id": self.eval_id,
            "pairs": self.pairs,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "delta": self.delta,
            "sd": self.sd,
            "ci95": list(self.ci) if self.ci else None,
            "excludes_zero": self.excludes_zero,
            "pass_rate_a": self.pass_rate_a,
            "pass_rate_b": self.pass_rate_b,
            "runs_needed": self.runs_needed,
        }


@dataclass
class Comparison:
    per_eval: list[Delta]
    overall: Delta | None
    # criterion id -> (mean A, mean B, delta) over paired runs
    criteria: dict[str, tuple[float, float, float]]
    unpaired_a: list[tuple[str, int]]  # runs of A with no partner in B
    unpaired_b: list[tuple[str, int]]
    warning: str | None
    verdict: str  # the result in plain words
    unscored_a: dict[str, int] = field(default_factory=dict)  # outcome -> runs of A left out (not scored)
    unscored_b: dict[str, int] = field(default_factory=dict)
    outcomes_a: dict[str, int] = field(default_factory=dict)  # outcome -> runs of A, every outcome
    outcomes_b: dict[str, int] = field(default_factory=dict)
    unscored_gap: UnscoredGap | None = None  # both arms' shares of unscored runs, over all their runs
    eval_gaps: list[UnscoredGap] = field(default_factory=list)  # evals whose shares differ more than allowed
    max_unscored_gap: float = DEFAULT_MAX_UNSCORED_GAP
    refusal: Refusal | None = None  # why no verdict is given (the figures are still computed)

    @property
    def significant(self) -> bool:
        return self.refusal is None and self.overall is not None and self.overall.excludes_zero

    def unscored_rows(self) -> list[tuple[Literal["a", "b"], str, UnscoredShare]]:
        """(arm, eval or "all", its unscored share): both arms overall, then each eval whose shares differ too
        much."""
        gaps = [("all", self.unscored_gap)] if self.unscored_gap else []
        gaps += [(g.eval_id, g) for g in self.eval_gaps]
        return [row for where, g in gaps for row in (("a", where, g.a), ("b", where, g.b))]

    def to_dict(self) -> dict:
        return {
            "per_eval": [d.to_dict() for d in self.per_eval],
            "overall": self.overall.to_dict() if self.overall else None,
            "criteria": {k: {"mean_a": a, "mean_b": b, "delta": d} for k, (a, b, d) in self.criteria.items()},
            "unpaired_a": [list(x) for x in self.unpaired_a],
            "unpaired_b": [list(x) for x in self.unpaired_b],
            "unscored_a": dict(self.unscored_a),
            "unscored_b": dict(self.unscored_b),
            "outcomes_a": dict(self.outcomes_a),
            "outcomes_b": dict(self.outcomes_b),
            "unscored_share": self.unscored_gap.to_dict() if self.unscored_gap else None,
            "unscored_evals": [g.to_dict() for g in self.eval_gaps],
            "max_unscored_gap": self.max_unscored_gap,
            "no_verdict": self.refusal.to_dict() if self.refusal else None,
            "significant": self.significant,
            "warning": self.warning,
            "verdict": self.verdict,
        }


def runs_needed(sd: float, delta: float, z_alpha: float = Z_ALPHA, z_beta: float = Z_BETA) -> int | None:
    """Paired runs needed to detect ``delta`` with a two-sided 5% test at 80% power, given the SD of the
    paired differences: n = ((z_alpha + z_beta) * sd / delta)^2, rounded up. The usual normal approximation
    for a paired test; it ignores clustering, so treat it as a lower bound. None when delta is 0 (no
    difference to detect)."""
    if delta == 0:
        return None
    if sd == 0:
        return 2  # every pair differs by the same amount: two pairs already show it (one gives no spread)
    return max(2, math.ceil(((z_alpha + z_beta) * sd / abs(delta)) ** 2))


def _paired_ci(
    groups: Mapping[str, Sequence[float]], resamples: int, seed: int
) -> tuple[float, float] | None:
    if sum(len(v) for v in groups.values()) < 2:
        return None
    return clustered_bootstrap_ci(groups, resamples=resamples, seed=seed)


def compare(
    a_runs: Iterable[ScoredRun],
    b_runs: Iterable[ScoredRun],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    a_label: str = "A",
    b_label: str = "B",
    max_unscored_gap: float = DEFAULT_MAX_UNSCORED_GAP,
) -> Comparison:
    """Compare B with A, paired by eval and run index (run 3 of an eval in A against run 3 of the same eval in
    B).

    Deltas are B minus A. The interval of the overall delta is a paired bootstrap clustered by eval: resample
    the evals, then the pairs within each drawn eval, and take the mean of the per-eval mean differences.
    Unscored runs (provider, harness and definition errors) are left out of every figure and counted
    (``unscored_a/b``).

    No verdict (``refusal``, the verdict saying why) when the scored runs were graded with more than one
    grading version, or when the arms' shares of unscored runs differ by more than ``max_unscored_gap``."""
    a_runs, b_runs = list(a_runs), list(b_runs)
    unscored_a, unscored_b = unscored_counts(a_runs), unscored_counts(b_runs)
    pa = {(p.eval_id, p.run_index): p for p in to_points(a_runs)}
    pb = {(p.eval_id, p.run_index): p for p in to_points(b_runs)}
    keys = sorted(pa.keys() & pb.keys())
    unpaired_a = sorted(pa.keys() - pb.keys())
    unpaired_b = sorted(pb.keys() - pa.keys())

    diffs: dict[str, list[float]] = defaultdict(list)
    for k in keys:
        diffs[k[0]].append(pb[k].score - pa[k].score)

    per_eval: list[Delta] = []
    for e in sorted(diffs):
        ks = [k for k in keys if k[0] == e]
        d = diffs[e]
        delta = _mean(d)
        sd = _sd(d)
        per_eval.append(
            Delta(
                eval_id=e,
                pairs=len(d),
                mean_a=_mean([pa[k].score for k in ks]),
                mean_b=_mean([pb[k].score for k in ks]),
                delta=delta,
                sd=sd,
                ci=bootstrap_mean_ci(d, resamples, seed=group_seed(seed, e)) if len(d) > 1 else None,
                pass_rate_a=_mean([pa[k].passed for k in ks]),
                pass_rate_b=_mean([pb[k].passed for k in ks]),
                runs_needed=runs_needed(sd, delta) if len(d) > 1 else None,
            )
        )

    criteria: dict[str, tuple[float, float, float]] = {}
    crit_ids = sorted({c for k in keys for c in (*pa[k].criteria, *pb[k].criteria)})
    for cid in crit_ids:
        both = [k for k in keys if cid in pa[k].criteria and cid in pb[k].criteria]
        if both:
            ma = _mean([pa[k].criteria[cid] for k in both])
            mb = _mean([pb[k].criteria[cid] for k in both])
            criteria[cid] = (ma, mb, mb - ma)

    overall = None
    warning = None
    if per_eval:
        all_d = [x for d in diffs.values() for x in d]
        delta = _mean([d.delta for d in per_eval])
        # the SD of paired differences within evals (eval effects removed), pooled; the spread that run-to-run
        # noise adds to one eval's paired difference, which is what more runs per eval average away
        within = [x - _mean(diffs[e]) for e in diffs for x in diffs[e]]
        dof = len(within) - len(diffs)
        sd = math.sqrt(math.fsum(x * x for x in within) / dof) if dof > 0 else _sd(all_d)
        overall = Delta(
            eval_id="*",
            pairs=len(keys),
            mean_a=_mean([d.mean_a for d in per_eval]),
            mean_b=_mean([d.mean_b for d in per_eval]),
            delta=delta,
            sd=sd,
            ci=_paired_ci(diffs, resamples, seed),
            pass_rate_a=_mean([d.pass_rate_a for d in per_eval]),
            pass_rate_b=_mean([d.pass_rate_b for d in per_eval]),
            runs_needed=_overall_runs_needed(sd, delta, len(per_eval)),
        )
        warning = _warning(overall, len(per_eval))
    gap, eval_gaps = unscored_gaps(a_runs, b_runs)
    refusal = refusal_of(a_runs, b_runs, a_label, b_label, max_unscored_gap)
    verdict = (
        f"No verdict: {refusal.reason}."
        if refusal
        else _verdict(overall, a_label, b_label, len(unpaired_a) + len(unpaired_b))
    )
    return Comparison(
        per_eval=per_eval,
        overall=overall,
        criteria=criteria,
        unpaired_a=unpaired_a,
        unpaired_b=unpaired_b,
        warning=warning,
        verdict=verdict + _unscored_text({a_label: unscored_a, b_label: unscored_b}),
        unscored_a=unscored_a,
        unscored_b=unscored_b,
        outcomes_a=outcome_counts(a_runs),
        outcomes_b=outcome_counts(b_runs),
        unscored_gap=gap,
        eval_gaps=[g for g in eval_gaps if abs(g.gap) > max_unscored_gap + 1e-9],
        max_unscored_gap=max_unscored_gap,
        refusal=refusal,
    )


# --------------------------------------------------------------------------- refusing a verdict
@dataclass(frozen=True)
class UnscoredShare:
    """One arm's runs (of one eval, or all) and those of them left out of every figure."""

    runs: int
    unscored: Mapping[str, int]  # outcome -> runs

    @property
    def count(self) -> int:
        return sum(self.unscored.values())

    @property
    def share(self) -> float:
        return self.count / self.runs if self.runs else 0.0

    def text(self) -> str:
        """``4 of 12 runs (3 harness errors, 1 provider error)``."""
        what = ", ".join(f"{n} {label(o)}{'s' if n > 1 else ''}" for o, n in sorted(self.unscored.items()))
        return f"{self.count} of {self.runs} runs" + (f" ({what})" if what else "")

    def to_dict(self) -> dict:
        return {
            "runs": self.runs,
            "unscored": self.count,
            "share": self.share,
            "outcomes": dict(self.unscored),
        }


@dataclass(frozen=True)
class UnscoredGap:
    """Both arms' unscored shares, of one eval or all (``eval_id == "*"``); ``gap`` is B's share minus A's."""

    eval_id: str
    a: UnscoredShare
    b: UnscoredShare

    @property
    def gap(self) -> float:
        return self.b.share - self.a.share

    def to_dict(self) -> dict:
        return {"eval_id": self.eval_id, "a": self.a.to_dict(), "b": self.b.to_dict(), "gap": self.gap}


@dataclass(frozen=True)
class Refusal:
    """Why `compare` gives no verdict: the scores cannot be set side by side as they stand."""

    kind: Literal["grading_version", "unscored_gap"]
    reason: str  # one line

    def to_dict(self) -> dict:
        return {"kind": self.kind, "reason": self.reason}


def _share(runs: Sequence[ScoredRun]) -> UnscoredShare:
    """The runs left out, and the scored runs that met a gap in an emulated service where no correct
    solution needed one (``outcomes.SERVICE_GAP_FIGURE``): both count against the arm in the guard."""
    counts = unscored_counts(runs)
    flagged = sum(1 for r in runs if is_scored(r.outcome) and (r.figure(SERVICE_GAP_FIGURE) or 0) > 0)
    if flagged:
        counts[SERVICE_GAP] = flagged
    return UnscoredShare(runs=len(runs), unscored=counts)


def unscored_gaps(
    a_runs: Sequence[ScoredRun], b_runs: Sequence[ScoredRun]
) -> tuple[UnscoredGap, list[UnscoredGap]]:
    """The arms' unscored shares over all their runs, and per eval that both arms ran."""
    overall = UnscoredGap("*", _share(a_runs), _share(b_runs))
    evals = sorted({r.eval_id for r in a_runs} & {r.eval_id for r in b_runs})
    per_eval = [
        UnscoredGap(
            e, _share([r for r in a_runs if r.eval_id == e]), _share([r for r in b_runs if r.eval_id == e])
        )
        for e in evals
    ]
    return overall, per_eval


def unscored_refusal(
    gap: UnscoredGap, a_label: str, b_label: str, max_gap: float, rerun_jobs: Sequence[str] = ()
) -> Refusal | None:
    """A refusal when the arms' unscored shares differ by more than ``max_gap``: runs left out are not a
    random sample (an agent can make its failures unscored), so the arm that lost more of them would look
    better.
    ``rerun_jobs``: the jobs whose unscored runs `run --resume` runs again."""
    if abs(gap.gap) <= max_gap + 1e-9:
        return None
    more = b_label if gap.gap > 0 else a_label
    again = (
        " and ".join(f"`skillassay run --resume {j}`" for j in rerun_jobs)
        if rerun_jobs
        else "fixing the definitions first"
    )
    return Refusal(
        "unscored_gap",
        (
            f"the arms' shares of unscored runs differ by {abs(gap.gap) * 100:.0f} points, more than the "
            f"{max_gap * 100:g} allowed ({a_label}: {gap.a.text()}; {b_label}: {gap.b.text()}), and the runs "
            f"left out could be {more}'s failures: run them again ({again}) and see why they were not scored"
        ),
    )


def grading_versions(runs: Iterable[ScoredRun]) -> dict[int, int]:
    """Grading version -> scored runs graded with it (an unscored run has no score to compare)."""
    out: dict[int, int] = {}
    for r in runs:
        if is_scored(r.outcome):
            out[r.grading_version] = out.get(r.grading_version, 0) + 1
    return dict(sorted(out.items()))


def grading_refusal(
    a_runs: Sequence[ScoredRun], b_runs: Sequence[ScoredRun], a_label: str, b_label: str
) -> Refusal | None:
    """A refusal when the scored runs of both arms together were graded with more than one grading version:
    a score of one version does not mean what a score of another does. ``skillassay regrade`` brings a job's
    runs up to the current version."""
    va, vb = grading_versions(a_runs), grading_versions(b_runs)
    if len(va.keys() | vb.keys()) <= 1:
        return None
    stale = sorted(
        {
            r.job_id
            for r in (*a_runs, *b_runs)
            if is_scored(r.outcome) and r.grading_version != GRADING_VERSION
        }
    )
    hint = (
        (
            f"bring them to the current version ({GRADING_VERSION}) with "
            + " and ".join(f"`skillassay regrade {j}`" for j in stale)
        )
        if stale
        else "regrade them"
    )

    def text(v: dict[int, int]) -> str:
        runs = [f"version {k} ({n} run{'s' if n > 1 else ''})" for k, n in v.items()]
        return ", ".join(runs) or "no scored runs"

    return Refusal(
        "grading_version",
        (
            f"the runs were graded with different grading versions ({a_label}: {text(va)}; {b_label}: "
            f"{text(vb)}), and scores of different versions do not mean the same: {hint}"
        ),
    )


def refusal_of(
    a_runs: Sequence[ScoredRun],
    b_runs: Sequence[ScoredRun],
    a_label: str,
    b_label: str,
    max_unscored_gap: float = DEFAULT_MAX_UNSCORED_GAP,
) -> Refusal | None:
    """Why no verdict can be given on these runs (the grading versions first), or None."""
    rerun = sorted({r.job_id for r in (*a_runs, *b_runs) if LEGACY.get(r.outcome, r.outcome) in RERUN})
    return grading_refusal(a_runs, b_runs, a_label, b_label) or unscored_refusal(
        unscored_gaps(a_runs, b_runs)[0], a_label, b_label, max_unscored_gap, rerun
    )


def outcome_counts(runs: Iterable[ScoredRun]) -> dict[str, int]:
    """Outcome -> how many runs ended so (scored or not), in the taxonomy's order."""
    names = [LEGACY.get(r.outcome, r.outcome) for r in runs]
    return {o: names.count(o) for o in OUTCOMES if o in names}


def unscored_counts(runs: Iterable[ScoredRun]) -> dict[str, int]:
    """Outcome -> how many runs ended so and are therefore in no figure."""
    out: dict[str, int] = {}
    for r in runs:
        if not is_scored(r.outcome):
            name = LEGACY.get(r.outcome, r.outcome)
            out[name] = out.get(name, 0) + 1
    return out


def _unscored_text(by_side: Mapping[str, Mapping[str, int]]) -> str:
    parts = [
        f"{side}: " + ", ".join(f"{n} {label(o)}{'s' if n > 1 else ''}" for o, n in sorted(counts.items()))
        for side, counts in by_side.items()
        if counts
    ]
    return f" Not scored, so left out of every figure: {'; '.join(parts)}." if parts else ""


def _overall_runs_needed(sd: float, delta: float, evals: int) -> int | None:
    """Pairs per eval: the total pairs the formula asks for, shared across the evals (each eval adds one pair
    per run), rounded up; at least 2."""
    total = runs_needed(sd, delta)
    if total is None:
        return None
    return max(2, math.ceil(total / max(evals, 1)))


def _pts(x: float) -> str:
    return f"{x * 100:+.1f} points"


def _warning(d: Delta, evals: int) -> str | None:
    per_eval_runs = d.pairs / max(evals, 1)
    if d.ci is None:
        return (
            f"Only {d.pairs} paired run: no interval can be computed. Run each eval several times "
            "(--runs 5 or more) to tell a difference from noise."
        )
    if d.excludes_zero:
        return None
    if d.delta == 0:
        return (
            f"No difference observed over {d.pairs} paired runs; a small difference could still be hidden "
            "in the "
            f"noise (the interval spans {_pts(d.ci[0])} to {_pts(d.ci[1])})."
        )
    need = d.runs_needed
    msg = (
        f"Too few runs to tell the observed difference ({_pts(d.delta)}) from noise: the 95% interval "
        f"({_pts(d.ci[0])} to {_pts(d.ci[1])}) includes zero."
    )
    if need is not None and need > per_eval_runs:
        msg += (
            f" To detect a difference this size reliably (80% power, 5% two-sided), about {need} paired "
            "runs per "
            f"eval would be needed (now {per_eval_runs:g}); estimated as n = ((1.96 + 0.84) x SD / "
            "delta)^2 from "
            f"the observed SD of paired differences ({d.sd * 100:.1f} points), shared across {evals} evals."
        )
    return msg


def _verdict(d: Delta | None, a: str, b: str, unpaired: int) -> str:
    if d is None:
        return f"Nothing to compare: {a} and {b} have no runs of the same eval and run number."
    text = (
        f"{b} scores {abs(d.delta) * 100:.1f} points {'higher' if d.delta > 0 else 'lower'} than {a} "
        f"on average ({d.mean_b * 100:.1f}% vs {d.mean_a * 100:.1f}%, {d.pairs} paired runs)"
        if d.delta != 0
        else f"{b} and {a} score the same on average ({d.mean_a * 100:.1f}%, {d.pairs} paired runs)"
    )
    if d.ci is None:
        text += "; with a single pair there is no interval, so this says nothing yet."
    elif d.delta == 0 and d.ci == (0.0, 0.0):
        text += ": every paired run scored exactly the same in both."
    elif d.excludes_zero:
        text += (
            f". The 95% interval of the difference ({_pts(d.ci[0])} to {_pts(d.ci[1])}) excludes zero: "
            f"{b} is {'better' if d.delta > 0 else 'worse'}."
        )
    else:
        text += (
            f". The 95% interval ({_pts(d.ci[0])} to {_pts(d.ci[1])}) includes zero: "
            "the difference cannot be told from noise."
        )
    if unpaired:
        text += f" {unpaired} run(s) had no partner and were left out."
    return text[:1].upper() + text[1:]
