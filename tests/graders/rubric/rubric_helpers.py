"""Helpers: write a small pristine app and a modified copy into tmp_path, grade them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from skillassay.seam.plan import AnswerKey, Rubric, RubricCategory
from skillassay.seam.rubric import grade

REPO = Path(__file__).resolve().parents[3]

PLAN_RUBRIC = Rubric(
    categories=[
        RubricCategory(name="api_path_selection", weight=15, check="api_path_match"),
        RubricCategory(name="file_targeting", weight=20, check="files_modified_match"),
        RubricCategory(name="integration_placement", weight=20, check="calls_in_expected_functions"),
        RubricCategory(name="api_correctness", weight=20, check="required_params_present"),
        RubricCategory(name="lifecycle_completeness", weight=15, check="all_handlers_modified"),
        RubricCategory(name="webhook_setup", weight=10, check="webhook_route_added"),
    ]
)

RA_KEY = AnswerKey(
    expected_files_modified=[],
    expected_calls={
        "create": ["customers.push_data"],
        "update": ["customers.push_data"],
        "cancel": ["customers.delete_data"],
    },
    expected_placements={
        "customers.push_data": ["createReservation", "updateReservation"],
        "customers.delete_data": ["cancelReservation"],
    },
    required_parameters={
        "push_data": ["customer_key", "reservations", "user_identities"],
        "delete_data": ["customer_key", "reservation_keys"],
    },
)

RA_KEY_PY = AnswerKey(
    expected_files_modified=[],
    expected_calls=RA_KEY.expected_calls,
    expected_placements={
        "customers.push_data": ["create_reservation", "update_reservation"],
        "customers.delete_data": ["cancel_reservation"],
    },
    required_parameters=RA_KEY.required_parameters,
)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


class App:
    """A pristine tree and a modified copy with some files replaced or added."""

    def __init__(self, tmp_path: Path, pristine: dict[str, str], changes: dict[str, str]):
        self.pristine = write_tree(tmp_path / "pristine", pristine)
        self.modified = write_tree(tmp_path / "modified", {**pristine, **changes})

    def grade(
        self,
        key: AnswerKey = RA_KEY,
        api_path: str = "reservation_automations",
        rubric: Rubric = PLAN_RUBRIC,
        endpoints: dict[str, tuple[str, str]] | None = None,
    ):
        return grade(self.pristine, self.modified, key, rubric, api_path, endpoints=endpoints)


# The shipped fixtures' test endpoints (eval_config.json test_endpoints), for apps written in their shape.
ENDPOINTS = {
    "create": ("POST", "/api/reservations"),
    "update": ("PUT", "/api/reservations/{{RESERVATION_ID}}"),
    "cancel": ("DELETE", "/api/reservations/{{RESERVATION_ID}}"),
}


def scores(result) -> dict[str, float]:
    return {name: c.score for name, c in result.categories.items()}
