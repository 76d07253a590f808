"""Trigger suites (``evals/trigger-evals/<id>.toml``): does the agent pick the skill up when it should, and
leave it when it should not?

A suite names the skill under test and a list of prompts, each labelled ``should_trigger`` and with a category
(``explicit``: the prompt names the skill; ``implicit``: the task matches the skill without naming it;
``contextual``: the workspace or the situation makes the skill relevant; ``negative``: the skill should stay
unused). Each prompt becomes one eval (id ``<suite>.<prompt>``) run ``runs`` times; the run's decision is read
from its transcript (``skillassay.triggers``). The format is ``TriggerSuiteFile`` (schema:
docs/schema/trigger-eval.schema.json; docs: docs/trigger-evals.md).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillassay.definitions.agent_eval import MAX_PROMPT_CHARS
from skillassay.definitions.jsonfile import MAX_DEPTH, pointer, read_text, too_deep
from skillassay.definitions.models import TRIGGER_CATEGORIES, EvalDefinition, TriggerCategory, TriggerSpec
from skillassay.errors import DefinitionError, Problem
from skillassay.skills import SkillError, load_skill
from skillassay.triggers import TriggerBudget

TRIGGER_DIR = "trigger-evals"
SUFFIX = ".toml"
FIXTURES_DIR = "fixtures"
PROMPT_ID = r"^[a-z0-9][a-z0-9_-]*$"
SUITE_ID = r"^[a-z0-9][a-z0-9_-]*$"  # no dots: "<suite>.<prompt>" must split back
NO_FIXTURE = Path(os.devnull)  # app_dir of a prompt without a fixture: nothing can be copied from it


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BudgetFile(_Strict, TriggerBudget):
    """How far each run goes (see ``skillassay.triggers.TriggerBudget``)."""


class TriggerPromptFile(_Strict):
    id: str = Field(pattern=PROMPT_ID, description="unique in the suite; the eval id is <suite>.<id>")
    prompt: str = Field(
        min_length=1, max_length=MAX_PROMPT_CHARS, description="what the agent is asked, word for word"
    )
    should_trigger: bool = Field(description="whether the agent should pick the skill up for this prompt")
    category: TriggerCategory = Field(
        description="explicit (names the skill), implicit (matches it unnamed), contextual (the workspace or "
        "situation makes it relevant), negative (should not trigger)"
    )
    fixture: str | None = Field(
        None,
        description="the fixture app the agent starts in (a folder under evals/fixtures/ holding app/); "
        'default: the suite\'s fixture, else an empty repository; "" for an empty repository',
    )
    notes: str | None = None


class TriggerSuiteFile(_Strict):
    """``evals/trigger-evals/<id>.toml``: one trigger suite."""

    model_config = ConfigDict(extra="forbid", title="skillassay trigger suite")

    id: str = Field(pattern=SUITE_ID, description="the file's name without .toml")
    title: str
    status: Literal["experimental", "stable"] = "experimental"
    skill: str = Field(min_length=1, description="the skill folder (holding SKILL.md), relative to this file")
    runs: int = Field(3, ge=1, le=100, description="runs per prompt (skillassay run --runs overrides it)")
    fixture: str | None = Field(
        None, description="the default fixture app of every prompt; default: none (an empty repository)"
    )
    budget: BudgetFile = Field(default_factory=BudgetFile)
    prompts: list[TriggerPromptFile] = Field(min_length=1)
    notes: str | None = None


class TriggerSuite(BaseModel):
    """A loaded trigger suite: its prompts as evals, ready to run."""

    id: str
    title: str
    status: str
    source: Path
    suite_dir: Path
    skill_dir: Path
    skill_name: str
    runs: int
    budget: TriggerBudget
    prompts: list[EvalDefinition]

    def categories(self) -> dict[str, int]:
        counts = dict.fromkeys(TRIGGER_CATEGORIES, 0)
        for p in self.prompts:
            counts[p.trigger.category] += 1  # type: ignore[union-attr]
        return counts


SCHEMA_PATH = "docs/schema/trigger-eval.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON schema of ``TriggerSuiteFile`` (committed as docs/schema/trigger-eval.schema.json; a test
    keeps the two in step; regenerate with ``python -c "import json; from
    skillassay.kinds.trigger.definitions import json_schema; print(json.dumps(json_schema(), indent=2))" >
    docs/schema/trigger-eval.schema.json``)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://skillassay.invalid/schema/trigger-eval.schema.json",
        "description": "A trigger suite of skillassay: evals/trigger-evals/<id>.toml. See "
        "docs/trigger-evals.md.",
        **TriggerSuiteFile.model_json_schema(),
    }


# ----------------------------------------------------------------------------- where suites are
def is_trigger_source(path: Path) -> bool:
    """A ``.toml`` file inside a ``trigger-evals`` folder, or that folder itself."""
    path = Path(path)
    if path.is_dir():
        return path.resolve().name == TRIGGER_DIR
    return path.suffix == SUFFIX and path.resolve().parent.name == TRIGGER_DIR


def trigger_sources(path: Path) -> list[tuple[Path, Path]]:
    """(suite file, suite folder) for every trigger suite at or under ``path``."""
    path = Path(path)
    if path.is_file():
        return [(path, path.resolve().parent.parent)] if is_trigger_source(path) else []
    if not path.is_dir():
        return []
    folder = path if path.resolve().name == TRIGGER_DIR else path / TRIGGER_DIR
    if not folder.is_dir():
        return []
    return [(f, folder.resolve().parent) for f in sorted(folder.glob(f"*{SUFFIX}"))]


# ----------------------------------------------------------------------------- loading and checking
def _messages(exc: ValidationError, path: Path) -> list[Problem]:
    problems = []
    for err in exc.errors():
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (not part of this format)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "literal_error" and err["loc"][-1] == "category":
            msg = f"unknown category {err.get('input')!r}; expected one of: {', '.join(TRIGGER_CATEGORIES)}"
        problems.append(Problem(path, pointer(err["loc"]), msg))
    return problems


def _fixture_problem(suite_dir: Path, name: Any, path: Path, where: str) -> Problem | None:
    if not isinstance(name, str) or name == "":
        return None
    fixture = suite_dir / FIXTURES_DIR / name
    if "/" in name or "\\" in name or name in (".", ".."):
        return Problem(path, where, f"{name!r} is not a fixture name (a folder under {FIXTURES_DIR}/)")
    if not fixture.is_dir():
        return Problem(path, where, f"no fixture folder {FIXTURES_DIR}/{name}/ in the suite ({suite_dir})")
    if not (fixture / "app").is_dir() or (fixture / "app").is_symlink():
        return Problem(path, where, f"the fixture {name!r} has no app/ folder")
    return None


def inspect_trigger(path: Path, suite_dir: Path) -> tuple[TriggerSuite | None, list[Problem]]:
    """The suite (None when it cannot load) and every problem with it, errors and warnings, each naming the
    file and the field."""
    path, suite_dir = Path(path), Path(suite_dir)
    problems: list[Problem] = []
    text = read_text(path, problems)
    if text is None:
        return None, problems
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return None, [Problem(path, "", f"invalid TOML: {exc}")]
    except RecursionError:
        return None, [
            Problem(path, "", f"nested more than {MAX_DEPTH} levels deep; no definition needs that")
        ]
    if too_deep(path, data, problems):
        return None, problems
    try:
        spec: TriggerSuiteFile | None = TriggerSuiteFile.model_validate(data)
    except ValidationError as exc:
        problems.extend(_messages(exc, path))
        spec = None

    # checks across fields, done on the raw data too, so one pass shows every problem
    if isinstance(data.get("id"), str) and data["id"] != path.stem:
        problems.append(Problem(path, "/id", f"must match the file name ({path.stem!r})"))
    skill_dir, skill_name = None, None
    if isinstance(data.get("skill"), str) and data["skill"]:
        skill_dir = (path.parent / data["skill"]).resolve()
        try:
            skill_name = load_skill(skill_dir).name
        except SkillError as exc:
            problems.append(Problem(path, "/skill", f"{data['skill']!r}: {exc}"))
    suite_fixture = data.get("fixture")
    p = _fixture_problem(suite_dir, suite_fixture, path, "/fixture")
    if p:
        problems.append(p)
    raw_prompts = data.get("prompts")
    prompts: list[object] = raw_prompts if isinstance(raw_prompts, list) else []
    seen: set[str] = set()
    positives = negatives = 0
    for i, item in enumerate(prompts):
        if not isinstance(item, dict):
            continue
        pid = item.get("id")
        if isinstance(pid, str):
            if pid in seen:
                problems.append(Problem(path, f"/prompts/{i}/id", f"prompt id {pid!r} used twice"))
            seen.add(pid)
        should, category = item.get("should_trigger"), item.get("category")
        if category == "negative" and should is True:
            problems.append(
                Problem(
                    path,
                    f"/prompts/{i}/should_trigger",
                    "a negative prompt is one the skill should not trigger on: expected false",
                )
            )
        if category == "explicit" and should is False:
            problems.append(
                Problem(
                    path,
                    f"/prompts/{i}/should_trigger",
                    "an explicit prompt names the skill, so it should trigger: expected true (make "
                    "it a negative prompt if the skill should be left alone)",
                )
            )
        positives += should is True
        negatives += should is False
        p = _fixture_problem(suite_dir, item.get("fixture"), path, f"/prompts/{i}/fixture")
        if p:
            problems.append(p)
        if (
            skill_name
            and category in ("implicit", "negative")
            and isinstance(item.get("prompt"), str)
            and skill_name.lower() in item["prompt"].lower()
        ):
            problems.append(
                Problem(
                    path,
                    f"/prompts/{i}/prompt",
                    f"names the skill ({skill_name!r}), which makes it an explicit prompt, not {category}",
                    "warning",
                )
            )
    if prompts and not positives:
        problems.append(
            Problem(
                path, "/prompts", "no prompt should trigger the skill: recall cannot be measured", "warning"
            )
        )
    if prompts and not negatives:
        problems.append(
            Problem(
                path,
                "/prompts",
                "no prompt should leave the skill alone: precision means little without negative prompts",
                "warning",
            )
        )

    if (
        spec is None
        or skill_dir is None
        or skill_name is None
        or any(p.severity == "error" for p in problems)
    ):
        return None, problems
    evals = []
    for item in spec.prompts:
        fixture = item.fixture if item.fixture is not None else spec.fixture
        fixture = fixture or None
        fixture_dir = suite_dir / FIXTURES_DIR / fixture if fixture else NO_FIXTURE
        evals.append(
            EvalDefinition(
                id=f"{spec.id}.{item.id}",
                title=f"{spec.title}: {item.id}",
                status=spec.status,
                format="trigger",
                source=path,
                suite_dir=suite_dir,
                fixture_dir=fixture_dir,
                app_dir=fixture_dir / "app" if fixture else NO_FIXTURE,
                prompt=item.prompt,
                stack="none",
                language="python",
                notes=item.notes,
                trigger=TriggerSpec(
                    suite_id=spec.id,
                    prompt_id=item.id,
                    should_trigger=item.should_trigger,
                    category=item.category,
                    skill_dir=skill_dir,
                    budget=TriggerBudget.model_validate(spec.budget.model_dump()),
                    fixture=fixture,
                    runs=spec.runs,
                ),
            )
        )
    suite = TriggerSuite(
        id=spec.id,
        title=spec.title,
        status=spec.status,
        source=path,
        suite_dir=suite_dir,
        skill_dir=skill_dir,
        skill_name=skill_name,
        runs=spec.runs,
        budget=TriggerBudget.model_validate(spec.budget.model_dump()),
        prompts=evals,
    )
    return suite, problems


def load_trigger(path: Path, suite_dir: Path) -> TriggerSuite:
    """Load one trigger suite; raises DefinitionError with every error (file + JSON pointer)."""
    suite, problems = inspect_trigger(path, suite_dir)
    errors = [p for p in problems if p.severity == "error"]
    if errors or suite is None:
        raise DefinitionError(errors or [Problem(Path(path), "", "could not be loaded")])
    return suite


def load_triggers(path: Path) -> list[TriggerSuite]:
    """Every trigger suite at or under ``path``; raises DefinitionError with every problem of every suite."""
    suites, problems = [], []
    for source, suite_dir in trigger_sources(path):
        try:
            suites.append(load_trigger(source, suite_dir))
        except DefinitionError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DefinitionError(problems)
    return suites
