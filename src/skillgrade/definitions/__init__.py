"""Eval definitions: one model (EvalDefinition), loaders per file format, and the definition linter."""

from skillgrade.definitions.loader import load_fixture
from skillgrade.definitions.models import AnswerKey, EvalDefinition, PlanEvalConfig, Rubric
from skillgrade.definitions.suite import load_suite, select

__all__ = ["AnswerKey", "EvalDefinition", "PlanEvalConfig", "Rubric", "load_fixture", "load_suite", "select"]
