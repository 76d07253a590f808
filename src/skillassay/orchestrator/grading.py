"""Grading one finished run: the layers an eval has, turned into criteria and a verdict.

Used by ``skillassay run`` right after the agent stops and by ``skillassay regrade`` on stored workspaces, so
a regrade scores exactly as a run would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillassay.definitions.models import EvalDefinition
from skillassay.errors import DefinitionError
from skillassay.outcomes import HarnessFailure
from skillassay.scoring import RUBRIC_SHARE, SANDBOX_SHARE, CriterionResult, Verdict, combined_score, decide
from skillassay.transcripts import Transcript
from skillassay.workspace.changes import ChangeSet, compare_trees

Layers = Literal["rubric", "sandbox", "both"]
SANDBOX_POINTS = {"build": 10, "create": 30, "update": 30, "cancel": 30}
MAX_EVIDENCE = 6  # per criterion in run.json; the layer's own JSON keeps all of it


class GradeOutcome(BaseModel):
    rubric: dict[str, Any] | None = None  # the rubric layer's JSON (plan keys + evidence)
    sandbox: dict[str, Any] | None = None  # the sandbox layer's JSON (plan keys + evidence)
    process: dict[str, Any] | None = None  # agent-eval graders' JSON
    rubric_total: float | None = None
    sandbox_total: float | None = None
    combined: float | None = None
    api_path: str | None = None
    api_path_correct: bool | None = None
    emulator_spec_version: str | None = None
    criteria: list[CriterionResult] = Field(default_factory=list)
    forbidden_observed: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    # what the harness failed to do (a grader, detector, gate runner or judge call): any one makes the run a
    # harness_error; never zero points, never an unflagged forbidden behaviour
    failures: list[HarnessFailure] = Field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [str(f) for f in self.failures]


def _failure(stage: str, exc: BaseException) -> HarnessFailure:
    import traceback

    return HarnessFailure(stage=stage, message=f"{type(exc).__name__}: {exc}",
                          traceback="".join(traceback.format_exception(exc))[-8000:])


def _rubric(definition: EvalDefinition, modified_dir: Path, change: ChangeSet) -> Any:
    """The rubric layer within the parsers' bounds (``graders.process.base.measured``): a change it cannot
    read (a file too deep, too large, out of memory), when the pristine app grades, scores every category 0
    with the reason; a failure on the pristine app too is the harness's (raised)."""
    from skillassay.graders.base import Unmeasured, measured
    from skillassay.seam.rubric import grade as grade_rubric
    from skillassay.seam.rubric.grade import endpoints_of
    from skillassay.seam.rubric.models import CategoryResult, Finding, RubricResult

    def on(app: Path, seen: ChangeSet | None) -> Any:
        return grade_rubric(definition.app_dir, app, definition.answer_key, definition.rubric,
                            definition.api_path or "", change=seen, endpoints=endpoints_of(definition.config))

    got = measured(lambda: on(modified_dir, change), lambda: on(definition.app_dir, None),
                   [Path(modified_dir)])
    if not isinstance(got, Unmeasured):
        return got
    zero = [Finding(ok=False, message=got.evidence)]
    return RubricResult(total=0.0, changed_files=change.written, categories={
        c.name: CategoryResult(score=0.0, weighted=0.0, check=c.check, evidence=zero)
        for c in definition.rubric.categories})


def check_points(sandbox: dict | None) -> dict[str, float]:
    """Points per sandbox check, from either the plan's JSON (numbers) or the full result (objects with
    points)."""
    out: dict[str, float] = {}
    for name, value in ((sandbox or {}).get("checks") or {}).items():
        out[name] = float(value["points"] if isinstance(value, dict) else value)
    return out


def seam_criteria(definition: EvalDefinition, rubric: dict | None, sandbox: dict | None) -> list[CriterionResult]:
    """The Seam suite as weighted criteria, so one verdict rule serves every eval: each rubric category weighs
    0.4 x its weight and each sandbox check 0.6 x its points (the plan's combined score); a layer not run
    leaves its criteria unjudged."""
    out: list[CriterionResult] = []
    cats = (rubric or {}).get("categories", {})
    for cat in definition.rubric.categories if definition.rubric else []:
        got = cats.get(cat.name)
        evidence = [f"{'✓' if f.get('ok') else '✗'} {f.get('message', '')}"
                    + (f" ({f['location']})" if f.get("location") else "")
                    for f in (got or {}).get("evidence", [])[:MAX_EVIDENCE]]
        out.append(CriterionResult(
            id=cat.name, weight=round(RUBRIC_SHARE * cat.weight, 6), grader=f"rubric:{cat.check}",
            fraction=None if got is None else float(got["score"]),
            description=f"rubric category ({cat.weight:g} of 100)",
            evidence=evidence if got is not None else ["rubric layer not run"],
        ))
    checks = check_points(sandbox) if sandbox is not None else {}
    if sandbox is not None:
        from skillassay.seam.behaviour.result import check_evidence
    details = (sandbox or {}).get("checks") or {}
    if definition.config is not None:
        for name, points in SANDBOX_POINTS.items():
            got = checks.get(name)
            detail = details.get(name) if isinstance(details.get(name), dict) else {}
            evidence = check_evidence(detail) if detail else []
            if got is None:
                evidence = ["sandbox layer not run"]
            out.append(CriterionResult(
                id=f"sandbox_{name}", weight=round(SANDBOX_SHARE * points, 6), grader=f"sandbox:{name}",
                fraction=None if got is None else float(got) / points,
                description=f"sandbox check ({points} of 100)",
                evidence=evidence,
            ))
    return out


def grade(
    definition: EvalDefinition,
    modified_dir: Path,
    run_dir: Path,
    run_id: str,
    *,
    layers: Layers = "both",
    seam: str = "emulator",
    backend: str = "host",
    emulator: Any = None,
    transcript: Transcript | None = None,
    judge_config: Any = None,
    change: ChangeSet | None = None,
    policy: Any = None,
    sealing: Any = None,
    sandbox_waits: dict[str, float] | None = None,
) -> GradeOutcome:
    """Grade one run. ``change`` is the run's ChangeSet (fixture app -> ``modified_dir``), computed once by
    the workspace and handed to every grader; computed here when the caller has none (a regrade). ``policy``
    (a ``skillassay.isolation.Policy``) seals the app and the graders' commands; each sandbox they open is
    added to ``sealing`` (``orchestrator.sealing.Sealing``) for the run's records. ``sandbox_waits``: the
    sandbox's early-stop settings (``quiet_after``, ``fail_grace``) when not its defaults."""
    import time

    out = GradeOutcome()
    if change is None:
        change = compare_trees(definition.app_dir, modified_dir)
    want_rubric = layers in ("rubric", "both")
    want_sandbox = layers in ("sandbox", "both")

    if definition.format == "plan-json":
        if want_rubric and definition.answer_key and definition.rubric:
            t = time.monotonic()
            try:
                res = _rubric(definition, modified_dir, change)
                out.rubric = res.to_json()
                out.rubric_total = float(res.total)
                api = out.rubric.get("categories", {}).get("api_path_selection")
                if api is not None:
                    out.api_path_correct = float(api["score"]) >= 1.0
                out.api_path = ",".join(res.paths_taken) or None
            except Exception as exc:  # noqa: BLE001 - a grader bug must not lose the run, nor score it
                out.failures.append(_failure("rubric", exc))
            out.timings["rubric"] = round(time.monotonic() - t, 3)
        if want_sandbox and definition.config is not None:
            from skillassay.seam.behaviour import validate

            t = time.monotonic()
            try:
                res = validate(modified_dir, definition, run_id, seam=seam, backend=backend, emulator=emulator,
                               logs_dir=run_dir, policy=policy, sealing=sealing, **(sandbox_waits or {}))
                out.sandbox = res.model_dump(mode="json")
                out.sandbox_total = float(res.total)
                out.emulator_spec_version = res.emulator_spec_version or getattr(emulator, "spec_version", None)
                if res.error:  # the validator could not do its job: not the agent's fault
                    out.failures.append(HarnessFailure(stage="sandbox", message=res.error))
            except DefinitionError:
                raise  # the definition's fault: the run is invalid_definition
            except Exception as exc:  # noqa: BLE001
                out.failures.append(_failure("sandbox", exc))
            out.timings["sandbox"] = round(time.monotonic() - t, 3)
        out.combined = combined_score(out.rubric_total, out.sandbox_total)
        out.criteria = seam_criteria(definition, out.rubric, out.sandbox)
        out.verdict = decide(out.criteria, [], definition.pass_threshold)
        return out

    # native agent evals: the process graders decide criteria, forbidden behaviour and the verdict
    from skillassay.graders import evaluate

    t = time.monotonic()
    work = run_dir / "grading"
    work.mkdir(parents=True, exist_ok=True)
    try:
        res = evaluate(definition, definition.app_dir, modified_dir, transcript, work, judge_config=judge_config,
                       change=change, policy=policy, sealing=sealing)
        out.process = res.model_dump(mode="json")
        out.criteria = list(res.criteria)
        out.forbidden_observed = [f if isinstance(f, str) else f.id for f in res.forbidden_observed]
        out.verdict = res.verdict
        out.failures.extend(res.failures)
    except DefinitionError:
        raise
    except Exception as exc:  # noqa: BLE001
        out.failures.append(_failure("process graders", exc))
        out.criteria = []
        out.verdict = None
    finally:
        # the folders are copies of the workspace (and the fixture) the commands ran in: the run keeps its workspace
        # once, and the reports the commands wrote (files) stay
        for sub in work.iterdir():
            if sub.is_dir() and not sub.is_symlink():
                shutil.rmtree(sub, ignore_errors=True)
    out.timings["process"] = round(time.monotonic() - t, 3)
    return out
