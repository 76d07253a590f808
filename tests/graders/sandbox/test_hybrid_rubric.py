"""The hybrid rubric, playing the attacker with code the static reading still misjudges: a handler that
keeps the coroutine of an ``async def`` Seam helper in a variable and never awaits it (Python never runs it:
static credits it, the trace shows no request, refuted and 0), and ``getattr(self.seam.access_grants,
os.environ.get("SEAM_GRANT_OP", "create"))(...)`` (a method name read at run time: static cannot tell which,
the trace shows it sent during create, credited). One app holds both, built and driven once; a build that
fails leaves no trace, and the static reading stands; ``--layers rubric`` stays static and says so. The
styles the static reading now reads right (``asyncio.to_thread``, a coroutine dropped unawaited) are
agreement cases: both layers judge them alike."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import hybrid_php_apps as php
import hybrid_ruby_apps as ruby
import pytest
from hybrid_apps import BROKEN_DOCKERFILE, CASES, STYLES, definition, grade

from skillassay.kinds.base import GradeOutcome
from skillassay.seam.kind import SeamKind
from skillassay.seam.rubric.hybrid import TRACE_JUDGED


@pytest.fixture(scope="module")
def both(emulator, tmp_path_factory) -> GradeOutcome:
    """The app graded on both layers, once for every test here."""
    return grade(tmp_path_factory.mktemp("hybrid"), emulator)


def _cat(out: GradeOutcome, name: str) -> dict[str, Any]:
    assert out.rubric is not None
    return out.rubric["categories"][name]


def _judged(cat: dict[str, Any], words: str) -> dict[str, Any]:
    found = [f for f in cat["evidence"] if words in f["message"]]
    assert found, [f["message"] for f in cat["evidence"]]
    return found[0]


def test_the_sandbox_ran_and_its_trace_settles_the_rubric(both):
    assert both.failures == []
    assert both.rubric is not None and both.rubric["hybrid"]["applied"] is True
    trace = (both.sandbox or {})["seam_trace"]
    sent = {(r["endpoint"], r["path"]) for r in trace["requests"]}
    assert ("create", "/access_grants/create") in sent
    assert ("cancel", "/access_grants/delete") in sent
    assert not any(p == "/access_grants/update" for _, p in sent)  # the coroutine never ran


def test_a_coroutine_never_awaited_is_refuted_and_scores_zero(both):
    placement = _cat(both, "integration_placement")
    update = _judged(placement, "access_grants.update in update_reservation")
    assert update["refuted"] is True and update["ok"] is False and update["source"] == "trace"
    assert "no access_grants.update request during the update step" in update["why"]
    lifecycle = _judged(_cat(both, "lifecycle_completeness"), "update:")
    assert lifecycle["refuted"] is True and lifecycle["source"] == "trace"
    claims = {(d["category"], d["claim"]) for d in both.rubric["disagreements"]}  # type: ignore[index]
    assert ("integration_placement", "access_grants.update in update_reservation") in claims
    assert all(not d["trace"] for d in both.rubric["disagreements"] if "update" in d["claim"])  # type: ignore[index]


def test_a_method_named_at_run_time_is_credited_from_the_trace(both):
    api = _cat(both, "api_path_selection")
    assert (
        api["static_score"] == 0.0
    )  # the static reading cannot tell getattr(..., os.environ.get(...)) is create
    assert api["score"] == 1.0 and api["source"] == "trace"
    create = _judged(_cat(both, "integration_placement"), "access_grants.create in create_reservation")
    assert create["ok"] is True and create["source"] == "trace" and "credited" in create["why"]
    assert "/access_grants/create" in create["why"] and "create step" in create["why"]
    correct = _judged(_cat(both, "api_correctness"), "access_grants.create sent")
    assert correct["ok"] is True and "Seam accepted it" in correct["why"]


def test_where_both_agree_the_evidence_says_both_and_the_totals_follow(both):
    delete = _judged(_cat(both, "integration_placement"), "access_grants.delete in cancel_reservation")
    assert delete["ok"] is True and delete["source"] == "both"
    placement = _cat(both, "integration_placement")
    assert placement["score"] == 0.66  # create credited, update refuted, delete confirmed
    assert [f["source"] for f in placement["evidence"]] == ["trace", "both", "trace"]
    assert _cat(both, "file_targeting")["source"] == "static"  # the trace does not see which files changed
    rubric = both.rubric
    assert rubric is not None
    assert both.grades["rubric_total"] == rubric["total"] != rubric["static_total"]
    assert both.grades["rubric_static_total"] == rubric["static_total"]
    assert both.grades["hybrid_disagreements"] == len(rubric["disagreements"]) >= 4
    lines = next(c for c in both.criteria if c.id == "integration_placement").evidence
    assert any(line.startswith("✗ refuted: [trace]") for line in lines), lines
    assert "hybrid" in both.timings


def test_a_build_that_fails_leaves_no_trace_and_the_static_reading_stands(emulator, tmp_path):
    out = grade(Path(tempfile.mkdtemp(dir=tmp_path)), emulator, dockerfile=BROKEN_DOCKERFILE)
    assert (out.sandbox or {})["checks"]["build"]["points"] == 0
    rubric = out.rubric
    assert rubric is not None and rubric["hybrid"]["applied"] is True
    assert rubric["total"] == rubric["static_total"] and rubric["disagreements"] == []
    update = _judged(_cat(out, "integration_placement"), "access_grants.update in update_reservation")
    assert update["ok"] is True and update["source"] == "static"  # the static claim stands, unrefuted
    assert "no trace for the update step" in update["why"]


def test_layers_rubric_stays_static_and_says_so(tmp_path):
    out = grade(Path(tempfile.mkdtemp(dir=tmp_path)), None, layers="rubric")
    rubric = out.rubric
    assert rubric is not None and out.sandbox is None
    assert rubric["hybrid"] == {"applied": False, "reason": rubric["hybrid"]["reason"], "seconds": 0.0}
    assert "--layers rubric" in rubric["hybrid"]["reason"]
    assert all(c["source"] == "static" for c in rubric["categories"].values())
    assert rubric["total"] == rubric["static_total"] == out.grades["rubric_total"]
    assert json.dumps(rubric)  # stored as rubric.json


def test_check_mutants_judges_a_mutants_static_rubric_by_its_own_trace(both, tmp_path):
    """A mutant's layers are graded apart (``--layers rubric``, then ``sandbox``): its disagreements come from
    the two put together, as a run's do."""
    d, _ = definition(Path(tempfile.mkdtemp(dir=tmp_path)))
    static = grade(Path(tempfile.mkdtemp(dir=tmp_path)), None, layers="rubric")
    lines = SeamKind().mutant_findings(d, {"rubric": static, "sandbox": GradeOutcome(sandbox=both.sandbox)})
    assert any(
        line.startswith("integration_placement: access_grants.update in update_reservation")
        and "static: runs; trace (update step): not sent" in line
        for line in lines
    ), lines
    assert SeamKind().mutant_findings(d, {"rubric": static}) == []  # no sandbox layer: nothing to judge by


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_labelled_case_is_judged_as_the_app_behaves(case, both, emulator, tmp_path):
    """The hybrid's categories are each case's truth. Where the static reading alone misjudges some category,
    the trace settles it (a disagreement); where the static reading is right (``to_thread``, a coroutine
    dropped unawaited), every judgement of what runs is confirmed by the trace: ``both``."""
    styles, truth, static_misjudges = CASES[case]
    out = both if styles == STYLES else grade(tmp_path, emulator, styles=styles)
    _judged_as_it_behaves(out, truth, static_misjudges)


@pytest.fixture(scope="module")
def ruby_both(emulator, tmp_path_factory) -> GradeOutcome:
    """The Ruby app graded on both layers, once for the Ruby tests here."""
    return ruby.grade(tmp_path_factory.mktemp("hybrid-rb"), emulator)


def test_a_ruby_app_s_trace_settles_what_its_static_reading_misjudges(ruby_both):
    """Ruby, playing the attacker in its own styles: ``public_send`` of a method name read from ``ENV`` (sent:
    credited from the trace) and a block kept by ``define_singleton_method`` (never run: refuted)."""
    assert ruby_both.failures == []
    assert ruby_both.rubric is not None and ruby_both.rubric["hybrid"]["applied"] is True
    sent = {(r["endpoint"], r["path"]) for r in (ruby_both.sandbox or {})["seam_trace"]["requests"]}
    assert ("create", "/access_grants/create") in sent and ("cancel", "/access_grants/delete") in sent
    assert not any(p == "/access_grants/update" for _, p in sent)  # the kept block never ran
    update = _judged(_cat(ruby_both, "integration_placement"), "access_grants.update in update_reservation")
    assert update["refuted"] is True and update["ok"] is False and update["source"] == "trace"


@pytest.mark.parametrize("case", sorted(ruby.CASES))
def test_every_labelled_ruby_case_is_judged_as_the_app_behaves(case, ruby_both, emulator, tmp_path):
    styles, truth, static_misjudges = ruby.CASES[case]
    out = ruby_both if styles == ruby.STYLES else ruby.grade(tmp_path, emulator, styles=styles)
    _judged_as_it_behaves(out, truth, static_misjudges)


@pytest.fixture(scope="module")
def php_both(emulator, tmp_path_factory) -> GradeOutcome:
    """The PHP app graded on both layers, once for the PHP tests here."""
    return php.grade(tmp_path_factory.mktemp("hybrid-php"), emulator)


def test_a_php_app_s_trace_settles_what_its_static_reading_misjudges(php_both):
    """PHP, playing the attacker in its own styles: a method named by a variable read from the environment
    (``->{$op}(...)``: sent, credited from the trace) and a closure queued nothing drains (never run:
    refuted)."""
    assert php_both.failures == []
    assert php_both.rubric is not None and php_both.rubric["hybrid"]["applied"] is True
    sent = {(r["endpoint"], r["path"]) for r in (php_both.sandbox or {})["seam_trace"]["requests"]}
    assert ("create", "/access_grants/create") in sent and ("cancel", "/access_grants/delete") in sent
    assert not any(p == "/access_grants/update" for _, p in sent)  # the queued closure never ran
    update = _judged(_cat(php_both, "integration_placement"), "access_grants.update in update_reservation")
    assert update["refuted"] is True and update["ok"] is False and update["source"] == "trace"


@pytest.mark.parametrize("case", sorted(php.CASES))
def test_every_labelled_php_case_is_judged_as_the_app_behaves(case, php_both, emulator, tmp_path):
    styles, truth, static_misjudges = php.CASES[case]
    out = php_both if styles == php.STYLES else php.grade(tmp_path, emulator, styles=styles)
    _judged_as_it_behaves(out, truth, static_misjudges)


def _judged_as_it_behaves(out: GradeOutcome, truth: dict[str, float], static_misjudges: bool) -> None:
    assert out.failures == []
    rubric = out.rubric or {}
    cats = rubric["categories"]
    assert {name: c["score"] for name, c in cats.items()} == truth
    static = {name: c["static_score"] for name, c in cats.items()}
    if static_misjudges:
        assert static != truth and rubric["disagreements"]
    else:
        assert static == truth and rubric["disagreements"] == []
        judged = [c for c in cats.values() if c["check"] in TRACE_JUDGED]
        assert [c["source"] for c in judged] == ["both"] * len(TRACE_JUDGED)
        assert all(f["source"] == "both" for c in judged for f in c["evidence"] if "agrees" in f["why"])
        assert not any(f["refuted"] for c in judged for f in c["evidence"])
