"""Meaningful tests: the agent's new tests must fail on the pristine code and pass on the modified code.

New tests are test functions (by syntax tree) that did not exist before, in files matching the test globs. The
files holding them are run twice, both in the modified app's environment (so only the code differs): in a copy
of the modified workspace, and in a copy of the pristine workspace with the agent's test files (and conftest
files) laid over it. Earned: the share of new tests passing on the modified code, provided at least one of
them fails on the pristine code (tests that cannot tell the two apart earn nothing). Both runs get the
sentinel tests (``sentinels``): a report the code under test forged on either side earns nothing and
disqualifies the run.
"""

from __future__ import annotations

from skillassay.definitions.agent_eval import Criterion, MeaningfulTestsOptions
from skillassay.graders import pyast
from skillassay.graders.base import GradeResult, ProcessContext, copy_workspace, matches
from skillassay.graders.pytest_run import cannot_run, confirm_forgery, run_pytest
from skillassay.untrusted import copy_entry, make_dirs


def new_tests(ctx: ProcessContext, globs: list[str]) -> dict[str, list[str]]:
    """file -> qualified names of test functions the agent added."""
    change = ctx.change
    out: dict[str, list[str]] = {}
    for rel in change.added + change.modified:
        if not rel.endswith(".py") or not matches(rel, globs):
            continue
        before = (
            pyast.test_functions(pyast.parse(change.read(rel, "pristine"))) if rel not in change.added else {}
        )
        after = pyast.test_functions(pyast.parse(change.read(rel, "modified")))
        names = [n for n in after if n not in before]
        if names:
            out[rel] = names
    return out


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = MeaningfulTestsOptions.model_validate(criterion.options)
    added = new_tests(ctx, opts.test_globs)
    if not added:
        return GradeResult(fraction=0.0, evidence=["the agent added no tests"])
    files = " ".join(sorted(added))
    command = opts.command.replace("{files}", files)

    app = ctx.app_env("modified")
    if app.error is not None:  # the agent's change broke the install (the pristine app's installs)
        return GradeResult(fraction=0.0, evidence=[f"the new tests were not run: {app.error}"])
    modified = copy_workspace(ctx.modified_dir, ctx.work_dir / f"meaningful-{criterion.id}-modified")
    pristine = copy_workspace(ctx.pristine_dir, ctx.work_dir / f"meaningful-{criterion.id}-pristine")
    for rel in ctx.change.added + ctx.change.modified:
        if matches(rel, opts.test_globs):  # the agent's tests and their helpers, over the old code
            # as the agent left them: a link stays a link (never the host file it names), whatever was in the
            # way
            folder, _, _ = rel.rpartition("/")
            make_dirs(pristine, folder)
            copy_entry(ctx.modified_dir / rel, pristine / rel)
    with ctx.sealed("tests", modified, app) as box:
        on_modified = run_pytest(
            command,
            modified,
            opts.timeout,
            ctx.work_dir / f"meaningful-{criterion.id}-mod.xml",
            sandbox=box,
            app=app,
        )
    if forged := confirm_forgery(
        ctx, on_modified, "the new tests on the modified code", opts.command, opts.timeout
    ):
        return GradeResult(fraction=0.0, evidence=forged)
    if why := on_modified.could_not_run:
        return GradeResult(
            fraction=0.0,
            evidence=[
                cannot_run(ctx, "the new tests", why, opts.command, opts.timeout, app),
                on_modified.outcome.output[-800:],
            ],
        )
    # the same environment over the old code: a test that cannot run there fails there (its file cannot
    # import)
    with ctx.sealed("tests", pristine, app) as box:
        on_pristine = run_pytest(
            command,
            pristine,
            opts.timeout,
            ctx.work_dir / f"meaningful-{criterion.id}-pri.xml",
            sandbox=box,
            app=app,
        )
    if forged := confirm_forgery(
        ctx, on_pristine, "the new tests on the pristine code", opts.command, opts.timeout
    ):
        return GradeResult(fraction=0.0, evidence=forged)

    total = 0
    passing: list[str] = []
    failing_before: list[str] = []
    evidence = []
    for rel, names in sorted(added.items()):
        for name in names:
            total += 1
            key = f"{rel}::{name}"
            now = on_modified.outcome_of(rel, name)
            before = on_pristine.outcome_of(rel, name)
            if before is None and rel in on_pristine.collection_errors:
                before = "failed"  # the file cannot even be imported against the old code
            if now == "passed":
                passing.append(key)
            if before in ("failed", None) and now == "passed":
                failing_before.append(key)
            evidence.append(f"{key}: modified {now or 'not collected'}, pristine {before or 'not collected'}")
    if not failing_before:
        return GradeResult(
            fraction=0.0,
            evidence=[
                *evidence,
                "no new test fails on the pristine code: the tests do not detect the change",
            ],
        )
    share = len(passing) / total
    return GradeResult(
        fraction=share,
        evidence=[
            f"{len(failing_before)}/{total} new tests fail on the pristine "
            f"code; {len(passing)}/{total} pass on the modified code",
            *evidence,
        ],
    )
