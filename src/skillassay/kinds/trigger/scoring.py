"""Statistics of trigger suites: recall, precision, F1 per category, with intervals; two versions of a skill
compared prompt by prompt (how often ordinary runs used the skill: ``scoring.skill_use``).

Pure functions over plain points. Intervals are percentile bootstraps clustered by prompt: resample the
prompts with replacement, then the runs within each drawn prompt, and compute the metric from the pooled
counts of the resample (runs of one prompt are not independent of each other, so resampling runs alone would
give too narrow an interval). They reuse ``scoring.stats``'s seeded machinery, so the same runs always give
the same interval.

Definitions, with TP a run of a should-trigger prompt that triggered, FN one that did not, FP a run of a
should-not-trigger prompt that triggered, TN one that did not: recall = TP / (TP + FN); precision = TP / (TP +
FP); F1 = 2 TP / (2 TP + FP + FN); false-trigger rate = FP / (FP + TN); accuracy = (TP + TN) / runs. A metric
whose denominator is zero is undefined (None): recall of the negative category, precision when nothing
triggered.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skillassay.outcomes import is_scored
from skillassay.scoring.skill_use import Estimate
from skillassay.scoring.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    _indices,
    _interval,
    _resample_means,
    group_seed,
)

CATEGORIES = ("explicit", "implicit", "contextual", "negative")
METRICS = ("recall", "precision", "f1", "false_trigger_rate", "accuracy")
LEVEL = 0.95


# --------------------------------------------------------------------------- points
@dataclass(frozen=True)
class TriggerPoint:
    """One trigger run."""

    prompt: str  # the prompt's eval id
    category: str
    should_trigger: bool
    run_index: int
    triggered: bool
    turn: int | None = None  # time to trigger, when it triggered
    seconds: float | None = None
    tokens: int | None = None


def trigger_points(runs: Iterable) -> list[TriggerPoint]:
    """Points from run records (anything with ``trigger``, ``skill_use``, ``outcome``): runs the harness
    failed to carry out are left out, like everywhere else."""
    out = []
    for r in runs:
        t = getattr(r, "trigger", None)
        if t is None or not is_scored(r.outcome):
            continue
        first = r.skill_use.first if getattr(r, "skill_use", None) is not None and t.triggered else None
        out.append(
            TriggerPoint(
                prompt=r.eval_id,
                category=t.category,
                should_trigger=t.should_trigger,
                run_index=r.run_index,
                triggered=t.triggered,
                turn=first.turn if first else None,
                seconds=first.seconds if first else None,
                tokens=first.tokens if first else None,
            )
        )
    return out


# --------------------------------------------------------------------------- counts and metrics
@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def runs(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def metric(self, name: str) -> float | None:
        ratios = {
            "recall": (self.tp, self.tp + self.fn),
            "precision": (self.tp, self.tp + self.fp),
            "f1": (2 * self.tp, 2 * self.tp + self.fp + self.fn),
            "false_trigger_rate": (self.fp, self.fp + self.tn),
            "accuracy": (self.tp + self.tn, self.runs),
        }
        num, den = ratios[name]
        return num / den if den else None

    def add(self, should: bool, triggered: int, runs: int) -> None:
        if should:
            self.tp += triggered
            self.fn += runs - triggered
        else:
            self.fp += triggered
            self.tn += runs - triggered


def confusion(points: Iterable[TriggerPoint]) -> Confusion:
    c = Confusion()
    for p in points:
        c.add(p.should_trigger, int(p.triggered), 1)
    return c


@dataclass
class _Prompt:
    key: str
    should: bool
    flags: tuple[float, ...]  # 1.0 per run that triggered


def _prompts(points: Iterable[TriggerPoint]) -> list[_Prompt]:
    groups: dict[str, list[TriggerPoint]] = defaultdict(list)
    for p in points:
        groups[p.prompt].append(p)
    return [
        _Prompt(
            k, v[0].should_trigger, tuple(float(p.triggered) for p in sorted(v, key=lambda p: p.run_index))
        )
        for k, v in sorted(groups.items())
    ]


def _resampled(
    prompts: Sequence[_Prompt], resamples: int, seed: int, rng: random.Random
) -> tuple[list[int], list[int], list[list[int]]]:
    """One two-stage resample set: for each resample, the drawn prompts and, for each, how many of its runs
    triggered in its own inner resample. Returns (drawn, picks, counts per prompt per pool entry)."""
    n = len(prompts)
    pools = [
        [round(m * len(p.flags)) for m in _resample_means(p.flags, resamples, group_seed(seed, p.key))]
        for p in prompts
    ]
    drawn = list(_indices(rng, n, n * resamples))
    picks = list(_indices(rng, resamples, n * resamples))
    return drawn, picks, pools


def _bootstrap(prompts: Sequence[_Prompt], resamples: int, seed: int) -> list[Confusion]:
    """The confusion counts of each two-stage resample (prompts, then runs within each drawn prompt)."""
    if not prompts:
        return []
    drawn, picks, pools = _resampled(prompts, resamples, seed, random.Random(seed))
    n = len(prompts)
    out = []
    for i in range(resamples):
        c = Confusion()
        for g, pick in zip(drawn[i * n : (i + 1) * n], picks[i * n : (i + 1) * n], strict=False):
            c.add(prompts[g].should, pools[g][pick], len(prompts[g].flags))
        out.append(c)
    return out


def _enough(metric: str, prompts: Sequence[_Prompt]) -> bool:
    """An interval clustered by prompt needs at least two prompts behind the metric (two should-trigger
    prompts for recall, two should-not for the false-trigger rate): with one, every resample draws the same
    prompt and the interval would look certain when it says nothing."""
    positives = sum(p.should for p in prompts)
    support = {"recall": positives, "false_trigger_rate": len(prompts) - positives}.get(metric, len(prompts))
    return support >= 2


def _ci(values: Iterable[float | None]) -> tuple[float, float] | None:
    """The percentile interval over the resamples that define the metric (a resample that drew no
    should-trigger prompt has no recall); None when fewer than half do, since it would then describe other
    prompts than these."""
    values = list(values)
    defined = [v for v in values if v is not None]
    if len(defined) < max(2, len(values) / 2):
        return None
    return _interval(defined, LEVEL)


@dataclass
class TriggerStats:
    """Recall, precision, F1 ... of one group of prompts (``group``: a category, or ``*`` for all)."""

    group: str
    prompts: int
    runs: int
    confusion: Confusion
    metrics: dict[str, Estimate]

    def to_dict(self) -> dict:
        c = self.confusion
        return {
            "group": self.group,
            "prompts": self.prompts,
            "runs": self.runs,
            "confusion": {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn},
            **{m: e.to_dict() for m, e in self.metrics.items()},
        }


def trigger_stats(
    points: Sequence[TriggerPoint],
    group: str = "*",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> TriggerStats:
    prompts = _prompts(points)
    c = confusion(points)
    boot = _bootstrap(prompts, resamples, group_seed(seed, f"trigger:{group}"))
    metrics = {
        m: Estimate(
            c.metric(m),
            _ci(b.metric(m) for b in boot) if c.metric(m) is not None and _enough(m, prompts) else None,
        )
        for m in METRICS
    }
    return TriggerStats(group=group, prompts=len(prompts), runs=c.runs, confusion=c, metrics=metrics)


def _median(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


@dataclass
class PromptStats:
    prompt: str
    category: str
    should_trigger: bool
    runs: int
    triggered: int
    # time to trigger over the runs that triggered: medians
    turn: float | None = None
    seconds: float | None = None
    tokens: float | None = None

    @property
    def rate(self) -> float:
        return self.triggered / self.runs if self.runs else 0.0

    @property
    def correct(self) -> int:
        return self.triggered if self.should_trigger else self.runs - self.triggered

    @property
    def unstable(self) -> bool:
        """Triggered in some runs and not in others."""
        return 0 < self.triggered < self.runs

    def to_dict(self) -> dict:
        return {
            "prompt": self.prompt,
            "category": self.category,
            "should_trigger": self.should_trigger,
            "runs": self.runs,
            "triggered": self.triggered,
            "rate": self.rate,
            "correct": self.correct,
            "unstable": self.unstable,
            "median_turn": self.turn,
            "median_seconds": self.seconds,
            "median_tokens": self.tokens,
        }


def prompt_stats(points: Iterable[TriggerPoint]) -> list[PromptStats]:
    groups: dict[str, list[TriggerPoint]] = defaultdict(list)
    for p in points:
        groups[p.prompt].append(p)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    out = []
    for key, pts in groups.items():
        hits = [p for p in pts if p.triggered]
        out.append(
            PromptStats(
                prompt=key,
                category=pts[0].category,
                should_trigger=pts[0].should_trigger,
                runs=len(pts),
                triggered=len(hits),
                turn=_median(p.turn for p in hits),
                seconds=_median(p.seconds for p in hits),
                tokens=_median(p.tokens for p in hits),
            )
        )
    return sorted(out, key=lambda s: (order.get(s.category, 99), s.prompt))


@dataclass
class TriggerSummary:
    overall: TriggerStats
    per_category: list[TriggerStats]  # in CATEGORIES order, the categories present
    prompts: list[PromptStats]
    # time to trigger over every run that triggered: medians
    median_turn: float | None = None
    median_seconds: float | None = None
    median_tokens: float | None = None

    @property
    def missed(self) -> list[PromptStats]:
        return [p for p in self.prompts if p.should_trigger and p.triggered < p.runs]

    @property
    def false_triggers(self) -> list[PromptStats]:
        return [p for p in self.prompts if not p.should_trigger and p.triggered]

    def to_dict(self) -> dict:
        return {
            "overall": self.overall.to_dict(),
            "per_category": [s.to_dict() for s in self.per_category],
            "prompts": [p.to_dict() for p in self.prompts],
            "median_turn": self.median_turn,
            "median_seconds": self.median_seconds,
            "median_tokens": self.median_tokens,
        }


def summarize_triggers(
    points: Sequence[TriggerPoint], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> TriggerSummary:
    cats = [c for c in CATEGORIES if any(p.category == c for p in points)]
    cats += sorted({p.category for p in points} - set(cats))
    hits = [p for p in points if p.triggered]
    return TriggerSummary(
        overall=trigger_stats(points, "*", resamples, seed),
        per_category=[
            trigger_stats([p for p in points if p.category == c], c, resamples, seed) for c in cats
        ],
        prompts=prompt_stats(points),
        median_turn=_median(p.turn for p in hits),
        median_seconds=_median(p.seconds for p in hits),
        median_tokens=_median(p.tokens for p in hits),
    )


# --------------------------------------------------------------------------- two versions of a skill
@dataclass
class MetricDelta:
    metric: str
    a: float | None
    b: float | None
    ci: tuple[float, float] | None  # paired bootstrap 95% interval of b - a, clustered by prompt

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def excludes_zero(self) -> bool:
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)

    def to_dict(self) -> dict:
        return {
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci95": list(self.ci) if self.ci else None,
            "excludes_zero": self.excludes_zero,
        }


@dataclass
class Flip:
    prompt: str
    category: str
    should_trigger: bool
    rate_a: float
    rate_b: float

    @property
    def better(self) -> bool:
        """B's majority decision is the expected one."""
        return (self.rate_b > 0.5) == self.should_trigger

    def to_dict(self) -> dict:
        return {
            "prompt": self.prompt,
            "category": self.category,
            "should_trigger": self.should_trigger,
            "rate_a": self.rate_a,
            "rate_b": self.rate_b,
            "better": self.better,
        }


@dataclass
class TriggerComparison:
    overall: list[MetricDelta]
    per_category: dict[str, list[MetricDelta]]
    flips: list[Flip]  # prompts whose majority decision differs between A and B
    changed: list[Flip]  # prompts whose trigger rate differs at all (flips included)
    pairs: int  # prompts in both
    unpaired_a: list[str]
    unpaired_b: list[str]
    verdict: str

    def to_dict(self) -> dict:
        return {
            "overall": [d.to_dict() for d in self.overall],
            "per_category": {k: [d.to_dict() for d in v] for k, v in self.per_category.items()},
            "flips": [f.to_dict() for f in self.flips],
            "changed": [f.to_dict() for f in self.changed],
            "pairs": self.pairs,
            "unpaired_a": self.unpaired_a,
            "unpaired_b": self.unpaired_b,
            "verdict": self.verdict,
        }


def _paired_deltas(
    a: Sequence[_Prompt], b: Sequence[_Prompt], resamples: int, seed: int
) -> dict[str, MetricDelta]:
    """Metrics of A and B on the same prompts, and the paired bootstrap interval of each difference: the same
    prompts are drawn for both (paired), the runs of each within its own version."""
    ca, cb = Confusion(), Confusion()
    for p in a:
        ca.add(p.should, int(sum(p.flags)), len(p.flags))
    for p in b:
        cb.add(p.should, int(sum(p.flags)), len(p.flags))
    deltas: dict[str, list[float | None]] = {m: [] for m in METRICS}
    if a:
        rng = random.Random(seed)
        n = len(a)
        pools_a = [
            [
                round(m * len(p.flags))
                for m in _resample_means(p.flags, resamples, group_seed(seed, "a" + p.key))
            ]
            for p in a
        ]
        pools_b = [
            [
                round(m * len(p.flags))
                for m in _resample_means(p.flags, resamples, group_seed(seed, "b" + p.key))
            ]
            for p in b
        ]
        drawn = _indices(rng, n, n * resamples)
        picks_a = _indices(rng, resamples, n * resamples)
        picks_b = _indices(rng, resamples, n * resamples)
        for i in range(resamples):
            ra, rb = Confusion(), Confusion()
            for j in range(i * n, (i + 1) * n):
                g = drawn[j]
                ra.add(a[g].should, pools_a[g][picks_a[j]], len(a[g].flags))
                rb.add(b[g].should, pools_b[g][picks_b[j]], len(b[g].flags))
            for m in METRICS:
                va, vb = ra.metric(m), rb.metric(m)
                deltas[m].append(None if va is None or vb is None else vb - va)
    out = {}
    for m in METRICS:
        va, vb = ca.metric(m), cb.metric(m)
        ok = va is not None and vb is not None and _enough(m, a)
        out[m] = MetricDelta(m, va, vb, _ci(deltas[m]) if ok else None)
    return out


def compare_triggers(
    a_points: Sequence[TriggerPoint],
    b_points: Sequence[TriggerPoint],
    a_label: str = "A",
    b_label: str = "B",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> TriggerComparison:
    """B against A (e.g. two descriptions of a skill), paired by prompt: a prompt counts only when both ran
    it. Deltas are B minus A."""
    pa = {p.key: p for p in _prompts(a_points)}
    pb = {p.key: p for p in _prompts(b_points)}
    keys = sorted(pa.keys() & pb.keys())
    cats = {p.prompt: p.category for p in [*a_points, *b_points]}
    a, b = [pa[k] for k in keys], [pb[k] for k in keys]
    overall = _paired_deltas(a, b, resamples, group_seed(seed, "trigger-compare:*"))
    per_category = {}
    for c in [c for c in CATEGORIES if any(cats[k] == c for k in keys)]:
        idx = [i for i, k in enumerate(keys) if cats[k] == c]
        per_category[c] = list(
            _paired_deltas(
                [a[i] for i in idx], [b[i] for i in idx], resamples, group_seed(seed, f"trigger-compare:{c}")
            ).values()
        )
    changed = []
    for k in keys:
        ra, rb = sum(pa[k].flags) / len(pa[k].flags), sum(pb[k].flags) / len(pb[k].flags)
        if ra != rb:
            changed.append(Flip(k, cats[k], pa[k].should, ra, rb))
    flips = [f for f in changed if (f.rate_a > 0.5) != (f.rate_b > 0.5)]
    return TriggerComparison(
        overall=list(overall.values()),
        per_category=per_category,
        flips=flips,
        changed=changed,
        pairs=len(keys),
        unpaired_a=sorted(pa.keys() - pb.keys()),
        unpaired_b=sorted(pb.keys() - pa.keys()),
        verdict=_trigger_verdict(overall, flips, len(keys), a_label, b_label),
    )


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.1f}%"


def _trigger_verdict(d: dict[str, MetricDelta], flips: list[Flip], pairs: int, a: str, b: str) -> str:
    if not pairs:
        return f"Nothing to compare: {a} and {b} have no prompt in common."
    f1 = d["f1"]
    parts = [f"Over {pairs} prompt(s) run by both, F1 is {_pct(f1.b)} for {b} against {_pct(f1.a)} for {a}"]
    for m in ("recall", "precision"):
        parts.append(f"{m} {_pct(d[m].b)} against {_pct(d[m].a)}")
    text = "; ".join(parts) + "."
    if f1.ci is None:
        text += " No interval could be computed for the F1 difference (too few runs, or a metric undefined)."
    elif f1.excludes_zero:
        text += (
            f" The 95% interval of the F1 difference ({f1.ci[0] * 100:+.1f} to {f1.ci[1] * 100:+.1f} points) "
            f"excludes zero: {b} triggers {'better' if (f1.delta or 0) > 0 else 'worse'}."
        )
    else:
        text += (
            f" The 95% interval of the F1 difference ({f1.ci[0] * 100:+.1f} to {f1.ci[1] * 100:+.1f} points) "
            "includes zero: the difference cannot be told from noise."
        )
    if flips:
        better = sum(f.better for f in flips)
        text += (
            f" {len(flips)} prompt(s) flipped: {better} to the expected decision, "
            f"{len(flips) - better} away from it."
        )
    return text


__all__ = [
    "CATEGORIES",
    "METRICS",
    "Confusion",
    "Estimate",
    "Flip",
    "MetricDelta",
    "PromptStats",
    "TriggerComparison",
    "TriggerPoint",
    "TriggerStats",
    "TriggerSummary",
    "compare_triggers",
    "confusion",
    "prompt_stats",
    "summarize_triggers",
    "trigger_points",
    "trigger_stats",
]
