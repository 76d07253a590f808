"""Hidden tests: the eval's own tests, kept beside the definition (never in the workspace the agent sees),
copied into a copy of the modified workspace only after the agent has finished, then run in the app's own
environment. The criterion earns the share of hidden tests that pass (or, with ``partial = false``, all or
nothing)."""

from __future__ import annotations

import re
import shutil

from skillassay.definitions.agent_eval import Criterion, HiddenTestsOptions
from skillassay.definitions.native import hidden_tests_dir
from skillassay.graders.process.base import (
    GradeResult,
    HarnessFault,
    ProcessContext,
    copy_workspace,
    run_command,
)
from skillassay.graders.process.pytest_run import cannot_run, run_pytest
from skillassay.untrusted import make_dirs, remove
from skillassay.workspace.changes import walk

_MISSING = re.compile(r"No module named '([\w.]+)'")


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = HiddenTestsOptions.model_validate(criterion.options)
    source = hidden_tests_dir(ctx.definition, opts)
    if not source.is_dir():
        raise HarnessFault(f"hidden tests folder {source} is missing")
    app = ctx.app_env("modified")
    if app.error is not None:  # the agent's change broke the install (the pristine app's installs)
        return GradeResult(fraction=0.0, evidence=[f"hidden tests not run: {app.error}"])
    workdir = copy_workspace(ctx.modified_dir, ctx.work_dir / f"hidden-{criterion.id}")
    # the agent cannot pre-empt the hidden tests by creating the folder, nor send them (and the harness's removal
    # of what was there) elsewhere with a link at the folder or on its way: links in the copy are replaced
    parent, _, name = opts.dest.rstrip("/").rpartition("/")
    dest = make_dirs(workdir, parent) / name
    remove(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    command = opts.command.replace("{dest}", opts.dest)
    with ctx.sealed("tests", workdir, app) as box:
        run = run_pytest(command, workdir, opts.timeout, ctx.work_dir / f"hidden-{criterion.id}.xml", sandbox=box,
                         app=app)
    if run.outcome.timed_out:
        return GradeResult(fraction=0.0, evidence=[f"hidden tests timed out after {opts.timeout:g}s"])
    if why := run.could_not_run:
        return GradeResult(fraction=0.0, evidence=[cannot_run(ctx, "the hidden tests", why, opts.command,
                                                              opts.timeout, app), run.outcome.output[-800:]])
    prefix = opts.dest.rstrip("/") + "/"
    mine = {key: outs for key, outs in run.results.items() if key[0].startswith(prefix)}
    outcomes = [o for outs in mine.values() for o in outs]
    broken = [f for f in run.collection_errors if f.startswith(prefix)]
    _check_imports(ctx, run, broken, app)
    if not outcomes:
        if broken:
            return GradeResult(fraction=0.0, evidence=[f"collection failed in {', '.join(broken)}",
                                                       run.outcome.output[-800:]])
        # pytest ran, but not the hidden tests (the agent's pytest configuration, or a runner that cannot see them)
        return GradeResult(fraction=0.0, evidence=[cannot_run(ctx, "the hidden tests", "no hidden test ran",
                                                              opts.command, opts.timeout, app),
                                                   run.outcome.output[-800:]])
    passed = sum(o == "passed" for o in outcomes)
    failed = [f"{f}::{n}" for (f, n), outs in mine.items() if any(o != "passed" for o in outs)]
    evidence = [f"hidden tests: {passed}/{len(outcomes)} passed"] + [f"failed: {t}" for t in failed]
    evidence += [f"collection failed in {f}" for f in broken]
    share = passed / len(outcomes)
    if not opts.partial and share < 1.0:
        return GradeResult(fraction=0.0, evidence=evidence + ["all hidden tests must pass (partial = false)"])
    return GradeResult(fraction=share, evidence=evidence)


def _check_imports(ctx: ProcessContext, run, broken: list[str], app) -> None:
    """A hidden test file that cannot import a module neither the app nor the pristine app's environment provides
    is the harness's problem (the eval's tests need what the app's manifest does not install), never the agent's
    zero. A module the app has (the agent deleted or broke it) or the pristine environment has (the agent dropped
    it from the manifest) is the agent's doing."""
    missing = {m.group(1).split(".")[0] for f in broken
               if (m := _MISSING.search(run.collection_messages.get(f, "")))}
    for name in sorted(missing):
        if not _provided_on_pristine(ctx, name):
            raise HarnessFault(f"the hidden tests import {name!r}, which neither the app nor its environment "
                               f"provides ({app.describe()}): add it to the app's manifest")


def _provided_on_pristine(ctx: ProcessContext, name: str) -> bool:
    for root in (ctx.pristine_dir, ctx.modified_dir):  # a module or package of the app's own, at any depth
        for rel in walk(root):
            parts = rel.split("/")
            if name in parts[:-1] or parts[-1].startswith(f"{name}."):
                return True
    env = ctx.app_env("pristine")
    if env.venv is None:
        return False
    probe = ctx.scratch(f"import-probe-{name}")
    with ctx.sealed("tests", probe, env) as box:
        code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)"
        out = run_command(["python", "-c", code, name], probe, 60, sandbox=box, app=env)
    return out.exit_code == 0
