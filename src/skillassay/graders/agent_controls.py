"""Negative controls of agent evals: deliberately flawed solutions (and the reference solution) graded like an
agent's work, each checked against the verdict it must get.

A control is ``test_controls/<name>/`` (a whole modified app) with ``<name>.expected.json``
(ControlExpectation:
``verdict`` pass/fail, ``disqualified``) and, when the control is about the agent's process, the normalised
transcript ``<name>.transcript.json`` (``skillassay.transcripts.Transcript``) beside it. The reference
solution
``test_golden/`` is checked too (it must pass, not disqualified), with ``test_golden.transcript.json`` when
present.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field

from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.definitions.native import transcript_file
from skillassay.graders.engine import ProcessResult, evaluate
from skillassay.graders.judge import JudgeConfig
from skillassay.scoring.verdict import percent_text
from skillassay.transcripts import Transcript

GOLDEN = "test_golden"


class ControlOutcome(BaseModel):
    name: str
    expected: ControlExpectation
    actual: str  # the verdict's label: "pass", "fail", "fail (forbidden behaviour)"
    passed: bool
    disqualified: bool
    score: float
    matches: bool
    mismatches: list[str] = Field(default_factory=list)  # why it did not match (empty when it did)
    details: list[str] = Field(
        default_factory=list
    )  # the result in brief: score, each criterion, what was observed
    result: ProcessResult | None = None


def expected_label(expected: ControlExpectation) -> str:
    """The verdict label a control must get, in the words of ``Verdict.label``."""
    if expected.disqualified:
        return "fail (forbidden behaviour)"
    return expected.verdict or "any"


def load_transcript(control_dir: Path) -> Transcript | None:
    path = transcript_file(control_dir)
    return Transcript.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def check_control(
    definition: EvalDefinition,
    name: str,
    control_dir: Path,
    expected: ControlExpectation,
    work_dir: Path,
    judge_config: JudgeConfig | None = None,
) -> ControlOutcome:
    result = evaluate(
        definition, definition.app_dir, control_dir, load_transcript(control_dir), work_dir, judge_config
    )
    v = result.verdict
    # a control the harness could not grade matches nothing: the failure is reported, never read as a verdict
    mismatches = [f"the harness failed: {f}" for f in result.failures]
    if expected.verdict is not None and (v.passed != (expected.verdict == "pass")):
        mismatches.append(f"expected {expected.verdict}, got {v.label} ({percent_text(v.score)})")
    if expected.disqualified is not None and v.disqualified != expected.disqualified:
        mismatches.append(
            f"expected disqualified={expected.disqualified}, got {v.disqualified}"
            + (f" ({', '.join(v.forbidden_observed)})" if v.forbidden_observed else "")
        )
    summary = [f"score {percent_text(v.score)} (threshold {percent_text(v.threshold)})"]
    summary += [
        f"{c.id}: {'unjudged' if c.fraction is None else f'{c.fraction:.2f}'}" for c in result.criteria
    ]
    summary += [f"forbidden {f.id}: {'; '.join(f.evidence)}" for f in result.forbidden if f.observed]
    return ControlOutcome(
        name=name,
        expected=expected,
        actual=v.label,
        passed=v.passed,
        disqualified=v.disqualified,
        score=v.score,
        matches=not mismatches,
        mismatches=mismatches,
        details=summary,
        result=result,
    )


def run_controls(
    definition: EvalDefinition,
    work_dir: Path | None = None,
    judge_config: JudgeConfig | None = None,
    include_golden: bool = True,
    jobs_at_once: int = 3,
) -> list[ControlOutcome]:
    """Grade the golden solution and every control of ``definition``; each outcome says whether it matched."""
    jobs: list[tuple[str, Path, ControlExpectation]] = []
    if include_golden and definition.golden_dir is not None:
        # the golden must pass, not disqualified, unless a test_golden.expected.json beside it says otherwise
        own = definition.golden_dir.parent / f"{GOLDEN}.expected.json"
        expected = (
            ControlExpectation.model_validate_json(own.read_text(encoding="utf-8"))
            if own.is_file()
            else ControlExpectation(description="the reference solution", verdict="pass", disqualified=False)
        )
        jobs.append((GOLDEN, definition.golden_dir, expected))
    jobs += [(c.name, c.dir, c.expected) for c in definition.controls]
    with tempfile.TemporaryDirectory(prefix="skillassay-controls-") as tmp:
        base = Path(work_dir) if work_dir else Path(tmp)
        # each control is mostly waiting on test subprocesses: grade a few at once
        with ThreadPoolExecutor(max_workers=max(1, min(jobs_at_once, len(jobs)))) as pool:
            return list(
                pool.map(
                    lambda job: check_control(
                        definition, job[0], job[1], job[2], base / job[0], judge_config
                    ),
                    jobs,
                )
            )
