"""Layer 1: grade a modified app against the pristine one, from syntax trees, with the plan's rubric."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from skillassay.errors import SkillassayError
from skillassay.seam.plan import AnswerKey, Rubric
from skillassay.seam.rubric.checks import CHECKS, PATH_SIGNATURES, Context, canonical_path, paths_taken
from skillassay.seam.rubric.models import CategoryResult, RubricResult
from skillassay.seam.rubric.project import Project, parse_app
from skillassay.workspace.changes import ChangeSet, compare_trees


def floor2(x: float) -> float:
    """Scores are floored to 2 decimals (2 of 3 -> 0.66, as the plan writes it); the epsilon keeps
    0.29999... at 0.3.
    """
    return math.floor(x * 100 + 1e-9) / 100


def grade(
    pristine: Path,
    modified: Path,
    answer_key: AnswerKey,
    rubric: Rubric,
    expected_api_path: str,
    change: ChangeSet | None = None,
    endpoints: Mapping[str, tuple[str, str]] | None = None,
) -> RubricResult:
    """Grade ``modified`` against ``pristine``. ``change``: the run's ChangeSet between the two, when the
    caller has it (computed here otherwise). ``endpoints``: phase -> (HTTP method, path) of the eval's test
    endpoints (``endpoints_of(config)``); a phase's calls count when reachable from the handler of its
    endpoint."""
    pristine, modified = Path(pristine), Path(modified)
    for label, root in (("pristine", pristine), ("modified", modified)):
        if not root.is_dir():
            raise SkillassayError(f"{root}: the {label} app directory does not exist")
    api_path = canonical_path(expected_api_path)
    if api_path is None:
        raise SkillassayError(
            f"expected_api_path {expected_api_path!r} is not one of {', '.join(sorted(PATH_SIGNATURES))} "
            "(or lower_level)"
        )
    for i, category in enumerate(rubric.categories):
        if category.check not in CHECKS:
            raise SkillassayError(
                f"rubric category {category.name!r} (/categories/{i}/check): unknown check "
                f"{category.check!r}; "
                f"known: {', '.join(sorted(CHECKS))}"
            )
    if change is None:
        change = compare_trees(pristine, modified)
    elif (Path(change.pristine_dir), Path(change.modified_dir)) != (pristine, modified):
        raise ValueError(
            f"the change given is between {change.pristine_dir} and {change.modified_dir}, "
            f"not {pristine} and {modified}"
        )
    changes = change
    # every route file is read only when the endpoints' handlers are looked for
    project = Project.load(
        modified,
        changes.written,
        unchanged=changes.unchanged,
        routes=bool(endpoints),
        names=[n for fns in answer_key.expected_placements.values() for n in fns],
    )
    # the pristine app: the unchanged files are the same parse; the others as they were
    pristine_modules = {p: m for p, m in project.modules.items() if p in project.unchanged_modules}
    pristine_modules.update(parse_app(pristine, sorted(changes.modified + changes.deleted)))
    ctx = Context(
        project=project,
        pristine=pristine_modules,
        changes=changes,
        answer_key=answer_key,
        expected_api_path=api_path,
        endpoints=dict(endpoints or {}),
    )
    categories: dict[str, CategoryResult] = {}
    for category in rubric.categories:
        raw, evidence = CHECKS[category.check](ctx)
        score = floor2(max(0.0, min(1.0, raw)))
        categories[category.name] = CategoryResult(
            score=score, weighted=round(score * category.weight, 2), check=category.check, evidence=evidence
        )
    total = round(sum(c.weighted for c in categories.values()), 2)
    return RubricResult(
        total=total, categories=categories, changed_files=changes.written, paths_taken=paths_taken(ctx)
    )


def endpoints_of(config: object) -> dict[str, tuple[str, str]]:
    """phase -> (METHOD, path) from an eval config's ``test_endpoints`` (a PlanEvalConfig or its JSON)."""
    raw = getattr(config, "test_endpoints", None)
    if raw is None and isinstance(config, Mapping):
        raw = config.get("test_endpoints")
    out: dict[str, tuple[str, str]] = {}
    for phase in ("create", "update", "cancel"):
        endpoint = getattr(raw, phase, None) if not isinstance(raw, Mapping) else raw.get(phase)
        if endpoint is None:
            continue
        method = (
            endpoint.get("method") if isinstance(endpoint, Mapping) else getattr(endpoint, "method", None)
        )
        path = endpoint.get("path") if isinstance(endpoint, Mapping) else getattr(endpoint, "path", None)
        if isinstance(method, str) and isinstance(path, str):
            out[phase] = (method.upper(), path)
    return out
