"""Layer 1, the structural rubric: the plan's six checks, graded from syntax trees of the changed files.

``grade(pristine, modified, answer_key, rubric, expected_api_path) -> RubricResult``; see docs/rubric.md.
"""

from skillassay.seam.rubric.checks import CHECKS, PATH_SIGNATURES
from skillassay.seam.rubric.grade import grade
from skillassay.seam.rubric.models import CategoryResult, Finding, RubricResult

__all__ = ["CHECKS", "PATH_SIGNATURES", "CategoryResult", "Finding", "RubricResult", "grade"]
