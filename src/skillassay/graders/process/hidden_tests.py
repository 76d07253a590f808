"""Hidden tests: the eval's own tests, kept beside the definition (never in the workspace the agent sees),
copied into a copy of the modified workspace only after the agent has finished, then run. The criterion earns
the share of hidden tests that pass (or, with ``partial = false``, all or nothing)."""

from __future__ import annotations

import shutil

from skillassay.definitions.agent_eval import Criterion, HiddenTestsOptions
from skillassay.definitions.native import hidden_tests_dir
from skillassay.graders.process.base import GradeResult, HarnessFault, ProcessContext, copy_workspace
from skillassay.graders.process.pytest_run import run_pytest
from skillassay.untrusted import make_dirs, remove


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = HiddenTestsOptions.model_validate(criterion.options)
    source = hidden_tests_dir(ctx.definition, opts)
    if not source.is_dir():
        raise HarnessFault(f"hidden tests folder {source} is missing")
    workdir = copy_workspace(ctx.modified_dir, ctx.work_dir / f"hidden-{criterion.id}")
    # the agent cannot pre-empt the hidden tests by creating the folder, nor send them (and the harness's removal
    # of what was there) elsewhere with a link at the folder or on its way: links in the copy are replaced
    parent, _, name = opts.dest.rstrip("/").rpartition("/")
    dest = make_dirs(workdir, parent) / name
    remove(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with ctx.sealed("tests", workdir) as box:
        run = run_pytest(
            opts.command.replace("{dest}", opts.dest),
            workdir,
            opts.timeout,
            ctx.work_dir / f"hidden-{criterion.id}.xml",
            sandbox=box,
        )
    if run.outcome.timed_out:
        return GradeResult(fraction=0.0, evidence=[f"hidden tests timed out after {opts.timeout:g}s"])
    if run.outcome.not_found:
        raise HarnessFault(f"could not run the hidden tests: {run.outcome.output.strip()[:500]}")
    mine = {key: outs for key, outs in run.results.items() if key[0].startswith(opts.dest.rstrip("/") + "/")}
    outcomes = [o for outs in mine.values() for o in outs]
    if not outcomes:
        why = (
            f"collection failed in {', '.join(run.collection_errors)}"
            if run.collection_errors
            else "no hidden test ran"
        )
        return GradeResult(fraction=0.0, evidence=[why, run.outcome.output[-800:]])
    passed = sum(o == "passed" for o in outcomes)
    failed = [f"{f}::{n}" for (f, n), outs in mine.items() if any(o != "passed" for o in outs)]
    evidence = [f"hidden tests: {passed}/{len(outcomes)} passed"] + [f"failed: {t}" for t in failed]
    share = passed / len(outcomes)
    if not opts.partial and share < 1.0:
        return GradeResult(fraction=0.0, evidence=evidence + ["all hidden tests must pass (partial = false)"])
    return GradeResult(fraction=share, evidence=evidence)
