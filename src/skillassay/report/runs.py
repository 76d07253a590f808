"""Reading what one run left on disk, for the report: capped and decoded leniently (the files are untrusted
and may be huge or half-written). Nothing here escapes; the templates do (autoescape), and pygments does
for diffs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillassay.kinds.base import failed_criterion
from skillassay.scoring.reasons import short_reason
from skillassay.scoring.verdict import percent_text
from skillassay.store.records import RunRecord
from skillassay.transcripts import Transcript

MAX_DIFF_BYTES = 300_000
MAX_JSON_BYTES = 60_000
MAX_LOG_BYTES = 16_000
MAX_LOG_LINES = 200
MAX_TOOL_CALLS = 400
MAX_FIELD = 2_000


def read_capped(path: Path, limit: int) -> tuple[str | None, bool]:
    """(text, truncated) from the start of the file; (None, False) when it does not exist."""
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None, False
    return data[:limit].decode("utf-8", errors="replace"), len(data) > limit


def read_tail(path: Path, limit: int = MAX_LOG_BYTES, lines: int = MAX_LOG_LINES) -> tuple[str | None, bool]:
    """(last lines, truncated)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            fh.seek(max(0, size - limit))
            data = fh.read()
    except OSError:
        return None, False
    text = data.decode("utf-8", errors="replace")
    all_lines = text.splitlines()
    truncated = size > limit or len(all_lines) > lines
    return "\n".join(all_lines[-lines:]), truncated


def clip(text: str | None, limit: int = MAX_FIELD) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


@dataclass
class Evidence:
    name: str
    text: str | None
    truncated: bool = False


@dataclass
class Log:
    name: str
    text: str
    truncated: bool


@dataclass
class TimelineEntry:
    index: int
    name: str
    kind: str
    summary: str  # the command, the paths, or the input in short
    input: str
    result: str | None
    is_error: bool
    denied: bool
    exit_code: int | None


@dataclass
class RunFiles:
    diff: str | None = None
    diff_truncated: bool = False
    diff_files: list[str] = field(default_factory=list)
    transcript: Transcript | None = None
    transcript_error: str | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)
    timeline_hidden: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    logs: list[Log] = field(default_factory=list)
    # process.json's "sealing": what reached out of bounds, what was refused
    sealing: dict[str, Any] | None = None
    # kind name -> what that kind shows on the run's page (``EvalKind.run_page_data``: the Seam trace)
    kind_data: dict[str, Any] = field(default_factory=dict)


MAX_SEALING_BYTES = 5_000_000
MAX_SHOWN_PATHS = 100


def load_sealing(path: Path) -> dict[str, Any] | None:
    """process.json's ``sealing`` section, its lists capped for a page (None when absent or unreadable)."""
    text, truncated = read_capped(path, MAX_SEALING_BYTES)
    if text is None or truncated:
        return None
    try:
        data = json.loads(text).get("sealing")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, dict):
        return None
    touched = [t for t in data.get("out_of_bounds") or [] if isinstance(t, dict)]
    refused, connects = [], []
    for phase, report in (data.get("phases") or {}).items():
        if not isinstance(report, dict):
            continue
        refused += [{"phase": phase, **r} for r in report.get("refused") or [] if isinstance(r, dict)]
        audit = found if isinstance(found := report.get("audit"), dict) else {}
        connects += [{"phase": phase, **c} for c in audit.get("connects") or [] if isinstance(c, dict)]
    return {
        "out_of_bounds": touched[:MAX_SHOWN_PATHS],
        "hidden": max(0, len(touched) - MAX_SHOWN_PATHS),
        "reached_for_suite": [str(p) for p in data.get("reached_for_suite") or []],
        "refused": refused[:MAX_SHOWN_PATHS],
        "connects": connects[:MAX_SHOWN_PATHS],
    }


def _json_text(path: Path) -> tuple[str | None, bool]:
    text, truncated = read_capped(path, MAX_JSON_BYTES)
    if text is None or truncated or "\n  " in text[:200]:
        return text, truncated  # missing, cut short, or already indented: shown as written
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False), False
    except ValueError:
        return text, False


def _summary(call: Any) -> str:
    if call.command:
        return call.command
    if call.paths:
        return ", ".join(call.paths)
    for key in ("file_path", "path", "pattern", "skill", "url", "query"):
        if isinstance(call.input.get(key), str):
            return call.input[key]
    return ""


def diff_files(diff: str) -> list[str]:
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++ ", "--- ")):
            name = line[4:].strip()
            if name == "/dev/null":
                continue
            name = name[2:] if name[:2] in ("a/", "b/") else name
            if name not in out:
                out.append(name)
    return out


def load_run_files(results_root: Path, run: RunRecord) -> RunFiles:
    d = Path(results_root) / run.run_dir
    rf = RunFiles()
    rf.diff, rf.diff_truncated = read_capped(d / "diff.patch", MAX_DIFF_BYTES)
    if rf.diff:
        rf.diff_files = diff_files(rf.diff)
    tpath = d / "transcript.json"
    if tpath.is_file():
        try:
            rf.transcript = Transcript.model_validate_json(tpath.read_bytes())
        except (ValidationError, ValueError, OSError) as exc:
            rf.transcript_error = str(exc).splitlines()[0]
    if rf.transcript is not None:
        calls = rf.transcript.tool_calls
        rf.timeline_hidden = max(0, len(calls) - MAX_TOOL_CALLS)
        for i, c in enumerate(calls[:MAX_TOOL_CALLS], start=1):
            rf.timeline.append(
                TimelineEntry(
                    index=i,
                    name=c.name,
                    kind=c.kind,
                    summary=clip(_summary(c), 300) or "",
                    input=clip(json.dumps(c.input, indent=2, ensure_ascii=False)) or "",
                    result=clip(c.result),
                    is_error=c.is_error,
                    denied=c.denied,
                    exit_code=c.exit_code,
                )
            )
    rf.sealing = load_sealing(d / "process.json")
    from skillassay.kinds.base import run_page_data

    rf.kind_data = run_page_data(d)
    for name in ("rubric.json", "sandbox.json", "process.json", "changes.json"):
        text, truncated = _json_text(d / name)
        # changes.json (the rubric's view of the diff) is optional
        if text is not None or name != "changes.json":
            rf.evidence.append(Evidence(name, text, truncated))
    for name in ("app.stdout.log", "app.stderr.log", "agent.stderr.log", "agent.stdout.log"):
        text, truncated = read_tail(d / name)
        if text is not None:
            rf.logs.append(Log(name, text, truncated))
    return rf


def is_graded(run: RunRecord) -> bool:
    """False for an unscored run (a provider, harness or definition error: ``skillassay.outcomes``): whatever
    scores it holds are not the agent's; reports show none and statistics leave it out
    (``skillassay.scoring.stats``)."""
    return run.scored


def first_line(text: str | None, limit: int = 300) -> str:
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short_hash(skill_hash: str | None, n: int = 8) -> str:
    """``sha256:1a2b3c4d`` from a full ``sha256:...`` hash."""
    if not skill_hash:
        return ""
    algo, _, digest = skill_hash.partition(":")
    return f"{algo}:{digest[:n]}" if digest else skill_hash[:n]


def skill_label(skill_path: str | None, skill_hash: str | None, path: bool = True) -> str:
    """``examples/skills/x (sha256:1a2b3c4d)``, or ``no skill``; with ``path=False`` the short hash alone."""
    if not skill_path and not skill_hash:
        return "no skill"
    if not path or not skill_path:
        return short_hash(skill_hash) or str(skill_path)
    return f"{skill_path} ({short_hash(skill_hash)})" if skill_hash else str(skill_path)


def variant_label(run: RunRecord, job_has_skill: bool) -> str:
    """``baseline`` for baseline runs; ``skill`` for the others only when the job has a skill, else ``–``."""
    if run.variant == "baseline":
        return "baseline"
    return "skill" if job_has_skill else "–"


def run_reason(run: RunRecord) -> str | None:
    """Why a run failed or was not scored, short (``scoring.reasons.short_reason``); None when it passed."""
    return short_reason(
        outcome=run.outcome,
        error=run.error,
        failures=run.harness_failures,
        criteria=run.criteria,
        verdict=run.verdict,
        empty_diff=run.empty_diff,
    )


def failure_reason(run: RunRecord) -> str | None:
    """Why a run failed, in one line; None when it passed. An unscored run (provider, harness or definition
    error) was not graded: its reason is the error alone, whatever verdict it holds. A failed verdict says
    its score and what cost it the most (``run_reason``)."""
    if not is_graded(run):
        why = run_reason(run) if run.harness_failures else first_line(run.error)
        return f"{run.outcome.replace('_', ' ')} (not scored)" + (f": {why}" if why else "")
    v = run.verdict
    if run.outcome != "completed" and (v is None or not v.passed):
        reason = f"run {run.outcome.replace('_', ' ')}"
        if run.error:
            reason += f": {run.error.splitlines()[0][:300]}"
        if v is None:
            return reason
    else:
        reason = ""
    if v is None:
        return "no verdict recorded"
    if v.passed:
        return None
    own = failed_criterion(run)  # the run's kind's own reason (a trigger run's decision)
    if own is not None:
        return f"{reason}; {own}" if reason else own
    parts = []
    if v.disqualified:
        parts.append(f"forbidden behaviour observed: {', '.join(v.forbidden_observed)}")
    if v.below_threshold or not v.disqualified:
        text = f"score {percent_text(v.score)} below the threshold {percent_text(v.threshold)}"
        cause = run_reason(run) if not v.disqualified and run.outcome == "completed" else None
        parts.append(f"{text}: {cause}" if cause else text)
    if v.unjudged:
        parts.append(f"unjudged: {', '.join(v.unjudged)}")
    text = "; ".join(parts)
    return f"{reason}; {text}" if reason else text
