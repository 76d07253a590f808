"""Layer 1: grade a modified app against the pristine one, from syntax trees, with the plan's rubric."""

from __future__ import annotations

import math
from pathlib import Path

from skillassay.definitions.plan import AnswerKey, Rubric
from skillassay.errors import SkillassayError
from skillassay.graders.rubric.checks import CHECKS, PATH_SIGNATURES, Context, canonical_path, paths_taken
from skillassay.graders.rubric.models import CategoryResult, RubricResult
from skillassay.graders.rubric.project import Project
from skillassay.workspace.changes import ChangeSet, compare_trees


def floor2(x: float) -> float:
    """Scores are floored to 2 decimals (2 of 3 -> 0.66, as the plan writes it); the epsilon keeps 0.29999... at 0.3."""
    return math.floor(x * 100 + 1e-9) / 100


def grade(pristine: Path, modified: Path, answer_key: AnswerKey, rubric: Rubric, expected_api_path: str,
          change: ChangeSet | None = None) -> RubricResult:
    """Grade ``modified`` against ``pristine``. ``change``: the run's ChangeSet between the two, when the caller
    has it (computed here otherwise)."""
    pristine, modified = Path(pristine), Path(modified)
    for label, root in (("pristine", pristine), ("modified", modified)):
        if not root.is_dir():
            raise SkillassayError(f"{root}: the {label} app directory does not exist")
    api_path = canonical_path(expected_api_path)
    if api_path is None:
        raise SkillassayError(
            f"expected_api_path {expected_api_path!r} is not one of {', '.join(sorted(PATH_SIGNATURES))} (or lower_level)"
        )
    for i, category in enumerate(rubric.categories):
        if category.check not in CHECKS:
            raise SkillassayError(
                f"rubric category {category.name!r} (/categories/{i}/check): unknown check {category.check!r}; "
                f"known: {', '.join(sorted(CHECKS))}"
            )
    if change is None:
        change = compare_trees(pristine, modified)
    elif (Path(change.pristine_dir), Path(change.modified_dir)) != (pristine, modified):
        raise ValueError(f"the change given is between {change.pristine_dir} and {change.modified_dir}, "
                         f"not {pristine} and {modified}")
    changes = change
    ctx = Context(
        project=Project.load(modified, changes.written, unchanged=changes.unchanged),
        pristine=Project.load(pristine, sorted(changes.modified + changes.deleted)),
        changes=changes,
        answer_key=answer_key,
        expected_api_path=api_path,
    )
    # Look up every expected function first, so the files added by that search do not depend on the check order.
    for functions in answer_key.expected_placements.values():
        for name in functions:
            ctx.project.find_functions(name)
    categories: dict[str, CategoryResult] = {}
    for category in rubric.categories:
        raw, evidence = CHECKS[category.check](ctx)
        score = floor2(max(0.0, min(1.0, raw)))
        categories[category.name] = CategoryResult(
            score=score, weighted=round(score * category.weight, 2), check=category.check, evidence=evidence
        )
    total = round(sum(c.weighted for c in categories.values()), 2)
    return RubricResult(total=total, categories=categories, changed_files=changes.written,
                        paths_taken=paths_taken(ctx))
