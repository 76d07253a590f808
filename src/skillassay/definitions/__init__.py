"""Eval definitions: one model (EvalDefinition), loaders per file format, and the definition linter."""

from skillassay.definitions.loader import load_fixture
from skillassay.definitions.models import AnswerKey, EvalDefinition, PlanEvalConfig, Rubric
from skillassay.definitions.suite import load_suite, select

__all__ = ["AnswerKey", "EvalDefinition", "PlanEvalConfig", "Rubric", "load_fixture", "load_suite", "select"]
