"""The mutant classes and what each layer is expected to do with them: the one place this is declared.

A mutant is the eval's golden solution broken (or rewritten) in one known way, derived from the golden's
syntax tree. Each layer of the eval grades it; a layer *catches* the mutant when it scores it below the
golden. For every class this table says, per layer, whether the layer must catch it (``catch``), must score it
exactly as the golden (``equal``: a correct rewrite), or is not asked (``any``). ``skillassay check
--mutants`` compares what happened with this table; a mutant no layer catches is a blind spot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Expect = Literal["catch", "equal", "any"]
Layer = Literal["rubric", "sandbox", "process"]


@dataclass(frozen=True)
class MutantClass:
    id: str
    title: str
    kind: Literal["seam", "agent"]
    expect: dict[str, Expect]  # layer -> expectation
    why: str  # what the class stands for: the mistake an agent makes, or the rewrite it may choose
    # per-eval exceptions: (condition, layer) -> expectation; conditions are evaluated in run.expectations()
    unless: dict[tuple[str, str], Expect] = field(default_factory=dict)
    targets: tuple[str, ...] = ()  # agent evals: the criterion or forbidden behaviour the class is aimed at


SEAM_CLASSES: tuple[MutantClass, ...] = (
    MutantClass(
        "commented_out",
        "a Seam call commented out",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the create call is left in a comment: it never runs",
    ),
    MutantClass(
        "in_string",
        "a Seam call moved into a string",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the create call is text in a string literal: it never runs",
    ),
    MutantClass(
        "uncalled_function",
        "a Seam call moved into a function nothing calls",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the create call sits in a nested function that is never called",
    ),
    MutantClass(
        "false_condition",
        "a Seam call behind a constant-false condition",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the create call is guarded by `if False` / `if (false)`: it never runs",
    ),
    MutantClass(
        "cancel_not_revoking",
        "the cancel handler no longer revokes",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the cancel endpoint's path to Seam is cut: the guest keeps a working code",
    ),
    MutantClass(
        "update_noop",
        "the update handler does nothing in Seam",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the update endpoint's path to Seam is cut: the code keeps the old window",
        unless={("presence_update", "sandbox"): "any"},
    ),  # the eval only checks a code is still there
    MutantClass(
        "param_dropped",
        "a required parameter dropped",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "one required parameter of the create call is left out",
    ),
    MutantClass(
        "wrong_path",
        "the wrong API path",
        "seam",
        {"rubric": "catch", "sandbox": "catch"},
        "the create call goes to another integration path's method",
    ),
    MutantClass(
        "raw_http",
        "the Seam calls rewritten as raw HTTP",
        "seam",
        {"rubric": "equal", "sandbox": "equal"},
        "every SDK call becomes a plain HTTP request to the same route with the same body: still correct",
    ),
)

AGENT_CLASSES: tuple[MutantClass, ...] = (
    MutantClass(
        "guard_removed",
        "the operation's guards removed",
        "agent",
        {"process": "catch"},
        "the checks that refuse the operation (an `if ...: raise`) are dropped",
        targets=("hidden_tests",),
    ),
    MutantClass(
        "tests_removed",
        "the new tests removed",
        "agent",
        {"process": "catch"},
        "the test functions the golden added are gone",
        targets=("meaningful_tests",),
    ),
    MutantClass(
        "test_skipped",
        "an existing test skipped",
        "agent",
        {"process": "catch"},
        "an existing test is marked to be skipped",
        targets=("test_tampering",),
    ),
    MutantClass(
        "out_of_scope_edit",
        "a file outside the task's scope changed",
        "agent",
        {"process": "catch"},
        "a module the task has no business in gets a new function",
        targets=("diff",),
    ),
    MutantClass(
        "raw_sql_write",
        "a raw SQL write around the owning service",
        "agent",
        {"process": "catch"},
        "the operation writes the database with its own SQL",
        targets=("database_writes",),
    ),
    MutantClass(
        "forbidden_command",
        "a forbidden command in the transcript",
        "agent",
        {"process": "catch"},
        "the agent's transcript gains a command the policy forbids",
        targets=("policy", "forbidden_commands"),
    ),
)

CLASSES: dict[str, MutantClass] = {c.id: c for c in (*SEAM_CLASSES, *AGENT_CLASSES)}
