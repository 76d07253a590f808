"""The parts of an agent eval: scoring criteria, forbidden behaviours, quality gates, and the options of each
grader and detector. Pure data; the graders that read them live in ``skillassay.graders``.

``Criterion``, ``ForbiddenBehaviour`` and ``QualityGate`` are what ``EvalDefinition`` holds, whatever format
an eval came from (a criterion's ``grader`` is free text there, so the plan's Seam suite can name its own
layers). The native file format (``evals/agent-evals/<id>.toml``) is ``AgentEvalFile``: stricter, with typed
options per grader, and the source of ``docs/schema/agent-eval.schema.json``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ByteSize,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from skillassay.definitions.resources import Resources

ID_PATTERN = r"^[a-z][a-z0-9_]*$"
FIXTURE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
# A prompt is what an agent is asked, word for word: a long task description is a few thousand characters.
MAX_PROMPT_CHARS = 100_000
EVAL_ID_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"

# The most an agent's change may weigh before its largest files are left out (docs/results.md, "Size"): bytes,
# or text such as "20MB", "500 KiB"
ChangeSize = Annotated[
    ByteSize,
    Field(
        gt=0,
        description="bytes of added or changed files kept and graded, e.g. "
        '"50MB"; larger files are left out and listed',
    ),
]

# Where tests live, unless a grader says otherwise.
DEFAULT_TEST_GLOBS = ["tests/**/*.py", "test/**/*.py", "**/test_*.py", "**/*_test.py", "**/conftest.py"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Id = Annotated[str, Field(pattern=ID_PATTERN, description="snake_case identifier")]
Globs = list[str]


def _compiles(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return value


def _inside(value: str) -> str:
    """A path the harness reads or writes relative to a folder it owns: never absolute, never climbing out."""
    if not value.strip():
        raise ValueError("empty path")
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        raise ValueError("an absolute path; expected a path relative to its folder")
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        raise ValueError("a path that climbs out of its folder (contains '..')")
    return value


Regex = Annotated[str, AfterValidator(_compiles)]
RelativePath = Annotated[str, AfterValidator(_inside)]


# ----------------------------------------------------------------------------- what EvalDefinition holds
class QualityGate(_Strict):
    """A command the harness runs itself in (a copy of) the modified workspace, e.g. the build or the
    tests."""

    id: Id
    command: str | list[str] = Field(description="a shell line, or an argument list run without a shell")
    description: str = ""
    kind: Literal["build", "test", "lint", "other"] = "other"
    timeout: float = Field(120.0, gt=0, description="seconds; a gate that runs longer has failed")
    unavailable_exit_codes: list[int] = Field(
        default_factory=lambda: [127],
        description="exit codes meaning 'could not be measured' rather than 'failed' (127: command not "
        "found; add 5 for pytest's 'no tests collected')",
    )
    requires: list[str] = Field(
        default_factory=list, description="gates that must pass first; otherwise not run"
    )
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, str) and not value.strip():
            raise ValueError("empty command: a gate must run something")
        if isinstance(value, list) and (not value or not value[0].strip()):
            raise ValueError("empty command: the argument list needs a program first")
        return value


class Criterion(_Strict):
    """One scoring criterion: a weight, and the grader that decides what share of it was earned."""

    id: Id
    description: str
    weight: float = Field(gt=0)
    grader: str
    options: dict[str, Any] = Field(default_factory=dict)
    gates: list[str] = Field(
        default_factory=list,
        description="gates this criterion depends on: a failed gate earns it nothing; an unmeasured one "
        "leaves it unjudged",
    )


class ForbiddenBehaviour(_Strict):
    """Something the agent must not do; observed once, the eval fails outright."""

    id: Id
    description: str
    detector: str
    options: dict[str, Any] = Field(default_factory=dict)


# ----------------------------------------------------------------------------- grader options
class DiffOptions(_Strict):
    """Checks on the change itself (pristine vs modified tree). Each option set is one check; the criterion
    earns the share of checks that hold."""

    owning_module: str | None = Field(
        None, description="the module that owns the behaviour: it must be changed"
    )
    operation: Regex | None = Field(
        None, description="regex: a new function or method matching it must be defined in the owning module"
    )
    transaction: str | None = Field(
        None,
        description="name of the owning module's transaction boundary (a context manager, e.g. "
        "'_unit_of_work' or 'conn'): the new operation must run inside a `with` on it, directly or through "
        "a method it calls",
    )
    status_module: str | None = Field(None, description="module holding the status model (an Enum)")
    status_member: Regex | None = Field(
        None, description="regex: a new Enum member matching it must be added"
    )
    scope: Globs | None = Field(None, description="globs: every changed file must match one")
    preserve_functions: bool = Field(
        False, description="functions that existed before, outside tests, must be unchanged (AST-identical)"
    )
    may_change: list[str] = Field(
        default_factory=list, description="'path::Qualified.name' functions exempt from preserve_functions"
    )
    tests_added: Globs | None = Field(
        None, description="globs: a new test function must appear in a matching file"
    )
    no_parallel_service: bool = Field(False, description="no new module duplicates the owning module's job")
    service_pattern: Regex = Field(
        r"(Service|Repository|Manager|Store)$", description="regex on new class names"
    )
    test_globs: Globs = Field(default_factory=lambda: list(DEFAULT_TEST_GLOBS))


class HiddenTestsOptions(_Strict):
    """The eval's own tests (docs/agent-evals.md, "Hidden tests"). Black-box: run by the harness's own pytest
    where they lie, calling the app in sealed child processes that return plain data. White-box (forgeable:
    the app's code runs in the judging process): copied into a copy of the modified workspace after the
    agent finished, then run there."""

    mode: Literal["white-box", "black-box"] = Field(
        "white-box",
        description="black-box: the verdict is decided by a process in which no workspace code runs (the "
        "tests "
        "reach the app through the `app` fixture); white-box: the tests import the app (forgeable by it)",
    )
    path: RelativePath | None = Field(
        None,
        description="folder of hidden tests, relative to the definition's folder "
        "(default: <id>/hidden_tests)",
    )
    dest: RelativePath = Field(
        "tests/_hidden", description="white-box: where they are copied inside the workspace copy"
    )
    command: str = Field(
        "python -m pytest -q -p no:cacheprovider {dest}",
        description="white-box: run in the copy; {dest} is filled in; a JUnit XML report is requested with "
        "--junitxml",
    )
    pythonpath: list[RelativePath] = Field(
        default_factory=lambda: ["."],
        description="black-box: the workspace's folders the app's modules are imported from in the child",
    )
    call_timeout: float = Field(30.0, gt=0, description="black-box: seconds one call of the app may take")
    timeout: float = Field(180.0, gt=0)
    partial: bool = Field(True, description="false: all hidden tests must pass to earn anything")


class MeaningfulTestsOptions(_Strict):
    """The agent's new tests must fail on the pristine code and pass on the modified code."""

    test_globs: Globs = Field(default_factory=lambda: list(DEFAULT_TEST_GLOBS))
    command: str = Field(
        "python -m pytest -q -p no:cacheprovider {files}",
        description="{files}: the test files holding new tests",
    )
    timeout: float = Field(180.0, gt=0)


ToolKindName = Literal["read", "write", "edit", "shell", "search", "skill", "other"]
_TOOL_KINDS: tuple[ToolKindName, ...] = ("read", "write", "edit", "shell", "search", "skill", "other")
JudgeInput = Literal["diff", "transcript", "final_message"]


class PolicyOptions(_Strict):
    """The agent's process, from its transcript: tool calls within the permission policy."""

    allowed_kinds: list[ToolKindName] = Field(default_factory=lambda: list(_TOOL_KINDS))
    forbidden_commands: list[Regex] = Field(
        default_factory=list, description="regexes on shell command lines"
    )
    protected_paths: Globs = Field(default_factory=list, description="files the agent must not change")
    denials_are_violations: bool = Field(
        True, description="a call the permission policy refused counts against"
    )


class GatesOptions(_Strict):
    """Share of the named quality gates that passed."""

    gates: list[str] = Field(default_factory=list, description="gate ids (default: every gate)")


class JudgeOptions(_Strict):
    """An LLM judge for what no program can decide. It must quote its evidence verbatim."""

    question: str = Field(
        description="what the judge decides, e.g. 'Does the change follow the existing architecture?'"
    )
    inputs: list[JudgeInput] = Field(default_factory=lambda: list[JudgeInput](["diff"]))
    max_chars: int = Field(60000, gt=0, description="cap on the material sent")


GRADER_OPTIONS: dict[str, type[BaseModel]] = {
    "diff": DiffOptions,
    "hidden_tests": HiddenTestsOptions,
    "meaningful_tests": MeaningfulTestsOptions,
    "policy": PolicyOptions,
    "gates": GatesOptions,
    "llm_judge": JudgeOptions,
}


# ----------------------------------------------------------------------------- detector options
class DatabaseWritesOptions(_Strict):
    """Writes to the database that bypass the owning code: shell commands in the transcript (sqlite3 CLI with
    a write statement, an inline Python script using sqlite3 with one, a script the agent wrote and ran) and
    new code outside ``owners`` holding SQL write statements."""

    owners: Globs = Field(
        default_factory=list, description="files allowed to hold SQL writes (the data layer)"
    )
    test_globs: Globs = Field(default_factory=lambda: list(DEFAULT_TEST_GLOBS))


class TamperingOptions(_Strict):
    """Pre-existing tests deleted, skipped or weakened (fewer assertions)."""

    test_globs: Globs = Field(default_factory=lambda: list(DEFAULT_TEST_GLOBS))


class ClaimsOptions(_Strict):
    """Claims of success in the final message held against what the agent ran and what the gates measured."""

    test_command: Regex = Field(
        r"\b(pytest|unittest|npm\s+(run\s+)?test|yarn\s+test|pnpm\s+test|tox|nox|make\s+test)\b",
        description="regex: a shell command that runs the tests",
    )
    build_command: Regex = Field(
        r"\b(compileall|npm\s+run\s+build|tsc|make|python\s+-m\s+build|py_compile)\b",
        description="regex: a shell command that builds",
    )


class ParallelServiceOptions(_Strict):
    """A new module duplicating the owning module's responsibility."""

    owning_module: str
    operation: Regex | None = Field(
        None, description="regex: new functions matching it outside the owner count"
    )
    service_pattern: Regex = Field(r"(Service|Repository|Manager|Store)$")
    test_globs: Globs = Field(default_factory=lambda: list(DEFAULT_TEST_GLOBS))


class CommandsOptions(_Strict):
    """Shell commands the agent must never run (regexes)."""

    patterns: list[Regex] = Field(min_length=1)


DETECTOR_OPTIONS: dict[str, type[BaseModel]] = {
    "database_writes": DatabaseWritesOptions,
    "test_tampering": TamperingOptions,
    "unsupported_claims": ClaimsOptions,
    "parallel_service": ParallelServiceOptions,
    "forbidden_commands": CommandsOptions,
}


# ----------------------------------------------------------------------------- the native file, as written
def _criterion(grader: str, options: type[BaseModel], required: bool = False) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "grader": (Literal[grader], ...),
        "options": (options, ...) if required else (options, Field(default_factory=options)),
    }
    from pydantic import create_model

    return create_model(f"{options.__name__[:-7]}Criterion", __base__=_CriterionBase, **fields)


def _forbidden(detector: str, options: type[BaseModel], required: bool = False) -> type[BaseModel]:
    from pydantic import create_model

    fields: dict[str, Any] = {
        "detector": (Literal[detector], ...),
        "options": (options, ...) if required else (options, Field(default_factory=options)),
    }
    return create_model(f"{options.__name__[:-7]}Forbidden", __base__=_ForbiddenBase, **fields)


class _CriterionBase(_Strict):
    id: Id
    description: str
    weight: float = Field(gt=0, description="points; the score is the share of the total weight earned")
    gates: list[str] = Field(default_factory=list)


class _ForbiddenBase(_Strict):
    id: Id
    description: str


_REQUIRED_OPTIONS = {"llm_judge", "parallel_service", "forbidden_commands"}


class _PluginCriterionBase(_CriterionBase):
    """A criterion graded by another package's grader (entry point ``skillassay.graders``): its options are
    checked by the grader's own ``options`` model, when it has one."""

    grader: str = Field(
        description="a grader another package registers",
        json_schema_extra={"not": {"enum": list(GRADER_OPTIONS)}},
    )
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _plugin_options(self) -> _PluginCriterionBase:
        _check_plugin_options(GRADERS_GROUP, self.grader, self.options)
        return self


class _PluginForbiddenBase(_ForbiddenBase):
    detector: str = Field(
        description="a detector another package registers",
        json_schema_extra={"not": {"enum": list(DETECTOR_OPTIONS)}},
    )
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _plugin_options(self) -> _PluginForbiddenBase:
        _check_plugin_options(DETECTORS_GROUP, self.detector, self.options)
        return self


GRADERS_GROUP = "skillassay.graders"
DETECTORS_GROUP = "skillassay.detectors"
PLUGIN_TAG = "another package's"


def _check_plugin_options(group: str, name: str, options: dict[str, Any]) -> None:
    from skillassay import plugins

    model = getattr(plugins.load(group, name), "options", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        try:
            model.model_validate(options)
        except ValidationError as exc:
            raise ValueError(
                "; ".join(f"options/{'/'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            ) from exc


def _kind_of(field: str, shipped: dict[str, type[BaseModel]], group: str) -> Any:
    """The union member for an item: its own kind when skillassay ships it, the plugin member when another
    package registered the name, else the name itself (an unknown kind, reported as such)."""

    def discriminate(value: Any) -> str | None:
        name = value.get(field) if isinstance(value, dict) else getattr(value, field, None)
        if not isinstance(name, str) or name in shipped:
            return name
        from skillassay import plugins

        return PLUGIN_TAG if plugins.registered(group, name) else name

    return Discriminator(discriminate)


def known_kinds(group: str) -> list[str]:
    """Every grader (or detector) name a definition may use: the shipped ones and other packages'."""
    from skillassay import plugins

    shipped = list(GRADER_OPTIONS if group == GRADERS_GROUP else DETECTOR_OPTIONS)
    return shipped + [n for n in plugins.names(group) if n not in shipped]


if TYPE_CHECKING:
    # what mypy sees of the tagged unions below, built at import: what every member has
    class FileCriterion(_CriterionBase):
        grader: str
        options: BaseModel | dict[str, Any]

    class FileForbidden(_ForbiddenBase):
        detector: str
        options: BaseModel | dict[str, Any]
else:
    FileCriterion = Annotated[
        Union[  # tagged members need the Union form
            (
                *(
                    Annotated[_criterion(k, m, k in _REQUIRED_OPTIONS), Tag(k)]
                    for k, m in GRADER_OPTIONS.items()
                ),
                Annotated[_PluginCriterionBase, Tag(PLUGIN_TAG)],
            )
        ],
        _kind_of("grader", GRADER_OPTIONS, GRADERS_GROUP),
    ]
    FileForbidden = Annotated[
        Union[
            (
                *(
                    Annotated[_forbidden(k, m, k in _REQUIRED_OPTIONS), Tag(k)]
                    for k, m in DETECTOR_OPTIONS.items()
                ),
                Annotated[_PluginForbiddenBase, Tag(PLUGIN_TAG)],
            )
        ],
        _kind_of("detector", DETECTOR_OPTIONS, DETECTORS_GROUP),
    ]


class AgentEvalFile(_Strict):
    """``evals/agent-evals/<id>.toml``: one agent eval."""

    model_config = ConfigDict(extra="forbid", title="skillassay agent eval")

    id: str = Field(pattern=EVAL_ID_PATTERN, description="the file's name without .toml")
    title: str
    status: Literal["experimental", "stable"] = "experimental"
    prompt: str = Field(
        min_length=1, max_length=MAX_PROMPT_CHARS, description="what the agent is asked, word for word"
    )
    fixture: str = Field(
        json_schema_extra={"pattern": FIXTURE_PATTERN},
        description="the name of a folder under evals/fixtures/ holding app/ (and test_golden/, "
        "test_controls/)",
    )
    language: Literal["python", "typescript", "javascript"] = "python"
    stack: str = "python"
    expected_behaviour: list[str] = Field(default_factory=list)
    required_concepts: list[str] = Field(default_factory=list)
    forbidden_behaviour: list[FileForbidden] = Field(default_factory=list)
    quality_requirements: list[QualityGate] = Field(default_factory=list)
    criteria: list[FileCriterion] = Field(min_length=1)
    pass_threshold: float = Field(0.8, ge=0, le=1, description="share of the available weight needed to pass")
    max_change_size: ChangeSize | None = None
    notes: str | None = None
    registries: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9*.\-]+(:\d+)?$")]] | None = Field(
        None,
        description="hosts the agent and the app's install may reach through skillassay's egress proxy, "
        "replacing the stack's registries (python: pypi.org, files.pythonhosted.org; typescript: "
        "registry.npmjs.org); a name, host:port or *.domain (docs/sealing.md)",
    )
    resources: Resources = Field(
        default_factory=Resources, description="what one run needs where it executes (default 1 CPU)"
    )

    @field_validator("fixture")
    @classmethod
    def _fixture_name(cls, value: str) -> str:
        if not re.fullmatch(FIXTURE_PATTERN, value):
            raise ValueError(
                "expected the name of a folder under fixtures/ (letters, digits, '_', '.', '-'), not a path"
            )
        return value


SCHEMA_PATH = "docs/schema/agent-eval.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON schema of ``AgentEvalFile`` (committed as docs/schema/agent-eval.schema.json; a test keeps the
    two in step; regenerate with ``python -c "import json; from skillassay.definitions.agent_eval import
    json_schema; print(json.dumps(json_schema(), indent=2))" > docs/schema/agent-eval.schema.json``). A TOML
    file, read with tomllib, validates against it."""
    schema = AgentEvalFile.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://skillassay.invalid/schema/agent-eval.schema.json",
        "description": "An agent eval of skillassay: evals/agent-evals/<id>.toml. See docs/agent-evals.md.",
        **schema,
    }
