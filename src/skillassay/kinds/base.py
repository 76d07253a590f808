"""The extension point for kinds of eval: what a kind tells the harness, and what the harness hands it.

An eval kind (the plan's Seam evals, native agent evals, trigger suites, another package's) is an ``EvalKind``
subclass registered under the entry-point group ``skillassay.kinds`` (``pyproject.toml``); ``kind_of`` finds
the one whose ``format`` a definition has. The harness asks the kind, never the format: what the workspace is
made from, the agent's budget, whether the change is graded, the run services it needs, how a run is graded,
how the golden is judged and how its figures read. This file declares the interface; each kind is its own
package.
"""

from __future__ import annotations

import functools
import traceback
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SkipValidation
from rich.table import Table

from skillassay import plugins
from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.graders.judge_config import JudgeConfig
from skillassay.isolation.base import Policy, Sandbox
from skillassay.kinds.mutants import DerivedMutants
from skillassay.outcomes import HarnessFailure
from skillassay.scoring.verdict import CriterionResult, Verdict
from skillassay.services import Service
from skillassay.store.records import GradeValue, RunRecord, TriggerOutcome
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillUse, TriggerBudget
from skillassay.workspace.changes import ChangeSet

GROUP = "skillassay.kinds"
Layers = Literal["rubric", "sandbox", "both"]


class SealingRecorder(Protocol):
    """Where the graders' sandboxes are recorded for the run (``orchestrator.sealing.Sealing``)."""

    def add(self, box: Sandbox) -> None: ...


class GradeRequest(BaseModel):
    """What a run hands to its kind's grading: the finished workspace and everything the graders may use."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    definition: EvalDefinition
    modified_dir: Path  # the agent's workspace (or a golden, a control, a mutant)
    run_dir: Path  # the run's folder: graders' logs and reports go here
    run_id: str
    layers: Layers = "both"
    seam: str = "emulator"  # where the app's external service is: the emulator, or a real sandbox
    backend: str = "host"
    emulator: SkipValidation[Service | None] = None
    transcript: Transcript | None = None
    judge_config: JudgeConfig | None = None
    change: ChangeSet | None = None  # fixture app -> modified_dir; computed by the kind when None (a regrade)
    policy: Policy | None = None  # seals the app and the graders' commands
    sealing: SkipValidation[SealingRecorder | None] = None  # each sandbox a grader opens is added here
    skill_use: SkillUse | None = None  # the skill under test, read from the transcript
    stopped: str | None = None  # why the harness ended the agent early (a trigger decision made), if it did
    sandbox_waits: dict[str, float] = Field(default_factory=dict)  # the sandbox's early-stop settings


class GradeOutcome(BaseModel):
    """What grading returns, whatever the kind: criteria, verdict, failures, and the kind's own figures."""

    rubric: dict[str, Any] | None = None  # the rubric layer's JSON (plan keys + evidence): rubric.json
    sandbox: dict[str, Any] | None = None  # the sandbox layer's JSON (plan keys + evidence): sandbox.json
    process: dict[str, Any] | None = None  # agent-eval graders' JSON: process.json
    # the kind's own figures, stored in run.json ``grades`` (the Seam kind: rubric_total, sandbox_total,
    # combined, api_path, api_path_correct, emulator_spec_version)
    grades: dict[str, GradeValue] = Field(default_factory=dict)
    trigger: TriggerOutcome | None = None  # a trigger run's decision
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


def failure(stage: str, exc: BaseException) -> HarnessFailure:
    """A grader's exception as the harness's failure (the run is a harness error, never zero points)."""
    return HarnessFailure(
        stage=stage,
        message=f"{type(exc).__name__}: {exc}",
        traceback="".join(traceback.format_exception(exc))[-8000:],
    )


class ControlOutcome(BaseModel):
    """A golden or negative control graded and compared with what is expected of it (``check --controls``)."""

    eval_id: str
    control: str
    matches: bool
    expected: str
    actual: str
    mismatches: list[str] = Field(default_factory=list)


class ControlCase(BaseModel):
    """A folder to grade as if an agent had left it, and what it must get."""

    name: str
    folder: Path
    expected: ControlExpectation


# --- job options (issue 25: the job asks the kind what its evals need of the job) ---------------------------


class JobAsk(BaseModel):
    """What a job is asked to do, as far as a kind may settle or refuse it (of
    ``orchestrator.config.JobOptions``: the kind sees only these)."""

    suite: Path  # the path the job was given (a suite folder, one definition, a trigger suite's file)
    skill: Path | None = None  # --skill
    baseline: bool = False  # --baseline: runs without the skill beside those with it
    runs: int | None = None  # --runs (None: not given)
    skill_mode: str = "native"  # how the skill is given: installed (native) or as the system prompt
    agent: str = "reference"


class JobSettings(BaseModel):
    """What a kind settles of a job: the skill its runs get and how many runs of each eval (None: 1)."""

    skill: Path | None = None
    runs: int | None = None


# --- job summaries and reports (issue 25, item 1: how a kind summarises and reports) ---
class Headline(BaseModel):
    """The figure ``--fail-under`` holds a job against (0-100; None: nothing to measure)."""

    name: str  # as people read it ("F1")
    value: float | None


class JobSummary(ABC):
    """A job's runs summarised the kind's own way (a trigger suite's recall, precision, F1), in place of the
    generic per-eval figures."""

    key: ClassVar[str]  # its key in the job's JSON

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON (under ``key``)."""

    @abstractmethod
    def tables(self, title: str) -> list[Table]:
        """The terminal tables (``run``, ``report``), the first titled ``title``."""

    @abstractmethod
    def headline(self) -> Headline:
        """What ``--fail-under`` is held against."""

    @property
    @abstractmethod
    def figures(self) -> object:
        """The summary's figures as the report's pages read them."""


class FigureColumn(BaseModel):
    """A figure of the kind's runs that the job's tables show in a column of its own (the Seam kind's layer
    totals), blank for the runs of other kinds."""

    key: str  # in the job summary's JSON ("rubric")
    grade: str  # the run's ``grades`` key ("rubric_total"), also the key in a run's CI JSON
    header: str  # the summary table's column ("Rubric"); the runs table's is in lower case
    headline: bool = False  # held against --fail-under before the verdict score (kept when the table is cut)


# --- per-eval columns (issue 25, apicol: a kind's own column of the job summary, from an eval's runs) ---
SummaryValue = str | int | float | bool | None  # a field a per-eval column adds to the summary's JSON


class EvalColumn(ABC):
    """A column of the job summary's per-eval table that a kind fills from an eval's scored runs and its
    definition (the Seam kind's API path: the path expected, and how many runs took it). Every eval gets
    its fields, whatever its kind (None where they say nothing; the cell then reads ``-``)."""

    header: ClassVar[str]  # the summary table's column ("API path")
    # the fields it adds to an eval's entry in the summary's JSON, each placed after the generic key named
    # (field -> the key it follows: ``{"api_path": "variant"}``)
    fields: ClassVar[dict[str, str]]

    @abstractmethod
    def values(self, definition: EvalDefinition | None, runs: Sequence[RunRecord]) -> dict[str, SummaryValue]:
        """The column's fields (``fields``' keys) of one eval and variant, from its scored runs."""

    @abstractmethod
    def cell(self, values: dict[str, SummaryValue], graded: int) -> str:
        """The table's cell (rich markup) of those values; ``graded``: the runs they were read from."""


class JobComparison(ABC):
    """Two jobs of one kind compared the kind's own way (two descriptions of a skill on one trigger
    suite)."""

    key: ClassVar[str]  # its key in the comparison's JSON
    verdict: str  # the comparison in a sentence

    @abstractmethod
    def to_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def tables(self, a: str, b: str) -> list[Table]: ...

    @abstractmethod
    def nothing_in_common(self, a: str, b: str) -> str | None:
        """Why there is nothing to compare (None: there is)."""

    @abstractmethod
    def worse(self) -> bool:
        """Whether B is worse than A beyond noise (``--fail-if-worse``)."""

    @property
    @abstractmethod
    def figures(self) -> object:
        """The comparison's figures as the report's pages read them."""


# --- listing (issue 25, item 1: ``list`` asks the kinds for their suites) ---
class SuiteListing(ABC):
    """A kind's suites found at a path, as ``list`` shows them (a trigger suite's skill, runs and prompts)."""

    @abstractmethod
    def rows(self) -> list[dict[str, Any]]:
        """One JSON row per suite (``list --json``), after the evals' rows."""

    @abstractmethod
    def tables(self, path: Path, alone: bool) -> list[Table]:
        """The terminal tables of the suites at ``path`` (none when there are none); ``alone``: ``path``
        holds only this kind's suites (the suites' own contents are shown too)."""


class EvalKind(ABC):
    """One kind of eval. Subclasses set ``name`` (the entry point's) and ``format``
    (``EvalDefinition.format``).
    """

    name: ClassVar[str]
    format: ClassVar[str]
    # the grading layers the kind's evals have beside the process graders (each total is
    # ``grades["<layer>_total"]``)
    layers: ClassVar[tuple[str, ...]] = ()
    smoke_order: ClassVar[int] = 1  # the canary's smoke test picks a kind of a lower order first (cheaper)

    def suite_files(self, definition: EvalDefinition) -> list[Path]:
        """What of its suite folder an eval reads beyond its fixture (sent to the workers that run it)."""
        return [Path(definition.source).parent]  # the definition's folder

    @abstractmethod
    def reload(self, definition: EvalDefinition, suite: Path, suite_here: Path) -> EvalDefinition:
        """The definition loaded again from a copy of its suite folder ``suite`` at ``suite_here`` (a
        worker's), so every path in it points there."""

    def shown_files(self, definition: EvalDefinition) -> list[Path]:
        """The definition's files the report's site shows beside its source."""
        return []

    def app_dir(self, definition: EvalDefinition, base: Path) -> Path:
        """The folder the run's workspace is copied from (``base``: the attempt's scratch folder)."""
        return Path(definition.app_dir)

    def default_runs(self, definition: EvalDefinition) -> int:
        """Runs of the eval a job makes when not told (``--runs``)."""
        return 1

    def agent_budget(self, definition: EvalDefinition) -> TriggerBudget | None:
        """The turns or tool calls after which the harness may stop the agent (None: only the timeout)."""
        return None

    def grades_change(self, definition: EvalDefinition) -> bool:
        """Whether the run is graded on the agent's change (so an empty change fails it)."""
        return True

    def services(self, definition: EvalDefinition, layers: Layers) -> set[str]:
        """The run services (``skillassay.services`` names) grading needs, e.g. {"seam"} for the emulator."""
        return set()

    def canary_skip(self, definition: EvalDefinition) -> str | None:
        """Why the kind's evals have no golden for the canary to grade (None: they may have one)."""
        return None

    def hashed_inputs(self, definition: EvalDefinition) -> list[Path]:
        """Files beyond the fixture and the definition that grading reads (the canary's cache key)."""
        return [Path(definition.rubric_file)] if definition.rubric_file is not None else []

    def golden_transcript(self, definition: EvalDefinition) -> Transcript | None:
        """The transcript a golden is graded with (None: grading reads none)."""
        return None

    def golden_expectation(self, definition: EvalDefinition, layers: Layers) -> ControlExpectation:
        """What the golden must get, in the canary and ``check --controls``."""
        return ControlExpectation(description="the reference solution", verdict="pass", disqualified=False)

    def score(self, outcome: GradeOutcome) -> float:
        """The outcome's score, 0-100, as the job's figures show it."""
        return round(outcome.verdict.score * 100, 2) if outcome.verdict is not None else 0.0

    def describe_score(self, definition: EvalDefinition, outcome: GradeOutcome, layers: Layers) -> str:
        """The score as people read it in one line ("82% (fail)", "rubric 100, sandbox 70")."""
        return f"{self.score(outcome):g}% ({outcome.verdict.label if outcome.verdict else 'no verdict'})"

    def compare_control(self, expected: ControlExpectation, outcome: GradeOutcome) -> list[str]:
        """What the kind's own figures miss of a control's expectation (the generic parts are checked by the
        caller)."""
        return []

    def figures(self, outcome: GradeOutcome) -> list[str]:
        """The kind's own figures of an outcome, for people ("rubric 100", "sandbox 70")."""
        return []

    def control_cases(self, definition: EvalDefinition, layers: Layers) -> list[ControlCase]:
        """The golden and controls ``check --controls`` grades and compares (``own_controls`` None)."""
        return []

    def own_controls(
        self, definition: EvalDefinition, judge_config: JudgeConfig | None
    ) -> list[ControlOutcome] | None:
        """The kind's own ``check --controls`` of ``definition`` (None: grade ``control_cases``
        generically).
        """
        return None

    # --- mutants (``check --mutants``; issue 25: a kind's own mutant classes, and how a mutant's score is
    # read) ---
    def mutant_checks(self, definition: EvalDefinition) -> bool:
        """Whether ``check --mutants`` has mutant classes for this kind."""
        return False

    # --- job options (issue 25) ---------------------------------------------------------------------------

    def brings_skill(self, suite: Path) -> bool:
        """Whether a job of ``suite`` (the path it was given, not yet loaded) takes its skill from the suite,
        so ``--baseline`` needs no ``--skill`` (the kind's ``job_settings`` decides about it)."""
        return False

    def job_settings(self, evals: list[EvalDefinition], asked: JobAsk) -> JobSettings | str:
        """The job's settings when ``evals`` (all of the job's, some of this kind) run as ``asked``, or why
        the kind refuses the job (one line, shown as ``error: ...``). Default: as asked."""
        return JobSettings(skill=asked.skill, runs=asked.runs)

    def derive_mutants(self, definition: EvalDefinition) -> DerivedMutants | None:
        """The kind's own mutants of the golden (None: the harness's agent-eval classes, derived from the
        golden's change and transcript)."""
        return None

    def mutant_layers(self, definition: EvalDefinition) -> tuple[str, ...]:
        """The kind's ``layers`` that grade a mutant of ``definition``, each on its own (none: the mutant is
        graded as a run is, by the process graders)."""
        return ()

    def mutant_conditions(self, definition: EvalDefinition) -> set[str]:
        """The conditions of the mutant classes' exceptions (``MutantClass.unless``) ``definition`` meets."""
        return set()

    def with_app_env(self, definition: EvalDefinition, env: dict[str, str]) -> EvalDefinition:
        """``definition`` with ``env`` added to the app's environment in the sandbox (the mutant schema's
        switch)."""
        raise NotImplementedError(f"eval kind {self.name!r} has no sandbox to run a mutant schema in")

    def mutant_evidence(self, layer: str, got: GradeOutcome, golden: GradeOutcome) -> list[str]:
        """What a mutant lost against the golden on one of the kind's ``layers``, check by check."""
        return []

    def mutant_waits(self, golden: GradeOutcome) -> dict[str, float] | None:
        """The sandbox's early-stop settings for the mutants' runs, from the golden's own run (None: the
        sandbox's defaults)."""
        return None

    # --- end of mutants ---

    @abstractmethod
    def grade(self, request: GradeRequest) -> GradeOutcome:
        """Grade one finished run. Raises DefinitionError for the definition's own faults; any other failure
        of the harness is recorded in the outcome's ``failures``."""

    # --- job summaries and reports (issue 25, item 1: how a kind summarises and reports) ---
    # whether the kind's jobs are summarised its own way (``job_summary``) rather than per eval
    summarises_jobs: ClassVar[bool] = False
    job_noun: ClassVar[str] = "an eval suite"  # whose job it is, in messages ("a trigger suite")
    figure_columns: ClassVar[tuple[FigureColumn, ...]] = ()  # the kind's figures in the job's tables

    def owns_runs(self, runs: Sequence[RunRecord]) -> bool:
        """Whether stored runs are of this kind (reports read results, not definitions)."""
        return False

    def job_summary(self, runs: Sequence[RunRecord]) -> JobSummary | None:
        """The job's runs summarised the kind's own way (None: the generic per-eval summary)."""
        return None

    def compare_jobs(
        self, a_runs: Sequence[RunRecord], b_runs: Sequence[RunRecord], a: str, b: str
    ) -> JobComparison | None:
        """Two jobs of this kind compared its own way (None: the generic run-for-run comparison)."""
        return None

    def failed_criterion(self, run: RunRecord) -> str | None:
        """Why a failed run of this kind failed, as the report says it (None: the generic reason)."""
        return None

    def job_findings(self, results_root: Path, runs: Sequence[RunRecord]) -> list[str]:
        """Lines the kind adds to a job's report, terminal and HTML (the Seam kind: every disagreement between
        the static reading and the run's trace); none by default."""
        return []

    def run_page_data(self, run_dir: Path) -> Any:
        """What the kind's ``run_sections`` macro shows on a run's page, read from the run's folder (None:
        nothing)."""
        return None

    def mutant_findings(self, definition: EvalDefinition, got: dict[str, GradeOutcome]) -> list[str]:
        """Lines ``check --mutants`` adds under a mutant, from its grades per layer (the Seam kind: where its
        static reading and its sandbox trace disagree); none by default."""
        return []

    # --- per-eval columns (issue 25, apicol) ---
    eval_columns: ClassVar[tuple[EvalColumn, ...]] = ()  # the kind's own columns of the job summary

    def unjudged_notes(self, ids: list[str]) -> list[str]:
        """An eval's unjudged criteria as the job summary's notes say them: a layer of the kind's that was not
        run, once, rather than each of its criteria (default: as they are)."""
        return ids

    # --- listing (issue 25, item 1: ``list`` asks the kinds for their suites) ---
    def lists_only(self, path: Path) -> bool:
        """Whether ``path`` holds only this kind's suites (``list`` shows no evals table for it)."""
        return False

    def suite_listing(self, path: Path) -> SuiteListing | None:
        """The kind's suites at or under ``path`` as ``list`` shows them (None: the kind lists its evals
        only among the others). Raises DefinitionError with every problem of every suite."""
        return None

    # --- report templates (issue 25, item 1: a kind brings its own markup to the report's pages) ---
    # the package whose ``templates/`` folder holds the kind's templates (the site loads them as
    # ``<name>/<file>``; None: the kind has none)
    template_package: ClassVar[str | None] = None
    # the kind's template there, with the macros the generic pages call when the kind summarises its jobs:
    # ``job_kind()`` (the job page's line on the kind), ``job_summary(figures)`` (``JobSummary.figures``),
    # ``job_comparison(figures, cmp, a_label, b_label)`` (``JobComparison.figures``; ``cmp``: the generic
    # comparison, for its refusal); and, where it has them (issue 25, seamtpl), ``run_figures(run)``
    # (every run page asks every kind's template), ``eval_facts(d)`` and ``eval_details(d)`` (the Evals
    # page asks the eval's kind: lines of its facts, its scoring when it declares no criteria)
    report_template: ClassVar[str | None] = None
    eval_label: ClassVar[str] = "agent eval"  # what the report's Evals page calls the kind's evals

    def template_name(self) -> str | None:
        """The kind's report template as the site's loader names it (None: it has none)."""
        if self.template_package is None or self.report_template is None:
            return None
        return f"{self.name}/{self.report_template}"


@functools.cache
def _by_format() -> dict[str, EvalKind]:
    out: dict[str, EvalKind] = {}
    for name in plugins.names(GROUP):
        kind = load_kind(name)
        out.setdefault(kind.format, kind)
    return out


@functools.cache
def load_kind(name: str) -> EvalKind:
    """The kind registered as ``name`` (an instance). Raises PluginError."""
    cls = plugins.load(GROUP, name)
    if not (isinstance(cls, type) and issubclass(cls, EvalKind)):
        raise plugins.PluginError(f"{GROUP} {name!r} is not an EvalKind subclass: {cls!r}")
    return cls()


def kind_of(definition: EvalDefinition) -> EvalKind:
    """The kind that grades ``definition``: the registered one whose ``format`` it has."""
    got = _by_format().get(definition.format)
    if got is None:
        raise plugins.PluginError(
            f"no eval kind for format {definition.format!r}; registered: {', '.join(plugins.names(GROUP))}"
        )
    return got


def registered() -> list[EvalKind]:
    """Every registered kind, one per format (job options: a job asks each whether its suite brings its
    skill)."""
    return list(_by_format().values())


# --- job summaries and reports (issue 25, item 1: how a kind summarises and reports) ---
def job_kind(runs: Sequence[RunRecord]) -> EvalKind | None:
    """The kind whose own summary a job's stored runs get (None: the generic one)."""
    return next((k for k in registered() if k.summarises_jobs and k.owns_runs(runs)), None)


def job_summary_of(runs: Sequence[RunRecord]) -> JobSummary | None:
    """A job's stored runs summarised their kind's own way (None: the generic per-eval summary)."""
    kind = job_kind(runs)
    return kind.job_summary(runs) if kind is not None else None


def job_kind_findings(results_root: Path, runs: Sequence[RunRecord]) -> list[str]:
    """What each registered kind adds to a job's report (``EvalKind.job_findings``), read from its runs."""
    return [line for kind in registered() for line in kind.job_findings(results_root, runs)]


def run_page_data(run_dir: Path) -> dict[str, Any]:
    """Kind name -> what the kind's ``run_sections`` macro shows for the run in ``run_dir``."""
    return {k.name: got for k in registered() if (got := k.run_page_data(run_dir)) is not None}


def figure_columns() -> list[FigureColumn]:
    """Every registered kind's figure columns (a job's tables show them all, whatever its kinds)."""
    out: dict[str, FigureColumn] = {}
    for kind in registered():
        for column in kind.figure_columns:
            out.setdefault(column.key, column)
    return list(out.values())


# --- per-eval columns (issue 25, apicol) ---
def unjudged_notes(ids: list[str]) -> list[str]:
    """An eval's unjudged criteria as the job summary's notes say them, each kind shortening its own."""
    for kind in registered():
        ids = kind.unjudged_notes(ids)
    return ids


def eval_columns() -> list[EvalColumn]:
    """Every registered kind's per-eval columns (a job's summary shows them all, whatever its kinds)."""
    out: dict[str, EvalColumn] = {}
    for kind in registered():
        for column in kind.eval_columns:
            out.setdefault(column.header, column)
    return list(out.values())


def headline_figure(run: RunRecord) -> float | None:
    """The run's figure held against --fail-under before its verdict score (None: it has none)."""
    return next(
        (v for c in figure_columns() if c.headline and (v := run.figure(c.grade)) is not None),
        None,
    )


def failed_criterion(run: RunRecord) -> str | None:
    """Why a failed run failed, as its kind says it (None: the generic reason)."""
    return next((text for k in registered() if (text := k.failed_criterion(run)) is not None), None)


def summary_kind(definitions: Sequence[EvalDefinition]) -> EvalKind | None:
    """The kind whose own summary a job of these definitions gets (None: the generic one)."""
    return next((k for k in map(kind_of, definitions) if k.summarises_jobs), None)


def refresh() -> None:
    """Forget the kinds found (after registering one in the running environment)."""
    _by_format.cache_clear()
    load_kind.cache_clear()
