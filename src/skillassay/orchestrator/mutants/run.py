"""``skillassay check --mutants``: grade every eval's mutants with every layer, and compare with
``classes.py``.

Per eval: the golden is graded first (its scores are what a layer must go below to catch a mutant); then each
mutant. The rubric always reads the mutant's own source. The sandbox runs the mutant's own source when the app
has no build step; when it has one, it runs the eval's schema (``edits.schema``: every mutant behind a switch,
built once and cached like any build) with ``SKILLASSAY_MUTANT`` naming the mutant, and the golden's sandbox
baseline is that same build with no mutant on. The eval's kind says which of its layers grade a mutant and how
their scores read (``EvalKind``'s mutants block). Work is spread over ``jobs`` threads sharing one emulator
(the run service the kinds' sandboxes need; one workspace per validation).
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

from skillassay import stacks
from skillassay.definitions.models import EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation.run_policy import run_policy
from skillassay.kinds import EvalKind, kind_of
from skillassay.kinds.mutants import DerivedMutants
from skillassay.orchestrator.grading import GradeOutcome, grade
from skillassay.orchestrator.mutants.classes import CLASSES, Expect, MutantClass
from skillassay.orchestrator.mutants.edits import MUTANT_ENV, Mutant, materialise, schema
from skillassay.services import Service
from skillassay.store.mutants import EvalMutation, LayerOutcome, MutantResult, MutationReport
from skillassay.transcripts import Transcript

EPS = 1e-6


def _failures(out: GradeOutcome | None) -> list[str]:
    """What the harness failed to do while grading (a grader crash is a harness failure, never a score)."""
    return [] if out is None else [str(f) for f in out.failures]


def expectations(cls: MutantClass, definition: EvalDefinition) -> dict[str, Expect]:
    """What each layer of this eval must do with a mutant of this class (``classes.py``, with its
    exceptions).
    """
    out = dict(cls.expect)
    kind = kind_of(definition)
    conditions = kind.mutant_conditions(definition)
    for (condition, layer), expect in cls.unless.items():
        if condition in conditions and layer in out:
            out[layer] = expect
    for layer in set(kind.layers) - set(kind.mutant_layers(definition)):  # a layer the eval has not
        out.pop(layer, None)
    return out


def _with_mutant(definition: EvalDefinition, mutant_id: str) -> EvalDefinition:
    """The definition with ``SKILLASSAY_MUTANT`` in the app's environment (an empty value: no mutant on)."""
    return kind_of(definition).with_app_env(definition, {MUTANT_ENV: mutant_id})


def _has_build(definition: EvalDefinition, app: Path) -> bool:
    from skillassay.apps.runplan import plan_for

    try:
        return bool(plan_for(definition, app).build)
    except Exception:  # noqa: BLE001 - no plan: the sandbox will say why when it runs
        return False


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
    expect: dict[str, Expect],
    golden: dict[str, GradeOutcome],
    got: dict[str, GradeOutcome],
    kind: EvalKind | None = None,
) -> dict[str, LayerOutcome]:
    """Per layer: the golden's and the mutant's scores, caught or not, and whether that is what was
    expected. The evidence of a layer of the eval's ``kind`` is the kind's (``EvalKind.mutant_evidence``).
    """
    out: dict[str, LayerOutcome] = {}

    def lines_of(layer: str, mine: GradeOutcome, base: GradeOutcome) -> list[str]:
        if layer == "process":
            return _process_lines(mine, base)
        return kind.mutant_evidence(layer, mine, base) if kind is not None else []

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
        result.evidence = lines_of(layer, mine, base)[:6]
        out[layer] = result
    return out


class _Eval:
    """One eval's mutation work: its mutants, the golden's grades, the schema build."""

    def __init__(self, definition: EvalDefinition, derived: DerivedMutants, tmp: Path):
        self.definition = definition
        self.kind = kind_of(definition)
        self.layers = self.kind.mutant_layers(definition)  # none: graded as a run, by the process graders
        self.mutants = derived.mutants
        self.notes = derived.notes
        self.tmp = tmp
        self.transcript = derived.transcript  # agent evals: the golden's transcript
        self.golden: dict[str, GradeOutcome] = {}
        self.schema_dir: Path | None = None
        self.waits: dict[str, float] | None = None  # the sandbox's quiet window, from the golden's own timing
        self.in_schema: set[str] = set()
        self.result = EvalMutation(
            eval_id=definition.id, format=definition.format, not_derived=list(derived.notes)
        )
        # the LLM judge settings, for agent evals whose criteria need one
        self.judge: JudgeConfig | None = None

    @property
    def sandbox(self) -> bool:
        """Whether a mutant's sandbox layer runs (the app against the kind's services)."""
        return "sandbox" in self.layers


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
    if not work.layers:
        work.golden["process"] = _grade(
            d, d.golden_dir, work.tmp, rid, "both", None, work.transcript, judge=work.judge
        )
        return
    work.golden["rubric"] = _grade(d, d.golden_dir, work.tmp, rid, "rubric", None)
    if not work.sandbox:
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
    work.waits = work.kind.mutant_waits(work.golden["sandbox"])


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
        if work.layers:
            got["rubric"] = _grade(d, source, work.tmp, rid, "rubric", None)
            if work.sandbox:
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
        result.layers = judge_layers(expect, work.golden, got, work.kind)
        result.caught_by = [layer for layer, o in result.layers.items() if o.caught]
        result.disagreements = work.kind.mutant_findings(d, got)
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

    works = []
    for d in definitions:
        if d.golden_dir is None:
            continue
        try:
            kind = kind_of(d)
            if not kind.mutant_checks(d):
                continue
            derived = kind.derive_mutants(d) or DerivedMutants(*agent.derive(d))
            works.append(_Eval(d, derived, Path(tempfile.mkdtemp(prefix=f"{d.id}-", dir=tmp))))
        except Exception as exc:  # noqa: BLE001 - a golden the deriver cannot read is reported, not skipped
            work = _Eval(d, DerivedMutants(mutants=[], notes=[]), tmp)
            work.result.error = f"could not derive mutants: {type(exc).__name__}: {exc}"
            works.append(work)
    return works


def _start_services(works: list[_Eval]) -> Service | None:
    """The one run service the mutants' sandboxes share (the kinds' ``services``; None: no sandbox runs)."""
    from skillassay.services import service_class

    needed = {s for w in works if w.sandbox for s in w.kind.services(w.definition, "sandbox")}
    if not needed:
        return None
    if len(needed) > 1:
        raise RuntimeError(f"the mutants' sandboxes need more than one service: {sorted(needed)}")
    # quick async and automation answers: a mutant's run waits on them as a golden's does
    return service_class(needed.pop())(async_delay=0.5, automation_delay=0.5).start(host="127.0.0.1", port=0)


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
        emulator = _start_services(works)
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
