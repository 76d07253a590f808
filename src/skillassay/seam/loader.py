"""Loads the plan's fixture folders (``eval_config.json``, ``answer_key.json``, ``rubric.json``) into
EvalDefinition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from skillassay.definitions.jsonfile import read_json, validate
from skillassay.definitions.loader import GOLDEN_DIR, detect_stack, load_controls, suite_dir_of
from skillassay.definitions.resources import Resources
from skillassay.errors import DefinitionError, Problem
from skillassay.seam.config import PlanEvalConfig
from skillassay.seam.eval import SeamEval
from skillassay.seam.plan import AnswerKey, Rubric, exact

FORMAT: Literal["plan-json"] = "plan-json"
CONFIG_FILE = "eval_config.json"
ANSWER_KEY_FILE = "answer_key.json"
RUBRIC_FILE = "rubric.json"

# The Seam suite's default pass threshold: the combined score's share of 100 (agent evals default to 0.8 too).
PLAN_DEFAULT_THRESHOLD = 0.8


def load_rubric(path: Path, problems: list[Problem]) -> Rubric | None:
    data = read_json(path, problems)
    return validate(Rubric, data, path, problems, exact) if data is not None else None


def load_fixture(
    fixture_dir: Path,
    *,
    rubric_file: Path | None = None,
    problems: list[Problem] | None = None,
) -> SeamEval:
    """Load one fixture folder of the plan's format. Raises DefinitionError listing every problem found
    (or, when ``problems`` is given, appends to it and raises only if loading could not produce a model)."""
    own = problems is None
    problems = [] if problems is None else problems
    start = len(problems)
    fixture_dir = Path(fixture_dir)
    if not fixture_dir.is_dir():
        problems.append(Problem(fixture_dir, "", "fixture folder does not exist"))
        raise DefinitionError(problems[start:])
    suite_dir = suite_dir_of(fixture_dir)
    config_path = fixture_dir / CONFIG_FILE
    key_path = fixture_dir / ANSWER_KEY_FILE
    rubric_path = Path(rubric_file) if rubric_file else suite_dir / RUBRIC_FILE
    app_dir = fixture_dir / "app"

    config_data = read_json(config_path, problems)
    config = validate(PlanEvalConfig, config_data, config_path, problems) if config_data is not None else None
    key_data = read_json(key_path, problems)
    answer_key = validate(AnswerKey, key_data, key_path, problems, exact) if key_data is not None else None
    rubric = load_rubric(rubric_path, problems)
    if not app_dir.is_dir():
        problems.append(
            Problem(app_dir, "", "the pristine app folder is missing (expected app/ in the fixture)")
        )
    dockerfile = fixture_dir / "Dockerfile"
    if not dockerfile.is_file():
        problems.append(Problem(dockerfile, "", "file is missing (the plan builds and runs the app from it)"))
    golden = fixture_dir / GOLDEN_DIR
    controls = load_controls(fixture_dir, problems)

    if config is None or (own and len(problems) > start):
        raise DefinitionError(problems[start:])
    stack, language = detect_stack(app_dir) if app_dir.is_dir() else ("unknown", "python")
    return SeamEval(
        id=fixture_dir.name,
        title=config.title or f"{fixture_dir.name}: {config.expected_api_path.replace('_', ' ')}",
        status=config.status,
        format=FORMAT,
        source=config_path,
        suite_dir=suite_dir,
        fixture_dir=fixture_dir,
        app_dir=app_dir,
        prompt=config.prompt,
        api_path=config.expected_api_path,
        stack=stack,
        language=language,
        app_port=config.app_port,
        dockerfile=dockerfile if dockerfile.is_file() else None,
        golden_dir=golden if golden.is_dir() else None,
        controls=controls,
        answer_key=answer_key,
        rubric=rubric,
        rubric_file=rubric_path,
        config=config,
        pass_threshold=config.pass_threshold if config.pass_threshold is not None else PLAN_DEFAULT_THRESHOLD,
        resources=config.resources or Resources(),
        registries=config.registries,
        max_change_size=config.max_change_size,
    )
