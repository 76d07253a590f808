"""A job as Inspect AI eval logs: one log per eval and arm, one sample per run.

``inspect-ai`` is the optional extra ``skillassay[inspect]``; it is imported here only, when an export runs.
Each run's sample carries the prompt, the agent's transcript as events (one model event per assistant turn,
one tool event per tool call), every criterion's score with its explanation and evidence, the outcome, the
tokens and cost. An unscored run is a sample error (Inspect shows it as an error), never a zero. Everything
written passes through the scrubber first.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from skillassay.secrets import environment_redactor
from skillassay.store.records import JobRecord, RunRecord
from skillassay.transcripts import ToolCall, Transcript

if TYPE_CHECKING:
    from inspect_ai.event import Event
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score


class InspectMissing(RuntimeError):
    """The ``inspect`` extra is not installed."""


VERDICT = "verdict"


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise InspectMissing(
            "exporting Inspect logs needs the inspect extra: pip install 'skillassay[inspect]'"
        ) from exc


def read_transcript(results_root: Path, run: RunRecord) -> Transcript | None:
    path = Path(results_root) / run.run_dir / "transcript.json"
    try:
        return Transcript.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def _tool_event(call: ToolCall) -> Event:
    from inspect_ai.event import ToolEvent
    from inspect_ai.tool import ToolCallError

    error = ToolCallError(type="permission", message="denied") if call.denied else None
    if error is None and call.is_error:
        error = ToolCallError(type="unknown", message=(call.result or "error")[:500])
    return ToolEvent(
        id=call.id, function=call.name, arguments=dict(call.input), result=call.result or "", error=error
    )


def _model_event(model: str, text: str) -> Event:
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelOutput

    return ModelEvent(
        model=model,
        input=[],
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        output=ModelOutput.from_content(model=model, content=text),
    )


def transcript_events(t: Transcript) -> list[Event]:
    """One model event per assistant message, in order; each tool call (a tool event) after the model turn
    that made it (``ToolCall.turn``), calls of no known turn after the last turn."""
    model = t.model or t.agent
    turns = [m.text for m in t.messages if m.role == "assistant"]
    by_turn: dict[int, list[ToolCall]] = {}
    for call in t.tool_calls:
        k = call.turn if call.turn is not None and 1 <= call.turn <= len(turns) else len(turns) + 1
        by_turn.setdefault(k, []).append(call)
    events: list[Event] = []
    for k in range(1, len(turns) + 2):
        if k <= len(turns):
            events.append(_model_event(model, turns[k - 1]))
        events.extend(_tool_event(c) for c in by_turn.get(k, []))
    return events


def _scores(run: RunRecord) -> dict[str, Score]:
    from inspect_ai.scorer import Score

    scores: dict[str, Score] = {}
    for c in run.criteria:
        scores[c.id] = Score(
            value=c.fraction if c.fraction is not None else "unjudged",
            explanation=c.description or f"{c.grader}: {c.id} (weight {c.weight:g})",
            metadata={"grader": c.grader, "weight": c.weight, "evidence": list(c.evidence)},
        )
    if run.verdict is not None:
        v = run.verdict
        scores[VERDICT] = Score(
            value=v.score,
            answer="pass" if v.passed else "fail",
            explanation=f"{'passed' if v.passed else 'failed'}: {v.earned:g} of {v.available:g} "
            f"(threshold {v.threshold:g})" + (", disqualified" if v.disqualified else ""),
            metadata=v.model_dump(mode="json"),
        )
    return scores


def run_sample(run: RunRecord, transcript: Transcript | None) -> EvalSample:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelUsage

    prompt = next((m.text for m in transcript.messages if m.role == "user"), "") if transcript else ""
    ts = run.transcript
    model = (transcript.model if transcript else None) or run.agent
    usage = ModelUsage(
        input_tokens=ts.input_tokens,
        output_tokens=ts.output_tokens,
        total_tokens=ts.input_tokens + ts.output_tokens,
        total_cost=ts.cost_usd,
    )
    error = None
    if not run.scored:
        message = f"{run.outcome}: {run.error or 'unscored'}"
        error = EvalError(message=message, traceback=message, traceback_ansi=message)
    return EvalSample(
        id=f"{run.variant}-run_{run.run_index}",
        epoch=run.run_index,
        input=prompt,
        target="",
        events=transcript_events(transcript) if transcript else [],
        scores=_scores(run) if run.scored else None,
        error=error,
        model_usage={model: usage},
        started_at=run.started_at.isoformat(),
        completed_at=run.finished_at.isoformat(),
        total_time=max(0.0, (run.finished_at - run.started_at).total_seconds()),
        metadata={
            "outcome": run.outcome,
            "cost_usd": ts.cost_usd,
            "turns": ts.turns,
            "tool_calls": ts.tool_calls,
            "run_dir": run.run_dir,
            "grades": dict(run.grades),
            "final_message": ts.final_message,
        },
    )


def eval_log(job: JobRecord, eval_id: str, variant: str, samples: list[EvalSample]) -> EvalLog:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    scored = [s.scores[VERDICT].as_float() for s in samples if s.scores and VERDICT in s.scores]
    mean = sum(scored) / len(scored) if scored else 0.0
    mean_metric = {"mean": EvalMetric(name="mean", value=mean)}
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=sum(1 for s in samples if s.error is None),
        scores=[EvalScore(name=VERDICT, scorer=VERDICT, metrics=mean_metric)] if scored else [],
    )
    metadata = {
        "job_id": job.job_id,
        "variant": variant,
        "suite": job.suite,
        "agent": job.agent,
        "skill_path": job.skill_path,
        "skill_hash": job.skill_hash,
        "options": job.options,
    }
    spec = EvalSpec(
        created=job.created_at.isoformat(),
        task=f"{eval_id}:{variant}",
        dataset=EvalDataset(name=job.suite, samples=len(samples)),
        model=job.agent,
        config=EvalConfig(),
        metadata=metadata,
    )
    stats = EvalStats(
        started_at=job.created_at.isoformat(),
        completed_at=(job.finished_at or job.created_at).isoformat(),
    )
    return EvalLog(status="success", eval=spec, results=results, stats=stats, samples=samples)


def log_name(job: JobRecord, eval_id: str, variant: str) -> str:
    """Inspect's own naming, ``<ISO time>_<task>_<id>.json``: `inspect view` lists a JSON log only when its
    name starts with the time."""
    when = job.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return f"{when}_{eval_id}-{variant}_{job.job_id}.json"


def export_inspect(results_root: Path, job: JobRecord, runs: list[RunRecord], out: Path) -> list[Path]:
    """Write one Inspect log (``log_name``) per eval and arm into ``out``, scrubbed; return
    their paths. Raises ``InspectMissing`` without the extra."""
    _require_inspect()
    from inspect_ai.log import write_eval_log

    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for r in sorted(runs, key=lambda r: (r.eval_id, r.variant, r.run_index)):
        groups.setdefault((r.eval_id, r.variant), []).append(r)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(dir=out, prefix=".staging-") as tmp:
        staging = Path(tmp)
        for (eval_id, variant), group in groups.items():
            samples = [run_sample(r, read_transcript(results_root, r)) for r in group]
            name = log_name(job, eval_id, variant)
            write_eval_log(eval_log(job, eval_id, variant, samples), staging / name, format="json")
        environment_redactor().scrub_tree(staging)
        for f in sorted(staging.iterdir()):
            target = out / f.name
            shutil.move(f, target)
            written.append(target)
    return written
