"""A job as Inspect AI eval logs: one log per eval and arm, one sample per run.

``inspect-ai`` is the optional extra ``skillassay[inspect]``; it is imported here only, when an export runs.
Each run's sample carries the prompt, the agent's transcript as events (one model event per model turn, with
its input, the conversation so far, and its tokens where the CLI reports them; one tool event per tool
call), every criterion's score with its explanation and evidence, the outcome, the tokens and cost. An
unscored run is a sample error (Inspect shows it as an error), never a zero. Everything written passes
through the scrubber first.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from skillassay.secrets import environment_redactor
from skillassay.store.records import JobRecord, RunRecord
from skillassay.transcripts import ToolCall, Transcript, Usage

if TYPE_CHECKING:
    from inspect_ai.event import Event
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage
    from inspect_ai.model import ModelUsage as InspectUsage
    from inspect_ai.scorer import Score


class InspectMissing(RuntimeError):
    """The ``inspect`` extra is not installed."""


VERDICT = "verdict"
CONDENSE_OVER = 24  # messages in all of a sample's model inputs: past this, repeated content is pooled


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


@dataclass
class Turn:
    """One model turn of a transcript: what the model said, the calls it made, what it used."""

    text: str
    calls: list[ToolCall]
    usage: Usage | None  # None: the CLI did not report the turn's tokens
    model_turn: bool = True  # False: the calls of no known turn, after the last


def transcript_turns(t: Transcript) -> list[Turn]:
    """The transcript's model turns, in order. Where the CLI numbers them (``turn_usage``, ``ToolCall.turn``,
    ``Message.turn``), one per model response, a turn that only called tools included; an assistant message of
    no known turn belongs to the last. Where it does not (the reference and command agents), one turn per
    assistant message. Tool calls of no known turn come after the last turn, in a turn of their own."""
    assistant = [m for m in t.messages if m.role == "assistant"]
    known = [m.turn for m in assistant if m.turn] + [c.turn for c in t.tool_calls if c.turn]
    count = max([len(t.turn_usage), *known], default=0)
    texts: list[list[str]]
    if count == 0:
        count = len(assistant)
        texts = [[m.text] for m in assistant]
    else:
        texts = [[] for _ in range(count)]
        for m in assistant:
            texts[(m.turn if m.turn and m.turn <= count else count) - 1].append(m.text)
    calls: list[list[ToolCall]] = [[] for _ in range(count + 1)]
    for call in t.tool_calls:
        calls[call.turn - 1 if call.turn is not None and 1 <= call.turn <= count else count].append(call)
    turns = [
        Turn(
            text="\n".join(texts[k]),
            calls=calls[k],
            usage=t.turn_usage[k] if k < len(t.turn_usage) else None,
        )
        for k in range(count)
    ]
    if calls[count]:
        turns.append(Turn(text="", calls=calls[count], usage=None, model_turn=False))
    return turns


def _assistant(turn: Turn) -> ChatMessage:
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall as InspectToolCall

    return ChatMessageAssistant(
        content=turn.text,
        tool_calls=[InspectToolCall(id=c.id, function=c.name, arguments=dict(c.input)) for c in turn.calls]
        or None,
    )


def _tool_results(turn: Turn) -> list[ChatMessage]:
    from inspect_ai.model import ChatMessageTool
    from inspect_ai.tool import ToolCallError

    return [
        ChatMessageTool(
            content=c.result or "",
            tool_call_id=c.id,
            function=c.name,
            error=ToolCallError(type="permission", message="denied") if c.denied else None,
        )
        for c in turn.calls
    ]


def _model_usage(usage: Usage | None) -> InspectUsage | None:
    from inspect_ai.model import ModelUsage

    if usage is None:
        return None
    return ModelUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total,
        input_tokens_cache_read=usage.cache_read_input_tokens,
        input_tokens_cache_write=usage.cache_creation_input_tokens,
    )


def _model_event(model: str, conversation: list[ChatMessage], turn: Turn) -> Event:
    """A model turn: its input (the conversation so far, as the transcript has it: the prompt, the earlier
    turns and their tools' results), its output and its usage."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import ChatCompletionChoice, GenerateConfig, ModelOutput

    message = _assistant(turn)
    choice = ChatCompletionChoice(message=message, stop_reason="tool_calls" if turn.calls else "stop")
    return ModelEvent(
        model=model,
        input=list(conversation),
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        output=ModelOutput(model=model, choices=[choice], usage=_model_usage(turn.usage)),
    )


def transcript_events(t: Transcript) -> tuple[list[Event], list[ChatMessage]]:
    """(the events: a model event per model turn, then a tool event per call it made; the whole
    conversation, as the sample's messages)."""
    from inspect_ai.model import ChatMessageUser

    model = t.model or t.agent
    prompt = next((m.text for m in t.messages if m.role == "user"), None)
    conversation: list[ChatMessage] = [ChatMessageUser(content=prompt)] if prompt is not None else []
    events: list[Event] = []
    for turn in transcript_turns(t):
        if turn.model_turn:
            events.append(_model_event(model, conversation, turn))
        events.extend(_tool_event(c) for c in turn.calls)
        conversation += [_assistant(turn), *_tool_results(turn)]
    return events, conversation


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
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import EvalError, EvalSample, condense_sample
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
    events, messages = transcript_events(transcript) if transcript else ([], [])
    sample = EvalSample(
        id=f"{run.variant}-run_{run.run_index}",
        epoch=run.run_index,
        input=prompt,
        target="",
        events=events,
        messages=messages,
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
    # each model event's input repeats the conversation so far: past a few messages, kept once (as Inspect's
    # own logs are); a short conversation is cheaper written out than pooled
    repeated = sum(len(e.input) for e in events if isinstance(e, ModelEvent))
    return condense_sample(sample) if repeated > CONDENSE_OVER else sample


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
