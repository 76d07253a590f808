"""Loads native agent-eval definitions (``evals/agent-evals/<id>.toml``) into EvalDefinition.

The format is ``skillassay.definitions.agent_eval.AgentEvalFile`` (documented in docs/agent-evals.md and
docs/schema/agent-eval.schema.json). Every problem found is reported at once, each with the file and a JSON
pointer.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from skillassay.definitions.agent_eval import (
    DETECTORS_GROUP,
    GRADERS_GROUP,
    PLUGIN_TAG,
    AgentEvalFile,
    Criterion,
    ForbiddenBehaviour,
    HiddenTestsOptions,
    known_kinds,
)
from skillassay.definitions.jsonfile import MAX_DEPTH, pointer, read_text, too_deep
from skillassay.definitions.loader import GOLDEN_DIR, load_controls
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import DefinitionError, Problem

FIXTURES_DIR = "fixtures"


def hidden_tests_dir(definition: EvalDefinition, options: HiddenTestsOptions) -> Path:
    """Hidden tests live beside the definition, never in the fixture the agent sees."""
    rel = options.path or f"{definition.id}/hidden_tests"
    return definition.source.parent / rel


def transcript_file(control_dir: Path) -> Path:
    """``test_controls/<name>/`` -> ``test_controls/<name>.transcript.json`` (``test_golden.transcript.json``
    too)."""
    return control_dir.parent / f"{control_dir.name}.transcript.json"


def _options(options: Any) -> dict[str, Any]:
    """A shipped kind's options as the author set them; another package's, as written."""
    return options.model_dump(exclude_unset=True) if isinstance(options, BaseModel) else dict(options)


def _problems_from(exc: ValidationError, path: Path, data: dict[str, Any]) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = list(err["loc"])
        # discriminated unions add the tag to the location (criteria/0/diff/options): drop it
        if len(loc) >= 3 and loc[0] in ("criteria", "forbidden_behaviour") and isinstance(loc[1], int):
            items = data.get(loc[0]) or []
            item = items[loc[1]] if loc[1] < len(items) and isinstance(items[loc[1]], dict) else {}
            tag = item.get("grader" if loc[0] == "criteria" else "detector")
            if loc[2] in (tag, PLUGIN_TAG):
                del loc[2]
        msg = err["msg"]
        if err["type"] == "value_error":
            # our validators' own words, without pydantic's prefix
            msg = str(err.get("ctx", {}).get("error", msg))
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (not part of this format)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "union_tag_invalid":
            kinds = known_kinds(GRADERS_GROUP if loc[0] == "criteria" else DETECTORS_GROUP)
            field = "grader" if loc[0] == "criteria" else "detector"
            loc = [*loc, field]
            msg = f"unknown {field} {err['ctx'].get('tag')!r}; expected one of: {', '.join(kinds)}"
        elif err["type"] == "union_tag_not_found":
            field = "grader" if loc[0] == "criteria" else "detector"
            loc = [*loc, field]
            msg = "required field is missing"
        problems.append(Problem(path, pointer(loc), msg))
    return problems


def load_native(path: Path, suite_dir: Path) -> EvalDefinition:
    """Load one native definition. Raises DefinitionError listing every problem (file + JSON pointer)."""
    path = Path(path)
    suite_dir = Path(suite_dir)
    read: list[Problem] = []
    text = read_text(path, read)
    if text is None:
        raise DefinitionError(read)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DefinitionError([Problem(path, "", f"invalid TOML: {exc}")]) from None
    except RecursionError:
        raise DefinitionError(
            [Problem(path, "", f"nested more than {MAX_DEPTH} levels deep; no definition needs that")]
        ) from None
    if too_deep(path, data, read):
        raise DefinitionError(read)

    problems: list[Problem] = []
    try:
        spec = AgentEvalFile.model_validate(data)
    except ValidationError as exc:
        problems.extend(_problems_from(exc, path, data))
        spec = None

    # checks across fields, done even when some fields failed, so one pass shows everything
    fixture_dir = suite_dir / FIXTURES_DIR / str(data.get("fixture", ""))
    if isinstance(data.get("id"), str) and data["id"] != path.stem:
        problems.append(Problem(path, "/id", f"must match the file name ({path.stem!r})"))
    if isinstance(data.get("fixture"), str):
        if not fixture_dir.is_dir():
            problems.append(
                Problem(
                    path,
                    "/fixture",
                    f"no fixture folder {FIXTURES_DIR}/{data['fixture']}/ in the suite ({suite_dir})",
                )
            )
        elif not (fixture_dir / "app").is_dir():
            problems.append(Problem(path, "/fixture", f"the fixture {data['fixture']!r} has no app/ folder"))
    gate_ids: list[str] = []
    for i, gate in enumerate(data.get("quality_requirements") or []):
        if isinstance(gate, dict) and isinstance(gate.get("id"), str):
            if gate["id"] in gate_ids:
                problems.append(
                    Problem(path, f"/quality_requirements/{i}/id", f"gate id {gate['id']!r} used twice")
                )
            gate_ids.append(gate["id"])
    for i, gate in enumerate(data.get("quality_requirements") or []):
        for j, req in enumerate((gate.get("requires") or []) if isinstance(gate, dict) else []):
            if req not in gate_ids:
                problems.append(Problem(path, f"/quality_requirements/{i}/requires/{j}", f"no gate {req!r}"))
    for section in ("criteria", "forbidden_behaviour"):
        seen: set[str] = set()
        for i, item in enumerate(data.get(section) or []):
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("id"), str):
                if item["id"] in seen:
                    problems.append(Problem(path, f"/{section}/{i}/id", f"id {item['id']!r} used twice"))
                seen.add(item["id"])
            if section == "criteria":
                for j, g in enumerate(item.get("gates") or []):
                    if g not in gate_ids:
                        problems.append(
                            Problem(path, f"/criteria/{i}/gates/{j}", f"no quality requirement {g!r}")
                        )
                opts = item.get("options") or {}
                if item.get("grader") == "gates" and isinstance(opts, dict):
                    for j, g in enumerate(opts.get("gates") or []):
                        if g not in gate_ids:
                            problems.append(
                                Problem(
                                    path, f"/criteria/{i}/options/gates/{j}", f"no quality requirement {g!r}"
                                )
                            )
                if item.get("grader") == "hidden_tests" and isinstance(opts, dict):
                    rel = opts.get("path") or f"{data.get('id', path.stem)}/hidden_tests"
                    if isinstance(rel, str) and not (path.parent / rel).is_dir():
                        problems.append(
                            Problem(
                                path,
                                f"/criteria/{i}/options/path",
                                f"no hidden tests folder {rel}/ beside the definition",
                            )
                        )
    controls = load_controls(fixture_dir, problems) if fixture_dir.is_dir() else []

    if problems or spec is None:
        raise DefinitionError(problems)

    golden = fixture_dir / GOLDEN_DIR
    return EvalDefinition(
        id=spec.id,
        title=spec.title,
        status=spec.status,
        format="native",
        source=path,
        suite_dir=suite_dir,
        fixture_dir=fixture_dir,
        app_dir=fixture_dir / "app",
        prompt=spec.prompt,
        stack=spec.stack,
        language=spec.language,
        golden_dir=golden if golden.is_dir() else None,
        controls=controls,
        pass_threshold=spec.pass_threshold,
        max_change_size=spec.max_change_size,
        expected_behaviour=spec.expected_behaviour,
        required_concepts=spec.required_concepts,
        forbidden_behaviour=[
            ForbiddenBehaviour(
                id=f.id,
                description=f.description,
                detector=f.detector,
                options=_options(f.options),
            )
            for f in spec.forbidden_behaviour
        ],
        quality_requirements=spec.quality_requirements,
        criteria=[
            Criterion(
                id=c.id,
                description=c.description,
                weight=c.weight,
                grader=c.grader,
                gates=c.gates,
                options=_options(c.options),
            )
            for c in spec.criteria
        ],
        notes=spec.notes,
        resources=spec.resources,
        registries=spec.registries,
    )
