"""What every format's loader shares: the app's stack from its manifests, the suite folder of a fixture, and
the negative controls beside a definition (``test_controls/<name>/`` and its ``.expected.json``)."""

from __future__ import annotations

from pathlib import Path

from skillassay import stacks
from skillassay.definitions.jsonfile import read_json, validate
from skillassay.definitions.models import Control, ControlExpectation
from skillassay.errors import Problem

GOLDEN_DIR = "test_golden"
CONTROLS_DIR = "test_controls"
CONTROL_SUFFIX = ".expected.json"


def detect_stack(app_dir: Path) -> tuple[str, str]:
    """(stack, language) from the app's manifests: what a person would look at first (``stacks.detect``)."""
    stack = stacks.detect(app_dir)
    return (stack.stack_id(app_dir), stack.language(app_dir)) if stack is not None else ("unknown", "python")


def suite_dir_of(fixture_dir: Path) -> Path:
    """evals/fixtures/<name> -> evals"""
    return fixture_dir.resolve().parent.parent


def load_controls(fixture_dir: Path, problems: list[Problem]) -> list[Control]:
    controls_dir = fixture_dir / CONTROLS_DIR
    controls: list[Control] = []
    if not controls_dir.is_dir():
        return controls
    for expected_file in sorted(controls_dir.glob(f"*{CONTROL_SUFFIX}")):
        name = expected_file.name[: -len(CONTROL_SUFFIX)]
        data = read_json(expected_file, problems)
        expected = validate(ControlExpectation, data, expected_file, problems) if data is not None else None
        control_dir = controls_dir / name
        if not control_dir.is_dir():
            problems.append(Problem(expected_file, "", f"no control folder {CONTROLS_DIR}/{name}/ beside it"))
            continue
        if expected is not None:
            controls.append(
                Control(name=name, dir=control_dir, expected_file=expected_file, expected=expected)
            )
    return controls
