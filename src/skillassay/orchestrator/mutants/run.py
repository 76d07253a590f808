"""``skillassay check --mutants``: grade every eval's mutants with every layer, and compare with
``classes.py``.

Per eval: the golden is graded first (its scores are what a layer must go below to catch a mutant); then each
mutant. The rubric always reads the mutant's own source. The sandbox runs the mutant's own source when the app
has no build step; when it has one, it runs the eval's schema (``edits.schema``: every mutant behind a switch,
built once and cached like any build) with ``SKILLASSAY_MUTANT`` naming the mutant, and the golden's sandbox
baseline is that same build with no mutant on. Work is spread over ``jobs`` threads sharing one Seam emulator
(one workspace per validation).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from skillassay import stacks
from skillassay.definitions.models import EvalDefinition, RunSteps
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation.run_policy import run_policy
from skillassay.kinds import kind_of
from skillassay.orchestrator.grading import GradeOutcome, grade
from skillassay.orchestrator.mutants.classes import CLASSES, Expect, MutantClass
from skillassay.orchestrator.mutants.edits import MUTANT_ENV, Mutant, materialise, schema
from skillassay.seam.kind import check_points
from skillassay.services import Service
from skillassay.store.mutants import EvalMutation, LayerOutcome, MutantResult, MutationReport
from skillassay.transcripts import Transcript

if TYPE_CHECKING:
    from skillassay.seam.config import PlanEvalConfig
    from skillassay.seam.eval import SeamEval

EPS = 1e-6


def _seam_config(definition: EvalDefinition) -> PlanEvalConfig | None:
    """A Seam eval's config (the Seam kind's definitions are SeamEvals)."""
    return cast("SeamEval", definition).config


def _failures(out: GradeOutcome | None) -> list[str]:
    """What the harness failed to do while grading (a grader crash is a harness failure, never a score)."""
    return [] if out is None else [str(f) for f in out.failures]


def expectations(cls: MutantClass, definition: EvalDefinition) -> dict[str, Expect]:
    """What each layer of this eval must do with a mutant of this class (``classes.py``, with its
    exceptions).
    """
    out = dict(cls.expect)
    config = getattr(definition, "config", None)  # the plan's eval_config.json (a plan eval's only)
    conditions = {"presence_update": bool(config and config.sandbox_update_check == "presence")}
    for (condition, layer), expect in cls.unless.items():
        if conditions.get(condition) and layer in out:
            out[layer] = expect
    if kind_of(definition).layers and config is None:
        out.pop("sandbox", None)
    return out


def _with_mutant(definition: EvalDefinition, mutant_id: str) -> EvalDefinition:
    """The definition with ``SKILLASSAY_MUTANT`` in the app's environment (an empty value: no mutant on)."""
    config = _seam_config(definition)
    assert config is not None
    run = (
        config.run.model_copy(update={"env": {**config.run.env, MUTANT_ENV: mutant_id}})
        if config.run
        else RunSteps(env={MUTANT_ENV: mutant_id})
    )
    return definition.model_copy(update={"config": config.model_copy(update={"run": run})})


def _has_build(definition: EvalDefinition, app: Path) -> bool:
    from skillassay.apps.runplan import plan_for

    try:
        return bool(plan_for(definition, app).build)
    except Exception:  # noqa: BLE001 - no plan: the sandbox will say why when it runs
        return False


def _rubric_lines(out: GradeOutcome, golden: GradeOutcome) -> list[str]:
    lines = []
    cats = (out.rubric or {}).get("categories", {})
    base = (golden.rubric or {}).get("categories", {})
    for name, cat in cats.items():
        if float(cat.get("score", 0)) < float(base.get(name, {}).get("score", 0)) - EPS:
            misses = [e["message"] for e in cat.get("evidence", []) if not e.get("ok")]
            lines.append(
                f"{name} {base.get(name, {}).get('score')} -> {cat.get('score')}"
                + (f": {misses[0]}" if misses else "")
            )
    return lines


def _sandbox_lines(out: GradeOutcome, golden: GradeOutcome) -> list[str]:
    lines = []
    mine, base = check_points(out.sandbox), check_points(golden.sandbox)
    details = (out.sandbox or {}).get("checks") or {}
    for name, points in mine.items():
        if points < base.get(name, 0) - EPS:
            reason = (details.get(name) or {}).get("reason") if isinstance(details.get(name), dict) else None
            lines.append(f"{name} {base.get(name, 0):g} -> {points:g}" + (f": {reason}" if reason else ""))
    return lines


def _process_lines(out: GradeOutcome, golden: GradeOutcome) -> list[str]:
    lines = []
    base = {c.id: c.fraction for c in golden.criteria}
    for c in out.criteria:
        if c.fraction is not None and (was := base.get(c.id)) is not None and c.fraction < was - EPS:
            lines.append(
                f"{c.id} {was:.2f} -> {c.fraction:.2f}" + (f": {c.evidence[0]}" if c.evidence else "")
            )
    for f in out.forbidden_observed:
        if f not in golden.forbidden_observed:
            lines.append(f"forbidden behaviour observed: {f}")
    return lines


def _score(out: GradeOutcome, layer: str) -> float | None:
    if layer != "process":  # a grading layer of the eval's kind: its total (``<layer>_total``)
        total = out.grades.get(f"{layer}_total")
        return float(total) if isinstance(total, int | float) else None
    if out.verdict is None:
        return None
    # a forbidden behaviour fails the eval outright: it counts below any score
    return -1.0 if out.verdict.disqualified else float(out.verdict.score)


def judge_layers(
    expect: dict[str, Expect], golden: dict[str, GradeOutcome], got: dict[str, GradeOutcome]
) -> dict[str, LayerOutcome]:
    """Per layer: the golden's and the mutant's scores, caught or not, and whether that is what was
    expected.
    """
    out: dict[str, LayerOutcome] = {}
    lines_of: dict[str, Callable[[GradeOutcome, GradeOutcome], list[str]]] = {
        "rubric": _rubric_lines,
        "sandbox": _sandbox_lines,
        "process": _process_lines,
    }
    for layer, expected in expect.items():
        base, mine = golden.get(layer), got.get(layer)
        result = LayerOutcome(layer=layer, expected=expected)
        if base is None or mine is None or _failures(base) or _failures(mine):
            result.evidence = _failures(mine) + _failures(base)
            out[layer] = result
            continue
        result.golden, result.mutant = _score(base, layer), _score(mine, layer)
        if result.golden is None or result.mutant is None:
            out[layer] = result
            continue
        result.caught = result.mutant < result.golden - EPS
        equal = abs(result.mutant - result.golden) <= EPS
        result.ok = {"catch": result.caught, "equal": equal, "any": True}[expected]
        result.evidence = lines_of[layer](mine, base)[:6]
        out[layer] = result
    return out


class _Eval:
    """One eval's mutation work: its mutants, the golden's grades, the schema build."""

    def __init__(
        self,
        definition: EvalDefinition,
        mutants: list[Mutant],
        notes: list[str],
        tmp: Path,
        transcript: Transcript | None = None,
    ):
        self.definition = definition
        self.mutants = mutants
        self.notes = notes
        self.tmp = tmp
        self.transcript = transcript  # agent evals: the golden's transcript
        self.golden: dict[str, GradeOutcome] = {}
        self.schema_dir: Path | None = None
        self.waits: dict[str, float] | None = None  # the sandbox's quiet window, from the golden's own timing
        self.in_schema: set[str] = set()
        self.result = EvalMutation(eval_id=definition.id, format=definition.format, not_derived=list(notes))
        # the LLM judge settings, for agent evals whose criteria need one
        self.judge: JudgeConfig | None = None

    @property
    def seam(self) -> bool:
        return bool(kind_of(self.definition).layers)


def _grade(
    definition: EvalDefinition,
    folder: Path,
    tmp: Path,
    run_id: str,
    layers: str,
    emulator: Service | None,
    transcript: Transcript | None = None,
    waits: dict[str, float] | None = None,
    judge: JudgeConfig | None = None,
) -> GradeOutcome:
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=tmp))
    try:
        # sealed as `run` seals a run: the eval's registries reachable (a mutant's install is the golden's
        # on a cold cache: without them it fails, and the sandbox catches nothing)
        return grade(
            definition,
            folder,
            run_dir,
            run_id[:64],
            layers=layers,  # type: ignore[arg-type]
            emulator=emulator,
            transcript=transcript,
            sandbox_waits=waits,
            judge_config=judge,
            policy=run_policy("bubblewrap", definition, run_dir),
        )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _prepare(work: _Eval, emulator: Service | None, schemata: bool = True) -> None:
    """The golden's grades (and the schema build, warmed by the baseline run)."""
    d = work.definition
    assert d.golden_dir is not None
    rid = f"mut-{d.id}-golden"
    if not work.seam:
        work.golden["process"] = _grade(
            d, d.golden_dir, work.tmp, rid, "both", None, work.transcript, judge=work.judge
        )
        return
    work.golden["rubric"] = _grade(d, d.golden_dir, work.tmp, rid, "rubric", None)
    if _seam_config(d) is None:
        return
    if schemata and _has_build(d, d.golden_dir):
        folder = work.tmp / "schema"
        held = schema(d.golden_dir, work.mutants, folder, lambda rel: stacks.syntax_for(rel).language)
        work.schema_dir, work.in_schema = folder, set(held)
        work.golden["sandbox"] = _grade(
            _with_mutant(d, ""), folder, work.tmp, rid + "-schema", "sandbox", emulator
        )
    else:
        work.golden["sandbox"] = _grade(d, d.golden_dir, work.tmp, rid, "sandbox", emulator)
    work.waits = quiet_window(work.golden["sandbox"])


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


def _run_mutant(work: _Eval, mutant: Mutant, emulator: Service | None) -> MutantResult:
    d = work.definition
    cls = CLASSES[mutant.cls]
    t0 = time.monotonic()
    result = MutantResult(
        eval_id=d.id,
        mutant_id=mutant.id,
        cls=mutant.cls,
        title=cls.title,
        description=mutant.description,
        location=mutant.location,
    )
    rid = f"mut-{d.id}-{mutant.id}".replace("_", "-")
    folder = Path(tempfile.mkdtemp(prefix=f"{mutant.id}-", dir=work.tmp))
    try:
        source = materialise(d.golden_dir, mutant, folder / "app")  # type: ignore[arg-type]
        got: dict[str, GradeOutcome] = {}
        if work.seam:
            got["rubric"] = _grade(d, source, work.tmp, rid, "rubric", None)
            if _seam_config(d) is not None:
                if work.schema_dir is not None and mutant.id in work.in_schema:
                    result.sandbox_mode = "schema"
                    got["sandbox"] = _grade(
                        _with_mutant(d, mutant.id),
                        work.schema_dir,
                        work.tmp,
                        rid,
                        "sandbox",
                        emulator,
                        waits=work.waits,
                    )
                else:
                    result.sandbox_mode = "own"
                    got["sandbox"] = _grade(d, source, work.tmp, rid, "sandbox", emulator, waits=work.waits)
        else:
            got["process"] = _grade(
                d,
                source,
                work.tmp,
                rid,
                "both",
                None,
                mutant.transcript if mutant.transcript is not None else work.transcript,
                judge=work.judge,
            )
        expect = expectations(cls, d)
        result.layers = judge_layers(expect, work.golden, got)
        result.caught_by = [layer for layer, o in result.layers.items() if o.caught]
        failures = [f for o in got.values() for f in _failures(o)]
        if failures:
            result.error = "; ".join(failures)[:2000]
        wanted = any(e == "catch" for e in expect.values())
        result.blind_spot = wanted and not result.caught_by and result.error is None
        result.ok = result.error is None and all(o.ok for o in result.layers.values())
    except Exception as exc:  # noqa: BLE001 - a harness fault on one mutant: reported, never a pass
        result.error = f"{type(exc).__name__}: {exc}"
        result.ok = False
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        result.seconds = round(time.monotonic() - t0, 2)
    return result


def derive_all(definitions: list[EvalDefinition], tmp: Path) -> list[_Eval]:
    from skillassay.orchestrator.mutants import agent
    from skillassay.seam import mutants as seam

    works = []
    for d in definitions:
        if d.golden_dir is None:
            continue
        try:
            kind = kind_of(d)
            if not kind.mutant_checks(d):
                continue
            if kind.layers:
                mutants, notes, _golden = seam.derive(d)
                works.append(_Eval(d, mutants, notes, Path(tempfile.mkdtemp(prefix=f"{d.id}-", dir=tmp))))
            else:
                mutants, notes, transcript = agent.derive(d)
                works.append(
                    _Eval(d, mutants, notes, Path(tempfile.mkdtemp(prefix=f"{d.id}-", dir=tmp)), transcript)
                )
        except Exception as exc:  # noqa: BLE001 - a golden the deriver cannot read is reported, not skipped
            work = _Eval(d, [], [], tmp)
            work.result.error = f"could not derive mutants: {type(exc).__name__}: {exc}"
            works.append(work)
    return works


def run_mutation(
    definitions: list[EvalDefinition],
    *,
    suite: str,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    schemata: bool = True,
    judge_config: JudgeConfig | None = None,
) -> MutationReport:
    """Derive and grade every eval's mutants; the report says, per eval and layer, what was caught.
    ``schemata=False``: the sandbox builds and runs each mutant's own source, even where the app has a
    build step (slow; what the schema is checked against)."""
    t0 = time.monotonic()
    report = MutationReport(created_at=datetime.now(UTC), suite=suite, jobs=jobs)
    say = progress or (lambda _m: None)
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="skillassay-mutants-") as tmp_name:
        tmp = Path(tmp_name)
        works = derive_all(definitions, tmp)
        for work in works:
            work.judge = judge_config
        emulator: Service | None = None
        if any(w.seam and _seam_config(w.definition) is not None for w in works):
            from skillassay.services import service_class

            emulator = service_class("seam")(async_delay=0.5, automation_delay=0.5).start(
                host="127.0.0.1", port=0
            )
        try:
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:

                def prepare(work: _Eval) -> None:
                    if work.result.error is not None:
                        return
                    try:
                        _prepare(work, emulator, schemata)
                    except Exception as exc:  # noqa: BLE001
                        work.result.error = f"the golden could not be graded: {type(exc).__name__}: {exc}"
                    failures = [f for o in work.golden.values() for f in _failures(o)]
                    if failures:
                        work.result.error = "the golden could not be graded: " + "; ".join(failures)[:2000]
                    work.result.golden = {layer: _score(o, layer) for layer, o in work.golden.items()}
                    with lock:
                        say(f"{work.definition.id}: golden graded, {len(work.mutants)} mutant(s)")

                list(pool.map(prepare, works))

                def one(item: tuple[_Eval, Mutant]) -> MutantResult:
                    work, mutant = item
                    got = _run_mutant(work, mutant, emulator)
                    with lock:
                        caught = ", ".join(got.caught_by) or "nothing"
                        say(
                            f"{work.definition.id} {mutant.id}: caught by {caught}"
                            + ("" if got.ok else "  <- NOT AS EXPECTED")
                            + f" ({got.seconds:g} s)"
                        )
                    return got

                items = [(w, m) for w in works if w.result.error is None for m in w.mutants]
                results = list(pool.map(one, items))
            for (work, _m), res in zip(items, results, strict=False):
                work.result.mutants.append(res)
        finally:
            if emulator is not None:
                emulator.stop()
    report.evals = [w.result for w in works]
    report.duration_s = round(time.monotonic() - t0, 1)
    return report
