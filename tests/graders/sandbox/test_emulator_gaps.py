"""Issue 27 item 3: an emulator gap is never the agent's failure, and never a way out.

A failing check whose own window holds a request the emulator answered 501 or from its generic engine, on
a route a correct solution to the eval may use, makes the run the harness's failure (unscored). Any other
gap leaves the run scored, flagged in ``grades``, and counted in the arms' unscored-share guard: the attacker
(an app that sends its failing step's work to a route no correct solution needs) gains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skillassay.definitions.models import ControlExpectation
from skillassay.kinds.base import GradeOutcome, GradeRequest
from skillassay.outcomes import SERVICE_GAP, SERVICE_GAP_FIGURE
from skillassay.scoring.stats import unscored_gaps, unscored_refusal
from skillassay.seam.behaviour.gaps import emulator_gaps, eval_routes
from skillassay.seam.behaviour.result import SandboxResult
from skillassay.seam.behaviour.trace import SeamTrace, TraceRequest
from skillassay.seam.kind import SeamKind, compare_layers


def sandbox(requests: list[tuple[str | None, str, int]], failing: tuple[str, ...] = ("create",)):
    """A sandbox result whose ``failing`` checks failed (the others passed), with the app's Seam requests
    as (endpoint window, path, status)."""
    result = SandboxResult(fixture="f", run_id="r", seam_mode="emulator", backend="host")
    for name, check in result.checks.items():
        if name in failing:
            check.fail("no code set")
        else:
            check.ok()
    result.seam_trace = SeamTrace(
        requests=[
            TraceRequest(seq=i, method="POST", path=path, status=status, start_s=float(i), endpoint=window)
            for i, (window, path, status) in enumerate(requests)
        ]
    )
    return result.finish()


def graded(result: SandboxResult, api_path: str) -> GradeOutcome:
    out = GradeOutcome(sandbox=result.model_dump(mode="json"))
    SeamKind._gaps(api_path, result, out)  # what SeamKind.grade does after the sandbox ran
    SeamKind._flag_gaps(out)  # and once the run's figures are in
    return out


def test_each_path_lists_the_routes_a_correct_solution_may_use():
    codes = eval_routes("access_codes")
    assert {"/access_codes/create", "/access_codes/create_multiple", "/devices/update"} <= codes
    assert "/customers/push_data" not in codes and "/thermostats/cool" not in codes
    assert not any("/simulate/" in r for r in codes)
    assert eval_routes("lower_level") == codes  # the plan's older name of the path
    automations = eval_routes("reservation_automations")
    assert "/customers/push_data" in automations and "/access_codes/create_multiple" not in automations
    assert eval_routes("no_such_path") == frozenset()


def test_a_gap_on_the_paths_own_route_in_a_failing_check_is_the_harness_failure():
    result = sandbox(
        [("create", "/access_codes/pull_backup_access_code", 200), ("create", "/devices/list", 200)]
    )
    out = graded(result, "access_codes")
    assert len(out.failures) == 1 and out.failures[0].stage == "sandbox"
    assert "/access_codes/pull_backup_access_code" in out.failures[0].message
    assert SERVICE_GAP_FIGURE not in out.grades
    [gap] = out.sandbox["emulator_gaps"]
    assert gap["kind"] == "approximate" and gap["excused"] and gap["check"] == "create"


def test_attacker_a_route_no_correct_solution_needs_buys_nothing():
    # the app sends its create step to a thermostat route (approximate) and to Seam's console (501)
    result = sandbox(
        [("create", "/thermostats/cool", 200), ("create", "/seam/console/v1/get_resource_locator", 501)]
    )
    out = graded(result, "access_codes")
    assert out.failures == []  # scored: the run's failure is the agent's
    assert out.grades[SERVICE_GAP_FIGURE] == 2.0
    assert [g["kind"] for g in out.sandbox["emulator_gaps"]] == ["approximate", "not_implemented"]
    assert not any(g["excused"] for g in out.sandbox["emulator_gaps"])


def test_a_gap_outside_a_failing_checks_window_excuses_nothing():
    # at start-up (no window), and in the update window while only create failed
    result = sandbox(
        [(None, "/access_codes/pull_backup_access_code", 200), ("update", "/locks/configure_auto_lock", 200)]
    )
    out = graded(result, "access_codes")
    assert out.failures == [] and SERVICE_GAP_FIGURE not in out.grades
    assert "emulator_gaps" not in out.sandbox
    assert len(out.sandbox["approximate_requests"]) == 2  # shown on the run's record all the same
    # a hand-written route is no gap, whatever it answered (a family's too: create_multiple is hand-written)
    assert emulator_gaps(sandbox([("create", "/access_codes/create", 400)]), "access_codes") == []
    assert emulator_gaps(sandbox([("create", "/access_codes/create_multiple", 400)]), "access_codes") == []


@dataclass
class Run:
    eval_id: str
    run_index: int
    outcome: str = "completed"
    job_id: str = "j"
    verdict: None = None
    criteria: list = field(default_factory=list)
    grades: dict = field(default_factory=dict)

    def figure(self, name: str) -> float | None:
        value = self.grades.get(name)
        return float(value) if isinstance(value, (int, float)) else None


def test_flagged_runs_count_in_the_unscored_share_guard():
    honest = [Run("e1", i) for i in range(10)]
    # the same arm, but 3 of its runs landed their failure on a gap on purpose: still scored, yet counted
    gaming = [Run("e1", i, grades={SERVICE_GAP_FIGURE: 1.0} if i < 3 else {}) for i in range(10)]
    overall, _ = unscored_gaps(honest, gaming)
    assert overall.a.count == 0 and overall.b.unscored == {SERVICE_GAP: 3}
    refusal = unscored_refusal(overall, "A", "B", max_gap=0.1)
    assert refusal is not None and "3 service gaps" in refusal.reason
    # an unscored run is never counted twice
    both = [Run("e1", 0, outcome="harness_error", grades={SERVICE_GAP_FIGURE: 1.0})]
    assert unscored_gaps(both, both)[0].a.unscored == {"harness_error": 1}


def test_a_control_that_meets_a_gap_does_not_match():
    expected = ControlExpectation(description="golden", sandbox_total=100)
    clean = sandbox([("create", "/access_codes/create", 200)], failing=())
    assert (
        compare_layers(
            expected, GradeOutcome(sandbox=clean.model_dump(mode="json"), grades={"sandbox_total": 100.0})
        )
        == []
    )
    # the golden passes every check, but one of them leaned on the generic engine
    leaning = sandbox([("update", "/locks/configure_auto_lock", 200)], failing=())
    got = GradeOutcome(sandbox=leaning.model_dump(mode="json"), grades={"sandbox_total": 100.0})
    [problem] = compare_layers(expected, got)
    assert "emulator gap" in problem and "/locks/configure_auto_lock" in problem


def test_end_to_end_a_gap_off_the_path_is_scored_and_one_on_it_is_not(tiny, emulator, tmp_path):
    """The tiny app's create step calls an approximate route instead of creating a code: the sandbox fails
    the create check either way; only the route the access-codes path may use excuses the run."""
    kind = SeamKind()

    def grade(mode: str) -> GradeOutcome:
        d = tiny(mode)
        return kind.grade(
            GradeRequest(
                definition=d,
                modified_dir=d.app_dir,
                run_dir=tmp_path / mode,
                run_id=f"gap-{mode}",
                layers="sandbox",
                emulator=emulator,
                sandbox_waits={"quiet_after": 1.0},
            )
        )

    attacker = grade("gap_off_path")  # thermostats/cool: no correct access-codes solution calls it
    assert attacker.failures == [], attacker.errors  # scored: the failure is the agent's
    assert attacker.sandbox["checks"]["create"]["passed"] is False
    assert attacker.grades[SERVICE_GAP_FIGURE] >= 1.0
    assert {g["path"] for g in attacker.sandbox["emulator_gaps"]} == {"/thermostats/cool"}
    assert attacker.sandbox["approximate_requests"] == ["POST /thermostats/cool -> 200"]

    honest = grade("gap_on_path")  # locks/configure_auto_lock: the path's own, answered approximately
    assert [f.stage for f in honest.failures] == ["sandbox"]
    assert "/locks/configure_auto_lock" in honest.failures[0].message
    assert SERVICE_GAP_FIGURE not in honest.grades
