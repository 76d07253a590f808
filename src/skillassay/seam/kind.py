"""The plan's Seam evals as an eval kind: the rubric layer (syntax trees) and the sandbox layer (the app
against the Seam emulator), turned into weighted criteria (the plan's combined score: rubric 40, sandbox
60) and a verdict.

Its figures (``SeamGrades``) are the run's ``grades`` in run.json."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from pydantic import BaseModel

from skillassay.definitions.app import RunSteps
from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.errors import DefinitionError
from skillassay.kinds.base import (
    ControlCase,
    EvalColumn,
    EvalKind,
    FigureColumn,
    GradeOutcome,
    GradeRequest,
    Layers,
    SummaryValue,
    failure,
)
from skillassay.kinds.mutants import DerivedMutants
from skillassay.outcomes import SERVICE_GAP_FIGURE, HarnessFailure
from skillassay.scoring import RUBRIC_SHARE, SANDBOX_SHARE, CriterionResult, combined_score, decide
from skillassay.seam.eval import SeamEval, seam_eval
from skillassay.store.records import GradeValue, RunRecord
from skillassay.workspace.changes import ChangeSet, compare_trees

if TYPE_CHECKING:
    from skillassay.isolation.record import Sealing
    from skillassay.seam.behaviour.result import SandboxResult
    from skillassay.seam.emulator.emulator import SeamEmulator
    from skillassay.seam.rubric.models import RubricResult

SANDBOX_POINTS = {"build": 10, "create": 30, "update": 30, "cancel": 30}
MUTANT_EPS = 1e-6  # a mutant scoring this much below the golden is caught
MAX_EVIDENCE = 6  # per criterion in run.json; the layer's own JSON keeps all of it


class SeamGrades(BaseModel):
    """The Seam kind's figures of one run (None: the layer was not run)."""

    rubric_total: float | None = None  # the hybrid's when both layers ran, else the static reading's
    rubric_static_total: float | None = None  # the static reading's own total
    hybrid_disagreements: int | None = None  # static claims the run's Seam trace settled the other way
    sandbox_total: float | None = None
    combined: float | None = None
    api_path: str | None = None  # the path the rubric saw the agent choose
    api_path_correct: bool | None = None
    emulator_spec_version: str | None = None

    @classmethod
    def of(cls, grades: dict[str, GradeValue]) -> SeamGrades:
        return cls.model_validate({k: v for k, v in grades.items() if k in cls.model_fields})

    def payload(self) -> dict[str, GradeValue]:
        return self.model_dump()


def _rubric(definition: SeamEval, modified_dir: Path, change: ChangeSet) -> RubricResult:
    """The rubric layer within the parsers' bounds (``graders.base.measured``): a change it cannot read (a
    file too deep, too large, out of memory), when the pristine app grades, scores every category 0 with
    the reason; a failure on the pristine app too is the harness's (raised)."""
    from skillassay.graders.base import Unmeasured, measured
    from skillassay.seam.rubric import grade as grade_rubric
    from skillassay.seam.rubric.grade import endpoints_of
    from skillassay.seam.rubric.models import CategoryResult, Finding, RubricResult

    assert definition.answer_key is not None and definition.rubric is not None
    answer_key, rubric = definition.answer_key, definition.rubric

    def on(app: Path, seen: ChangeSet | None) -> RubricResult:
        return grade_rubric(
            definition.app_dir,
            app,
            answer_key,
            rubric,
            definition.api_path or "",
            change=seen,
            endpoints=endpoints_of(definition.config),
        )

    got = measured(
        lambda: on(modified_dir, change), lambda: on(definition.app_dir, None), [Path(modified_dir)]
    )
    if not isinstance(got, Unmeasured):
        return got
    zero = [Finding(ok=False, message=got.evidence)]
    return RubricResult(
        total=0.0,
        changed_files=change.written,
        categories={
            c.name: CategoryResult(score=0.0, weighted=0.0, check=c.check, evidence=zero)
            for c in rubric.categories
        },
    )


def hybrid_rubric(d: SeamEval, layers: Layers, rubric: dict, sandbox: dict | None) -> dict:
    """The rubric's JSON judged against the sandbox's Seam trace (``seam/rubric/hybrid.py``); the static
    reading as it is, saying why, when there is no trace to judge it by."""
    from skillassay.seam.behaviour.trace import SeamTrace
    from skillassay.seam.rubric.grade import endpoints_of
    from skillassay.seam.rubric.hybrid import hybrid, static_only

    if layers == "rubric":
        return static_only(rubric, "--layers rubric: the sandbox did not run, the static reading decides")
    raw = (sandbox or {}).get("seam_trace")
    if sandbox is None:
        return static_only(rubric, "the sandbox layer was not run: the static reading decides")
    if (sandbox or {}).get("error"):
        return static_only(rubric, "the sandbox could not do its job: the static reading decides")
    if raw is None:
        return static_only(
            rubric,
            "no Seam trace (a live Seam sandbox, or the sandbox stopped early): the static reading decides",
        )
    assert d.answer_key is not None and d.rubric is not None
    t = time.monotonic()
    got = hybrid(
        rubric,
        SeamTrace.model_validate(raw),
        d.answer_key,
        d.rubric,
        d.api_path or "",
        sorted(endpoints_of(d.config)),
    )
    got.hybrid.seconds = round(time.monotonic() - t, 4)
    return got.model_dump(mode="json")


def check_points(sandbox: dict | None) -> dict[str, float]:
    """Points per sandbox check, from either the plan's JSON (numbers) or the full result (objects with
    points)."""
    out: dict[str, float] = {}
    for name, value in ((sandbox or {}).get("checks") or {}).items():
        out[name] = float(value["points"] if isinstance(value, dict) else value)
    return out


def evidence_line(f: dict) -> str:
    """One rubric finding for people: ✓/✗, which source decided (static, trace, both) and why."""
    mark = "✓" if f.get("ok") else ("✗ refuted:" if f.get("refuted") else "✗")
    source = f" [{f['source']}]" if f.get("source") in ("trace", "both") else ""
    where = f" ({f['location']})" if f.get("location") else ""
    why = f" — {f['why']}" if f.get("source") == "trace" and f.get("why") else ""
    return f"{mark}{source} {f.get('message', '')}{where}{why}"


def _rubric_criteria(definition: SeamEval, rubric: dict | None) -> list[CriterionResult]:
    out: list[CriterionResult] = []
    cats = (rubric or {}).get("categories", {})
    for cat in definition.rubric.categories if definition.rubric else []:
        got = cats.get(cat.name)
        evidence = [evidence_line(f) for f in (got or {}).get("evidence", [])[:MAX_EVIDENCE]]
        if got is not None and got.get("source"):
            evidence.append(f"decided by {got['source']}: {got.get('why', '')}")
        out.append(
            CriterionResult(
                id=cat.name,
                weight=round(RUBRIC_SHARE * cat.weight, 6),
                grader=f"rubric:{cat.check}",
                fraction=None if got is None else float(got["score"]),
                description=f"rubric category ({cat.weight:g} of 100)",
                evidence=evidence if got is not None else ["rubric layer not run"],
            )
        )
    return out


def seam_criteria(definition: SeamEval, rubric: dict | None, sandbox: dict | None) -> list[CriterionResult]:
    """The Seam suite as weighted criteria, so one verdict rule serves every eval: each rubric category weighs
    0.4 x its weight and each sandbox check 0.6 x its points (the plan's combined score); a layer not run
    leaves its criteria unjudged."""
    out = _rubric_criteria(definition, rubric)
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
            out.append(
                CriterionResult(
                    id=f"sandbox_{name}",
                    weight=round(SANDBOX_SHARE * points, 6),
                    grader=f"sandbox:{name}",
                    fraction=None if got is None else float(got) / points,
                    description=f"sandbox check ({points} of 100)",
                    evidence=evidence,
                )
            )
    return out


def layers_run(d: EvalDefinition, layers: Layers) -> tuple[bool, bool]:
    """Whether the rubric and the sandbox layer grade ``d`` under ``layers``."""
    d = seam_eval(d)
    rubric = layers in ("rubric", "both") and d.answer_key is not None and d.rubric is not None
    sandbox = layers in ("sandbox", "both") and d.config is not None
    return rubric, sandbox


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


class ApiPathColumn(EvalColumn):
    """The job summary's "API path": the path the eval expects, and whether its runs took it (✓ every one,
    else ✗ and how many did)."""

    header = "API path"
    fields: ClassVar[dict[str, str]] = {"api_path": "variant", "api_path_correct": "pass_rate"}

    def values(self, definition: EvalDefinition | None, runs: Sequence[RunRecord]) -> dict[str, SummaryValue]:
        right = [a for r in runs if isinstance(a := r.grades.get("api_path_correct"), bool)]
        return {
            "api_path": definition.api_path if definition else None,
            "api_path_correct": sum(1 for a in right if a) if right else None,
        }

    def cell(self, values: dict[str, SummaryValue], graded: int) -> str:
        correct, path = values.get("api_path_correct"), values.get("api_path")
        if correct is None:
            return "-"
        if correct == graded:
            return f"[green]✓[/green] {path}"
        return f"[red]✗[/red] {path} ({correct}/{graded} right)"


class SeamKind(EvalKind):
    name = "seam"
    format = "plan-json"
    layers = ("rubric", "sandbox")
    smoke_order = 0  # no build step to wait for in the plan's fixtures first
    eval_label = "application test"  # report templates (issue 25, item 1): the Evals page's word for them
    # report templates (issue 25, seamtpl): a run's API path, an eval's expected path and scoring layers
    template_package = "skillassay.seam"
    report_template = "report.html"
    # --- job summaries and reports (issue 25, item 1): the layer totals and the plan's combined score
    figure_columns = (
        FigureColumn(key="rubric", grade="rubric_total", header="Rubric"),
        FigureColumn(key="sandbox", grade="sandbox_total", header="Sandbox"),
        FigureColumn(key="combined", grade="combined", header="Combined", headline=True),
    )
    eval_columns = (ApiPathColumn(),)  # per-eval columns (issue 25): the API path expected and taken

    def unjudged_notes(self, ids: list[str]) -> list[str]:
        """A sandbox layer that was not run leaves all its criteria unjudged: said once."""
        sandbox = [i for i in ids if i.startswith("sandbox_")]
        rest = [i for i in ids if not i.startswith("sandbox_")]
        return rest + (["the sandbox layer (not run)"] if len(sandbox) == len(SANDBOX_POINTS) else sandbox)

    def suite_files(self, definition: EvalDefinition) -> list[Path]:
        return [Path(definition.rubric_file or definition.suite_dir.resolve() / "rubric.json")]

    def reload(self, definition: EvalDefinition, suite: Path, suite_here: Path) -> EvalDefinition:
        from skillassay.seam.loader import load_fixture

        rubric = definition.rubric_file
        return load_fixture(
            suite_here / Path(definition.fixture_dir).resolve().relative_to(suite),
            rubric_file=suite_here / Path(rubric).resolve().relative_to(suite) if rubric else None,
        )

    def shown_files(self, definition: EvalDefinition) -> list[Path]:
        return [
            definition.fixture_dir / "answer_key.json",
            *([Path(definition.rubric_file)] if definition.rubric_file else []),
        ]

    def services(self, definition: EvalDefinition, layers: Layers) -> set[str]:
        return {"seam"} if layers != "rubric" and definition.has_sandbox else set()

    def golden_expectation(self, definition: EvalDefinition, layers: Layers) -> ControlExpectation:
        rubric, sandbox = layers_run(definition, layers)
        return ControlExpectation(
            description="the reference solution scores full marks",
            rubric_total_min=100 if rubric else None,
            sandbox_total=100 if sandbox else None,
        )

    def score(self, outcome: GradeOutcome) -> float:
        """The combined score, else the one layer run, else the verdict's."""
        g = SeamGrades.of(outcome.grades)
        for value in (g.combined, g.sandbox_total, g.rubric_total):
            if value is not None:
                return round(value, 2)
        return super().score(outcome)

    def describe_score(self, definition: EvalDefinition, outcome: GradeOutcome, layers: Layers) -> str:
        rubric, sandbox = layers_run(definition, layers)
        g = SeamGrades.of(outcome.grades)
        parts = ([f"rubric {_points(g.rubric_total)}"] if rubric else []) + (
            [f"sandbox {_points(g.sandbox_total)}"] if sandbox else []
        )
        return ", ".join(parts) or "nothing"

    def compare_control(self, expected: ControlExpectation, outcome: GradeOutcome) -> list[str]:
        return compare_layers(expected, outcome)

    def figures(self, outcome: GradeOutcome) -> list[str]:
        g = SeamGrades.of(outcome.grades)
        return ([f"rubric {g.rubric_total:g}"] if g.rubric_total is not None else []) + (
            [f"sandbox {g.sandbox_total:g}"] if g.sandbox_total is not None else []
        )

    def control_cases(self, definition: EvalDefinition, layers: Layers) -> list[ControlCase]:
        """The golden scores 100 on both layers, the pristine app 10 on the sandbox (it builds, does nothing
        else), and each control what its ``<name>.expected.json`` says."""
        d = seam_eval(definition)
        cases: list[ControlCase] = []
        want_sandbox = layers in ("sandbox", "both") and d.config is not None
        if d.golden_dir is not None:
            cases.append(
                ControlCase(
                    name="golden",
                    folder=d.golden_dir,
                    expected=ControlExpectation(
                        description="the reference solution scores full marks",
                        rubric_total_min=100 if layers != "sandbox" else None,
                        sandbox_total=100 if want_sandbox else None,
                    ),
                )
            )
        if want_sandbox:
            cases.append(
                ControlCase(
                    name="pristine",
                    folder=d.app_dir,
                    expected=ControlExpectation(
                        description="the untouched app builds and starts, and does nothing else",
                        sandbox_total=10,
                    ),
                )
            )
        for c in d.controls:
            exp = c.expected
            if not want_sandbox:
                exp = exp.model_copy(update={"sandbox_checks": {}, "sandbox_total": None})
            if layers == "sandbox":
                exp = exp.model_copy(
                    update={"rubric_categories": {}, "rubric_total_max": None, "rubric_total_min": None}
                )
            cases.append(ControlCase(name=c.name, folder=c.dir, expected=exp))
        return cases

    # --- mutants (issue 25: the Seam mutant classes, ``seam.mutants``) ---
    def mutant_checks(self, definition: EvalDefinition) -> bool:
        return seam_eval(definition).answer_key is not None

    def derive_mutants(self, definition: EvalDefinition) -> DerivedMutants:
        from skillassay.seam import mutants

        found, notes, _golden = mutants.derive(definition)
        return DerivedMutants(mutants=found, notes=notes)

    def mutant_layers(self, definition: EvalDefinition) -> tuple[str, ...]:
        return ("rubric", "sandbox") if seam_eval(definition).config is not None else ("rubric",)

    def mutant_conditions(self, definition: EvalDefinition) -> set[str]:
        config = seam_eval(definition).config
        return {"presence_update"} if config and config.sandbox_update_check == "presence" else set()

    def with_app_env(self, definition: EvalDefinition, env: dict[str, str]) -> EvalDefinition:
        d = seam_eval(definition)
        config = d.config
        assert config is not None
        run = (
            config.run.model_copy(update={"env": {**config.run.env, **env}})
            if config.run
            else RunSteps(env=dict(env))
        )
        return d.model_copy(update={"config": config.model_copy(update={"run": run})})

    def mutant_evidence(self, layer: str, got: GradeOutcome, golden: GradeOutcome) -> list[str]:
        lines = {"rubric": rubric_lines, "sandbox": sandbox_lines}.get(layer)
        return lines(got, golden) if lines else []

    def mutant_waits(self, golden: GradeOutcome) -> dict[str, float] | None:
        return quiet_window(golden)

    def mutant_findings(self, definition: EvalDefinition, got: dict[str, GradeOutcome]) -> list[str]:
        """A mutant's layers are graded apart: its static rubric judged against its own sandbox trace."""
        from skillassay.seam.disagreements import describe
        from skillassay.seam.rubric.hybrid import Disagreement

        rubric, sandbox = got.get("rubric"), got.get("sandbox")
        if rubric is None or rubric.rubric is None or sandbox is None or sandbox.sandbox is None:
            return []
        judged = hybrid_rubric(seam_eval(definition), "both", rubric.rubric, sandbox.sandbox)
        return [describe(Disagreement.model_validate(d)) for d in judged.get("disagreements") or []]

    # --- end of mutants ---

    # --- reports: the static reading's blind spots, found in the wild (issue 26, item 3) ---
    def job_findings(self, results_root: Path, runs: Sequence[RunRecord]) -> list[str]:
        from skillassay.seam.disagreements import job_disagreements, lines

        return lines(job_disagreements(results_root, runs))

    def run_page_data(self, run_dir: Path) -> object:
        from skillassay.seam.disagreements import trace_summary

        return trace_summary(run_dir)

    def grade(self, request: GradeRequest) -> GradeOutcome:
        d = seam_eval(request.definition)
        change = (
            request.change if request.change is not None else compare_trees(d.app_dir, request.modified_dir)
        )
        out = GradeOutcome()
        g = SeamGrades()
        if request.layers in ("rubric", "both") and d.answer_key and d.rubric:
            t = time.monotonic()
            try:
                res = _rubric(d, request.modified_dir, change)
                out.rubric = res.to_json()
                g.rubric_total = float(res.total)
                api = out.rubric.get("categories", {}).get("api_path_selection")
                if api is not None:
                    g.api_path_correct = float(api["score"]) >= 1.0
                g.api_path = ",".join(res.paths_taken) or None
            except Exception as exc:  # noqa: BLE001 - a grader bug must not lose the run, nor score it
                out.failures.append(failure("rubric", exc))
            out.timings["rubric"] = round(time.monotonic() - t, 3)
        if request.layers in ("sandbox", "both") and d.config is not None:
            self._sandbox(request, out, g)
        if out.rubric is not None:
            self._hybrid(d, request.layers, out, g)
        g.combined = combined_score(g.rubric_total, g.sandbox_total)
        out.grades = g.payload()
        self._flag_gaps(out)
        out.criteria = seam_criteria(d, out.rubric, out.sandbox)
        out.verdict = decide(out.criteria, [], d.pass_threshold)
        return out

    def _hybrid(self, d: SeamEval, layers: Layers, out: GradeOutcome, g: SeamGrades) -> None:
        """The rubric's static judgements confirmed or refuted by the Seam trace the sandbox recorded (after
        both layers: the trace must exist); without a trace the static reading stands and says why."""
        t = time.monotonic()
        try:
            out.rubric = hybrid_rubric(d, layers, out.rubric or {}, out.sandbox)
            g.rubric_static_total = out.rubric.get("static_total")
            if out.rubric.get("hybrid", {}).get("applied"):
                g.rubric_total = float(out.rubric["total"])
                g.hybrid_disagreements = len(out.rubric.get("disagreements") or [])
                api = out.rubric.get("categories", {}).get("api_path_selection")
                if api is not None:
                    g.api_path_correct = float(api["score"]) >= 1.0
                g.api_path = ",".join(out.rubric.get("paths_taken") or []) or None
        except Exception as exc:  # noqa: BLE001 - a grader bug must not lose the run, nor score it
            out.failures.append(failure("hybrid", exc))
        out.timings["hybrid"] = round(time.monotonic() - t, 4)

    def _sandbox(self, request: GradeRequest, out: GradeOutcome, g: SeamGrades) -> None:
        from skillassay.seam.behaviour import validate

        t = time.monotonic()
        try:
            res = validate(
                request.modified_dir,
                request.definition,
                request.run_id,
                seam=cast(Literal["emulator", "live"], request.seam),
                backend=cast(Literal["host", "docker"], request.backend),
                emulator=cast("SeamEmulator | None", request.emulator),
                logs_dir=request.run_dir,
                policy=request.policy,
                sealing=cast("Sealing | None", request.sealing),
                **request.sandbox_waits,
            )
            out.sandbox = res.model_dump(mode="json")
            g.sandbox_total = float(res.total)
            g.emulator_spec_version = res.emulator_spec_version or getattr(
                request.emulator, "spec_version", None
            )
            if res.error:  # the validator could not do its job: not the agent's fault
                out.failures.append(HarnessFailure(stage="sandbox", message=res.error))
            d = seam_eval(request.definition)
            self._gaps(d.api_path or (d.config.expected_api_path if d.config else ""), res, out)
        except DefinitionError:
            raise  # the definition's fault: the run is invalid_definition
        except Exception as exc:  # noqa: BLE001
            out.failures.append(failure("sandbox", exc))
        out.timings["sandbox"] = round(time.monotonic() - t, 3)

    @staticmethod
    def _gaps(api_path: str, res: SandboxResult, out: GradeOutcome) -> None:
        """Emulator gaps in the failing checks' windows (``seam.behaviour.gaps``): one on a route a correct
        solution may use makes the run the harness's failure; the others are kept in sandbox.json and
        flagged (the run stays scored)."""
        from skillassay.seam.behaviour.gaps import emulator_gaps, gap_requests

        gaps = emulator_gaps(res, api_path)
        if out.sandbox is not None and gaps:
            out.sandbox["emulator_gaps"] = [g.model_dump(mode="json") for g in gaps]
        # every request the emulator answered 501 or approximately, whatever its check's fate (a check that
        # passed on the generic engine's guess is shown, not scored differently)
        approximate = gap_requests(res.seam_trace)
        if out.sandbox is not None and approximate:
            out.sandbox["approximate_requests"] = approximate
        excused = [g for g in gaps if g.excused]
        if excused:
            out.failures.append(
                HarnessFailure(
                    stage="sandbox",
                    message="emulator gap, not the agent's failure: "
                    + "; ".join(g.text() for g in excused[:3]),
                )
            )

    @staticmethod
    def _flag_gaps(out: GradeOutcome) -> None:
        """The gaps no correct solution needed, counted in the run's figures (the run stays scored; the
        unscored-share guard counts it: ``outcomes.SERVICE_GAP_FIGURE``)."""
        flagged = [gap for gap in (out.sandbox or {}).get("emulator_gaps", []) if not gap["excused"]]
        if flagged:
            out.grades[SERVICE_GAP_FIGURE] = float(len(flagged))


TOLERANCE = 0.011  # category scores are rounded to two decimals


def compare_layers(expected: ControlExpectation, got: GradeOutcome) -> list[str]:
    """What the rubric and sandbox figures miss of a control's expectation (and any emulator gap the
    control's app met: its figures would check the generic engine, not Seam)."""
    from skillassay.seam.behaviour.gaps import gap_requests
    from skillassay.seam.behaviour.trace import SeamTrace

    bad: list[str] = []
    trace = (got.sandbox or {}).get("seam_trace")
    met = gap_requests(SeamTrace.model_validate(trace)) if trace else []
    if met:
        bad.append(
            "met an emulator gap (501 or an approximate route): "
            + ", ".join(met[:3])
            + (f" and {len(met) - 3} more" if len(met) > 3 else "")
        )
    cats = (got.rubric or {}).get("categories", {})
    for name, score in expected.rubric_categories.items():
        actual = cats.get(name, {}).get("score")
        if actual is None or abs(float(actual) - score) > TOLERANCE:
            bad.append(f"rubric {name}: expected {score}, got {actual}")
    g = SeamGrades.of(got.grades)
    total = g.rubric_total
    if expected.rubric_total_max is not None and (total is None or total > expected.rubric_total_max + 1e-9):
        bad.append(f"rubric total: expected at most {expected.rubric_total_max}, got {total}")
    if expected.rubric_total_min is not None and (total is None or total < expected.rubric_total_min - 1e-9):
        bad.append(f"rubric total: expected at least {expected.rubric_total_min}, got {total}")
    checks = check_points(got.sandbox)
    for name, points in expected.sandbox_checks.items():
        actual = checks.get(name)
        if actual is None or abs(float(actual) - points) > 1e-9:
            bad.append(f"sandbox {name}: expected {points:g}, got {actual}")
    if expected.sandbox_total is not None and (
        g.sandbox_total is None or abs(g.sandbox_total - expected.sandbox_total) > 1e-9
    ):
        bad.append(f"sandbox total: expected {expected.sandbox_total:g}, got {g.sandbox_total}")
    return bad


# ----------------------------------------------------------------------------- a mutant's scores, read
def rubric_lines(out: GradeOutcome, golden: GradeOutcome) -> list[str]:
    """The rubric categories a mutant scores below the golden on, with the first evidence missed."""
    lines = []
    cats = (out.rubric or {}).get("categories", {})
    base = (golden.rubric or {}).get("categories", {})
    for name, cat in cats.items():
        if float(cat.get("score", 0)) < float(base.get(name, {}).get("score", 0)) - MUTANT_EPS:
            misses = [e["message"] for e in cat.get("evidence", []) if not e.get("ok")]
            lines.append(
                f"{name} {base.get(name, {}).get('score')} -> {cat.get('score')}"
                + (f": {misses[0]}" if misses else "")
            )
    return lines


def sandbox_lines(out: GradeOutcome, golden: GradeOutcome) -> list[str]:
    """The sandbox checks a mutant gets fewer points on than the golden, with the check's reason."""
    lines = []
    mine, base = check_points(out.sandbox), check_points(golden.sandbox)
    details = (out.sandbox or {}).get("checks") or {}
    for name, points in mine.items():
        if points < base.get(name, 0) - MUTANT_EPS:
            reason = (details.get(name) or {}).get("reason") if isinstance(details.get(name), dict) else None
            lines.append(f"{name} {base.get(name, 0):g} -> {points:g}" + (f": {reason}" if reason else ""))
    return lines


def quiet_window(golden: GradeOutcome) -> dict[str, float] | None:
    """How long a mutant's sandbox run waits for the app's first Seam request before giving up on a step: four
    times the slowest first request the golden itself made (at least 1.5 s, at most the sandbox's own 5 s).
    The mutants are the golden's code: an app that reaches Seam within 0.2 s of a request does not take 5 s
    to start when only one of its calls was removed."""
    from skillassay.seam.behaviour.validate import QUIET_AFTER

    firsts = []
    for check in ((golden.sandbox or {}).get("checks") or {}).values():
        sent = ((check or {}).get("seam") or {}).get("app_seam_requests") if isinstance(check, dict) else None
        times = [t for r in sent or [] if isinstance(r, dict) and (t := r.get("at_s")) is not None]
        if times:
            firsts.append(min(times))
    if not firsts:
        return None
    return {"quiet_after": round(min(QUIET_AFTER, max(1.5, 4 * max(firsts))), 2)}
