"""Machine-readable results for CI: JUnit XML (one testcase per eval x run) and a JSON summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from skillassay.kinds.base import figure_columns, job_summary_of
from skillassay.report.runs import failure_reason, is_graded
from skillassay.scoring.skill_use import skill_use_of
from skillassay.scoring.stats import compare, summarize
from skillassay.store.files import write_json_atomic
from skillassay.store.records import JobRecord, RunRecord


def _case_name(run: RunRecord) -> str:
    return f"{'baseline ' if run.variant == 'baseline' else ''}run_{run.run_index}"


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters; logs and errors may contain them."""
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)


def junit_xml(job: JobRecord, runs: list[RunRecord]) -> str:
    """One ``testcase`` per run (classname = eval id, name = run_<n>); a failed verdict is a ``failure`` with
    the reason; an unscored run (provider, harness or definition error) is an ``error``: not the agent's
    doing."""
    suites = ET.Element("testsuites", name=f"skillassay {job.job_id}")
    by_eval: dict[str, list[RunRecord]] = {}
    for r in runs:
        by_eval.setdefault(r.eval_id, []).append(r)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for eval_id, eruns in sorted(by_eval.items()):
        suite = ET.SubElement(suites, "testsuite", name=eval_id)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        for r in eruns:
            seconds = max(0.0, (r.finished_at - r.started_at).total_seconds())
            case = ET.SubElement(
                suite, "testcase", classname=eval_id, name=_case_name(r), time=f"{seconds:.3f}"
            )
            counts["tests"] += 1
            if not r.scored:
                counts["errors"] += 1
                el = ET.SubElement(
                    case, "error", type=r.outcome, message=_clean((failure_reason(r) or r.outcome)[:500])
                )
                el.text = _clean(r.error or "")
                continue
            props = ET.SubElement(case, "properties")
            if r.verdict is not None:
                ET.SubElement(props, "property", name="score", value=f"{r.verdict.score:.4f}")
            ET.SubElement(props, "property", name="outcome", value=r.outcome)
            ET.SubElement(props, "property", name="run_dir", value=r.run_dir)
            reason = failure_reason(r)
            if reason is not None:
                counts["failures"] += 1
                el = ET.SubElement(case, "failure", message=_clean(reason[:500]), type="verdict")
                el.text = _clean(reason)
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
    for k, v in totals.items():
        suites.set(k, str(v))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def job_json(job: JobRecord, runs: list[RunRecord]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "job": json.loads(job.model_dump_json()),
        "summary": {},
        "comparison": None,
        "runs": [],
    }
    for variant in ("skill", "baseline"):
        vr = [r for r in runs if r.variant == variant]
        if vr:
            out["summary"][variant] = summarize(vr).to_dict()
    base = [r for r in runs if r.variant == "baseline"]
    if base:
        out["comparison"] = compare(
            base, [r for r in runs if r.variant == "skill"], a_label="baseline", b_label="skill"
        ).to_dict()
    own = job_summary_of(runs)
    if own is not None:
        out[own.key] = own.to_dict()
    else:
        use = skill_use_of(runs)
        out["skill_use"] = use.to_dict() if use else None
    for r in runs:
        # an unscored run (provider, harness or definition error): no scores, and not counted in the summary
        v = r.verdict if is_graded(r) else None
        out["runs"].append(
            {
                "eval_id": r.eval_id,
                "variant": r.variant,
                "run_index": r.run_index,
                "outcome": r.outcome,
                "graded": is_graded(r),
                "scored": is_graded(r),
                "agent_exit": json.loads(r.agent_exit.model_dump_json()) if r.agent_exit else None,
                "harness_failures": [f.model_dump() for f in r.harness_failures],
                "score": v.score if v else None,
                "passed": v.passed if v else False,
                "verdict": v.label if v else None,
                "reason": failure_reason(r),
                "error": r.error,
                # the kinds' own figures (the Seam kind's rubric_total, sandbox_total, combined)
                **{c.grade: r.figure(c.grade) if is_graded(r) else None for c in figure_columns()},
                "run_dir": r.run_dir,
            }
        )
    return out


def write_junit(path: Path, job: JobRecord, runs: list[RunRecord]) -> None:
    write_json_atomic(Path(path), junit_xml(job, runs).rstrip("\n"))


def write_json(path: Path, job: JobRecord, runs: list[RunRecord]) -> None:
    write_json_atomic(Path(path), job_json(job, runs))
