"""Was the skill used? How often the runs given a skill used it, and the pass rate when they did and when
they did not, whatever their kind (a trigger suite's own metrics: ``kinds.trigger.scoring``). Intervals
are ``scoring.stats``'s seeded bootstraps, clustered by eval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skillassay.outcomes import is_scored
from skillassay.scoring.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, clustered_bootstrap_ci, group_seed


@dataclass
class Estimate:
    value: float | None
    ci: tuple[float, float] | None = None  # bootstrap 95% interval, clustered (by prompt, by eval)

    def to_dict(self) -> dict:
        return {"value": self.value, "ci95": list(self.ci) if self.ci else None}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.1f}%"


@dataclass(frozen=True)
class UsePoint:
    eval_id: str
    run_index: int
    passed: bool
    used: bool | None  # None: the transcript cannot show it (an agent without tool calls)
    listed: bool | None = None  # the CLI listed the skill to the model (None: unknown)


def use_points(runs: Iterable) -> list[UsePoint]:
    """Points of the runs given the skill (variant "skill", a skill path), the harness's failures left out."""
    out = []
    for r in runs:
        if r.variant != "skill" or not r.skill_path or not is_scored(r.outcome):
            continue
        use = getattr(r, "skill_use", None)
        if use is not None:
            used, listed = use.used, use.listed
        else:  # a record from before skill_use: what the CLI's own list said
            used, listed = (r.transcript.skill_invoked if r.agent in ("claude-code", "codex") else None), None
        out.append(UsePoint(r.eval_id, r.run_index, bool(r.verdict and r.verdict.passed), used, listed))
    return out


@dataclass
class SkillUseSplit:
    """How often the skill was used, and the pass rate when it was and when it was not. A skill that helps
    when it is used is a different finding from a skill that is used: both are needed to read a result."""

    runs: int  # runs whose transcript shows whether the skill was used
    unmeasured: int  # runs given the skill whose transcript cannot show it
    listed: int | None  # runs in which the CLI listed the skill (None: no CLI said)
    used: int
    used_share: Estimate  # share of runs that used it; interval clustered by eval
    passed_used: int
    passed_unused: int
    evals_with_both: int  # evals with runs that used it and runs that did not (the fairest comparison)

    @property
    def unused(self) -> int:
        return self.runs - self.used

    @property
    def pass_rate_used(self) -> float | None:
        return self.passed_used / self.used if self.used else None

    @property
    def pass_rate_unused(self) -> float | None:
        return self.passed_unused / self.unused if self.unused else None

    def to_dict(self) -> dict:
        return {
            "runs": self.runs,
            "unmeasured": self.unmeasured,
            "listed": self.listed,
            "used": self.used,
            "used_share": self.used_share.to_dict(),
            "passed_used": self.passed_used,
            "passed_unused": self.passed_unused,
            "pass_rate_used": self.pass_rate_used,
            "pass_rate_unused": self.pass_rate_unused,
            "evals_with_both": self.evals_with_both,
        }

    def sentence(self, label: str = "") -> str:
        who = f"{label}: " if label else ""
        if not self.runs:
            return (
                f"{who}no run shows whether the skill was used ({self.unmeasured} run(s) of agents whose "
                "transcript has no tool calls)."
            )
        text = f"{who}the skill was used in {self.used} of {self.runs} run(s) ({_pct(self.used_share.value)}"
        if self.used_share.ci:
            text += f", 95% interval {_pct(self.used_share.ci[0])} to {_pct(self.used_share.ci[1])}"
        text += ")"
        if self.listed is not None:
            text += f", listed to the model in {self.listed}"
        text += (
            f". Pass rate when used: {_pct(self.pass_rate_used)} ({self.passed_used}/{self.used}); when not "
            f"used: {_pct(self.pass_rate_unused)} ({self.passed_unused}/{self.unused})."
        )
        if self.used and self.unused and not self.evals_with_both:
            text += " No eval has both kinds of run, so the two rates compare different evals."
        return text


def skill_use_split(
    points: Sequence[UsePoint], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> SkillUseSplit:
    measured = [p for p in points if p.used is not None]
    groups: dict[str, list[float]] = defaultdict(list)
    for p in measured:
        groups[p.eval_id].append(float(bool(p.used)))
    used = [p for p in measured if p.used]
    share = Estimate(len(used) / len(measured) if measured else None)
    if len(measured) > 1:
        share.ci = clustered_bootstrap_ci(groups, resamples, seed=group_seed(seed, "skill-use"))
    listed_known = [p for p in measured if p.listed is not None]
    return SkillUseSplit(
        runs=len(measured),
        unmeasured=len(points) - len(measured),
        listed=sum(bool(p.listed) for p in listed_known) if listed_known else None,
        used=len(used),
        used_share=share,
        passed_used=sum(p.passed for p in used),
        passed_unused=sum(p.passed for p in measured if not p.used),
        evals_with_both=sum(1 for v in groups.values() if 0 < sum(v) < len(v)),
    )


def skill_use_of(runs: Iterable) -> SkillUseSplit | None:
    """How often the skill was used in a job's skill runs (None when no run was given a skill)."""
    pts = use_points(runs)
    return skill_use_split(pts) if pts else None
