"""The golden canary: before any run of an eval is scored on a machine, the eval's golden solution is graded
there, by every layer the job uses but the LLM judge, and must get what ``check --controls`` expects of it
(Seam evals: 100 on each layer; agent evals: pass, not disqualified). A golden that fails here, or passes
only sometimes, says the machine cannot measure the eval: every run of it in the job is a harness error
carrying the canary's reason, never the agent's score (docs/results.md, "The canary").

A pass is kept in skillassay's cache (``paths.cache_dir()/canary/<key>.json``), keyed by the eval's files and
this machine's environment (Python, Node, platform, the harness's own code, the layers, seam, backend and
isolation): a cached pass costs nothing. Failures are never kept: the next job checks again. With ``--agent
reference`` the runs are the golden's own: each is checked against the golden's expectation after grading
(``reference_check``), and a pass adds its score to the cache entry.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError

from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.errors import DefinitionError
from skillassay.kinds import kind_of
from skillassay.orchestrator.grading import GradeOutcome, Layers
from skillassay.store.records import CanaryCheck
from skillassay.workspace.skiplist import SKIP_DIRS

if TYPE_CHECKING:
    from skillassay.isolation import Policy
    from skillassay.services import Service

DEFAULT_RUNS = 3
# the default of --canary-runs (e.g. 0 in a test suite that checks its own)
RUNS_ENV = "SKILLASSAY_CANARY_RUNS"
# the one grader the canary leaves out: a model's answer says nothing about the machine
LLM_JUDGE = "llm_judge"
CACHE_FOLDER = "canary"


def default_runs() -> int:
    text = os.environ.get(RUNS_ENV, "").strip()
    if not text:
        return DEFAULT_RUNS
    if not text.isdigit():
        from skillassay.errors import SkillassayError

        raise SkillassayError(f"{RUNS_ENV}={text!r}: expected a whole number of golden runs, 0 or more")
    return int(text)


class CanaryPlan(BaseModel):
    """How a job checks its evals' goldens (picklable: it travels with the job's services to every worker)."""

    runs: int = Field(DEFAULT_RUNS, ge=1)  # golden runs on a cache miss
    layers: Layers = "both"
    seam: str = "emulator"
    backend: str = "host"
    isolation: str = "bubblewrap"


class CacheEntry(BaseModel):
    eval_id: str
    key: str
    scores: list[float]  # every passing golden run recorded for this key
    environment: dict[str, str | None]
    checked_at: datetime


# ---------------------------------------------------------------------------------------------------- the key
def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath) / name


def _digest(roots: list[Path], base: Path) -> str:
    h = hashlib.sha256()
    for root in roots:
        for f in _files(root):
            try:
                rel = f.resolve().relative_to(base).as_posix()
            except ValueError:
                rel = f.as_posix()
            h.update(rel.encode() + b"\0")
            h.update(os.readlink(f).encode() if f.is_symlink() else f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def fixture_hash(d: EvalDefinition) -> str:
    """sha256 over every file the eval's grading reads: the fixture folder (app, golden, config, controls),
    the rubric, the definition file and its folder's hidden tests."""
    roots = [Path(d.fixture_dir), Path(d.source), *kind_of(d).hashed_inputs(d)]
    return _digest([r.resolve() for r in roots if r.exists()], Path(d.suite_dir).resolve())


@lru_cache(maxsize=1)
def harness_version() -> str:
    """The harness's version and a digest of its own code and data: a grader changed in a checkout is a new
    harness, whatever its version number says."""
    import skillassay

    package = Path(skillassay.__file__).resolve().parent
    return f"{skillassay.__version__}+{_digest([package], package)[:16]}"


@lru_cache(maxsize=1)
def _runtimes() -> dict[str, str | None]:
    from skillassay.orchestrator.environment import machine_info

    info = machine_info()
    return {
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "node": info.get("node"),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def environment(plan: CanaryPlan) -> dict[str, str | None]:
    return {
        **_runtimes(),
        "harness": harness_version(),
        "layers": plan.layers,
        "seam": plan.seam,
        "backend": plan.backend,
        "isolation": plan.isolation,
    }


def cache_key(d: EvalDefinition, plan: CanaryPlan) -> str:
    env = json.dumps(environment(plan), sort_keys=True)
    return hashlib.sha256(f"{d.id}\0{fixture_hash(d)}\0{env}".encode()).hexdigest()


def cache_file(key: str) -> Path:
    from skillassay.paths import cache_dir

    return cache_dir() / CACHE_FOLDER / f"{key}.json"


@contextmanager
def _locked(key: str) -> Iterator[Path]:
    path = cache_file(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield path


def _read(path: Path) -> CacheEntry | None:
    try:
        return CacheEntry.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def cached_scores(key: str) -> list[float]:
    entry = _read(cache_file(key))
    return list(entry.scores) if entry is not None and entry.key == key else []


def record_pass(d: EvalDefinition, plan: CanaryPlan, key: str, scores: list[float]) -> None:
    """Add passing golden runs to the key's entry (written whole, atomically)."""
    with _locked(key) as path:
        old = _read(path)
        entry = CacheEntry(
            eval_id=d.id,
            key=key,
            scores=[*(old.scores if old and old.key == key else []), *scores],
            environment=environment(plan),
            checked_at=datetime.now(UTC),
        )
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(entry.model_dump_json(indent=2), encoding="utf-8")
        os.replace(tmp, path)


def forget(key: str) -> None:
    """A golden failed here: earlier passes under this key no longer vouch for the machine."""
    with _locked(key) as path:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------- the golden
def expectation(d: EvalDefinition, layers: Layers) -> ControlExpectation:
    """What the golden must get: the same as ``check --controls`` asks of it."""
    return kind_of(d).golden_expectation(d, layers)


def without_judge(d: EvalDefinition) -> EvalDefinition:
    return d.model_copy(update={"criteria": [c for c in d.criteria if c.grader != LLM_JUDGE]})


def score(d: EvalDefinition, got: GradeOutcome) -> float:
    """The golden's score, 0-100, as the job's figures show it (the eval's kind's)."""
    return kind_of(d).score(got)


def _cause(got: GradeOutcome) -> str | None:
    """The first thing that kept the golden from full marks, in the graders' words."""
    if got.errors:
        return got.errors[0]
    for check in ((got.sandbox or {}).get("checks") or {}).values():
        if isinstance(check, dict) and check.get("points", 0) < check.get("max_points", 0):
            return f"{check.get('name')}: {check.get('reason') or 'no points'}"
    for name, cat in ((got.rubric or {}).get("categories") or {}).items():
        if float(cat.get("score", 1)) < 1:
            bad = [e.get("message") for e in cat.get("evidence", []) if not e.get("ok")]
            return f"rubric {name} {float(cat['score']):g}" + (f": {bad[0]}" if bad else "")
    if got.verdict is not None and got.verdict.forbidden_observed:
        return "forbidden behaviour observed: " + ", ".join(got.verdict.forbidden_observed)
    for c in got.criteria:
        if c.fraction is not None and c.fraction < 1:
            return f"{c.id} {c.fraction:.2f}" + (f": {c.evidence[0]}" if c.evidence else "")
    return None


def judge(d: EvalDefinition, got: GradeOutcome, layers: Layers) -> str | None:
    """Why the golden did not get what it must (None: it did), as one line for people."""
    from skillassay.orchestrator.controls import compare

    bad = compare(expectation(d, layers), got) + got.errors
    if not bad:
        return None
    scored = kind_of(d).describe_score(d, got, layers)
    return f"the golden scores {scored}: {_cause(got) or bad[0]}"[:1000]


def grade_golden(
    d: EvalDefinition,
    plan: CanaryPlan,
    work: Path,
    run_id: str,
    *,
    policy: Policy | None = None,
    emulator: Service | None = None,
) -> GradeOutcome:
    """One golden run, graded as an agent's change would be (the run's policy seals the app and the
    commands).
    """
    from skillassay.orchestrator.grading import grade

    assert d.golden_dir is not None
    transcript = kind_of(d).golden_transcript(d)
    return grade(
        without_judge(d),
        Path(d.golden_dir),
        work,
        run_id,
        layers=plan.layers,
        seam=plan.seam,
        backend=plan.backend,
        emulator=emulator,
        transcript=transcript,
        policy=policy,
    )


def _golden_run(
    d: EvalDefinition, plan: CanaryPlan, n: int, policy: Policy | None, emulator: Service | None
) -> tuple[float, str | None]:
    with tempfile.TemporaryDirectory(prefix=f"skillassay-canary-{d.id}-") as tmp:
        try:
            got = grade_golden(d, plan, Path(tmp), f"canary-{d.id}-{n}", policy=policy, emulator=emulator)
        except DefinitionError:
            raise  # the definition's fault: the run says invalid_definition
        except Exception as exc:  # noqa: BLE001 - the harness failed: the machine cannot measure the eval either
            return 0.0, f"the harness failed grading the golden: {type(exc).__name__}: {exc}"
    return score(d, got), judge(d, got, plan.layers)


def check(
    d: EvalDefinition, plan: CanaryPlan, *, policy: Policy | None = None, emulator: Service | None = None
) -> CanaryCheck:
    """The eval's canary on this machine: from the cache when it holds ``plan.runs`` passes, else the missing
    golden runs (all of them once the first passes: a golden that passes only sometimes fails the canary
    too)."""
    no_golden = kind_of(d).canary_skip(d)
    if no_golden is not None:
        return CanaryCheck(eval_id=d.id, status="skipped", reason=no_golden)
    if d.golden_dir is None or not Path(d.golden_dir).is_dir():
        return CanaryCheck(
            eval_id=d.id, status="skipped", reason="no golden solution (test_golden/) to check"
        )
    key = cache_key(d, plan)
    before = cached_scores(key)
    if len(before) >= plan.runs:
        return CanaryCheck(eval_id=d.id, status="passed", key=key, scores=before[-plan.runs :], cached=True)
    scores: list[float] = []
    failed: list[tuple[int, str]] = []
    for n in range(len(before) + 1, plan.runs + 1):
        got, why = _golden_run(d, plan, n, policy, emulator)
        scores.append(got)
        if why is not None:
            failed.append((n, why))
            if not before and n == 1:
                break  # the first run failed: no need to ask again
    every = [*before, *scores]
    if not failed:
        record_pass(d, plan, key, scores)
        return CanaryCheck(eval_id=d.id, status="passed", key=key, scores=every, cached=False)
    forget(key)
    if len(failed) == len(every):
        reason = failed[0][1]
    else:
        shown = ", ".join(f"{s:g}" for s in every)
        reason = (
            f"the golden passes only sometimes ({len(every) - len(failed)} of {len(every)} runs; scores "
            f"{shown}); run {failed[0][0]}: {failed[0][1]}"
        )
    return CanaryCheck(eval_id=d.id, status="failed", key=key, scores=every, reason=reason)


def reference_check(d: EvalDefinition, plan: CanaryPlan, got: GradeOutcome) -> CanaryCheck:
    """A reference agent's run is the golden's run: checked like one, and a pass kept in the cache."""
    key = cache_key(d, plan)
    why = judge(d, got, plan.layers)
    if why is None:
        record_pass(d, plan, key, [score(d, got)])
        return CanaryCheck(eval_id=d.id, status="passed", key=key, scores=[score(d, got)], source="reference")
    forget(key)
    return CanaryCheck(
        eval_id=d.id, status="failed", key=key, scores=[score(d, got)], reason=why, source="reference"
    )


def merge(checks: list[CanaryCheck]) -> CanaryCheck | None:
    """One eval's canary over a job's runs: the reference agent's runs pooled (each is one golden run); the
    lanes' checks (one per place the runs executed) pooled once each. Failed if any failed."""
    if not checks:
        return None
    distinct = list({c.model_dump_json(): c for c in checks if c.source == "canary"}.values())
    pooled = distinct + [c for c in checks if c.source == "reference"]
    failed = [c for c in pooled if c.status == "failed"]
    ran = [c for c in pooled if c.status != "skipped"]
    if not ran:
        return pooled[0]
    return CanaryCheck(
        eval_id=checks[0].eval_id,
        status="failed" if failed else "passed",
        reason=failed[0].reason if failed else None,
        key=ran[0].key,
        scores=[s for c in ran for s in c.scores],
        cached=all(c.cached for c in ran),
        source=ran[0].source,
    )


def cannot_measure(c: CanaryCheck) -> str:
    return f"this machine cannot measure {c.eval_id}: {c.reason}"


# --------------------------------------------------------------------------------------------- doctor --smoke
SMOKE_STACKS = (
    ("python", ("python-flask", "python-fastapi", "python")),
    ("typescript", ("typescript-express", "typescript-nextjs", "typescript", "javascript")),
)


def smoke_evals(evals: list[EvalDefinition]) -> list[EvalDefinition]:
    """One Python and one Node eval with a golden, the cheapest stack first (Flask, Express: no build
    step).
    """
    chosen: list[EvalDefinition] = []
    for language, stacks in SMOKE_STACKS:
        fits = [
            e
            for e in evals
            if e.golden_dir is not None
            and kind_of(e).canary_skip(e) is None
            and (e.language == language or (language == "typescript" and e.language == "javascript"))
        ]
        fits.sort(
            key=lambda e: (
                stacks.index(e.stack) if e.stack in stacks else len(stacks),
                kind_of(e).smoke_order,
                len(e.id),
                e.id,
            )
        )
        chosen.extend(fits[:1])
    return chosen


def smoke(evals: list[EvalDefinition], *, isolation: str, runs: int = 1) -> list[CanaryCheck]:
    """The canary of each eval as a job with the default options would run it (both layers, the emulator, the
    host backend), the evals at once; a cached pass costs nothing."""
    from concurrent.futures import ThreadPoolExecutor

    from skillassay.isolation.run_policy import run_policy
    from skillassay.services import service_class

    plan = CanaryPlan(runs=runs, isolation=isolation)
    emulator: Service | None = None
    if any(e.has_sandbox for e in evals):
        emulator = service_class("seam")(async_delay=0.5, automation_delay=0.5).start(
            host="127.0.0.1", port=0
        )
    try:
        with tempfile.TemporaryDirectory(prefix="skillassay-doctor-") as results:

            def one(d: EvalDefinition) -> CanaryCheck:
                return check(d, plan, policy=run_policy(isolation, d, Path(results)), emulator=emulator)

            with ThreadPoolExecutor(max_workers=max(1, len(evals))) as pool:
                return list(pool.map(one, evals))
    finally:
        if emulator is not None:
            emulator.stop()
