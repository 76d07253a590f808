"""Hidden tests: the eval's own tests, kept beside the definition (never in the workspace the agent sees), run
after the agent has finished. The criterion earns the share of hidden tests that pass (or, with ``partial =
false``, all or nothing).

- ``mode = "black-box"`` (``blackbox``): the harness's own pytest runs them where they lie; they reach the app
  through the ``app`` fixture, each call a sealed child on a copy of the modified workspace answering plain
  data. No code of the workspace runs in the process that decides pass or fail.
- ``mode = "white-box"`` (a definition without ``mode``): copied into a copy of the modified workspace and run
  there in the app's environment, importing the app. Forgeable by the app's code, which runs in the same
  process (``check`` says so); the run reads no ``conftest.py`` above the hidden tests, no ini or
  ``pyproject`` options, no plugin by autoloading, and starts Python isolated (no
  ``sitecustomize``/``usercustomize``/``.pth`` of the workspace, no ``PYTHONSTARTUP``, the current folder not
  on the path).
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from skillassay.definitions.agent_eval import Criterion, HiddenTestsOptions
from skillassay.definitions.native import hidden_tests_dir
from skillassay.graders import blackbox
from skillassay.graders.base import (
    GradeResult,
    HarnessFault,
    ProcessContext,
    copy_workspace,
    run_command,
)
from skillassay.graders.pytest_run import TestRun, cannot_run, run_pytest
from skillassay.untrusted import make_dirs, remove
from skillassay.workspace.changes import walk

_MISSING = re.compile(r"No module named '([\w.]+)'")
_PYTHON_M_PYTEST = re.compile(r"^\s*(python3?)\s+-m\s+pytest\b")
INI_NAME = ".skillassay-hidden.ini"


def grade(criterion: Criterion, ctx: ProcessContext) -> GradeResult:
    opts = HiddenTestsOptions.model_validate(criterion.options)
    source = hidden_tests_dir(ctx.definition, opts)
    if not source.is_dir():
        raise HarnessFault(f"hidden tests folder {source} is missing")
    app = ctx.app_env("modified")
    if app.error is not None:  # the agent's change broke the install (the pristine app's installs)
        return GradeResult(fraction=0.0, evidence=[f"hidden tests not run: {app.error}"])
    if opts.mode == "black-box":
        return _black_box(criterion, opts, source, ctx)
    return _white_box(criterion, opts, source, ctx)


def _white_box(
    criterion: Criterion, opts: HiddenTestsOptions, source: Path, ctx: ProcessContext
) -> GradeResult:
    app = ctx.app_env("modified")
    workdir = copy_workspace(ctx.modified_dir, ctx.work_dir / f"hidden-{criterion.id}")
    # the agent cannot pre-empt the hidden tests by creating the folder, nor send them (and the harness's
    # removal of what was there) elsewhere with a link at the folder or on its way: links in the copy are
    # replaced
    parent, _, name = opts.dest.rstrip("/").rpartition("/")
    dest = make_dirs(workdir, parent) / name
    remove(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    command = _isolated(opts.command.replace("{dest}", opts.dest), workdir, dest)
    with ctx.sealed("tests", workdir, app) as box:
        run = run_pytest(
            command, workdir, opts.timeout, ctx.work_dir / f"hidden-{criterion.id}.xml", sandbox=box, app=app
        )
    if run.outcome.timed_out:
        return GradeResult(fraction=0.0, evidence=[f"hidden tests timed out after {opts.timeout:g}s"])
    if why := run.could_not_run:
        return GradeResult(
            fraction=0.0,
            evidence=[
                cannot_run(ctx, "the hidden tests", why, opts.command, opts.timeout, app),
                run.outcome.output[-800:],
            ],
        )
    prefix = opts.dest.rstrip("/") + "/"
    broken = [f for f in run.collection_errors if f.startswith(prefix)]
    _check_imports(ctx, run, broken, app)
    return _score(run, prefix, broken, opts, ctx)


def _isolated(command: str, workdir: Path, dest: Path) -> str:
    """``command`` run as the harness means it, whatever the workspace holds: Python isolated (``-I -B``) when
    it is ``python -m pytest``, no plugin autoloading, the harness's ini file (the app's folders on the
    path as its own ini put them: the workspace's top), the workspace's top as rootdir, and no conftest
    above the hidden tests. The ini file is written before anything of the workspace's runs."""
    ini = workdir / INI_NAME
    remove(ini)
    ini.write_text("[pytest]\npythonpath = .\n")
    command = _PYTHON_M_PYTEST.sub(r"\1 -I -B -m pytest", command, count=1)
    return (
        f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {command} -c {shlex.quote(str(ini))} "
        f"--rootdir {shlex.quote(str(workdir))} --confcutdir {shlex.quote(str(dest))}"
    )


def _black_box(
    criterion: Criterion, opts: HiddenTestsOptions, source: Path, ctx: ProcessContext
) -> GradeResult:
    app = ctx.app_env("modified")
    workdir = copy_workspace(ctx.modified_dir, ctx.work_dir / f"hidden-{criterion.id}")
    judge = ctx.scratch(f"hidden-{criterion.id}-judge")
    source, rootdir = source.resolve(), ctx.definition.source.parent.resolve()
    with (
        ctx.sealed("tests", workdir, app) as box,
        blackbox.Broker(box, workdir, app, list(opts.pythonpath), opts.call_timeout) as broker,
    ):
        command = blackbox.judge_command(source, rootdir, judge, broker.environment())
        run = run_pytest(command, judge, opts.timeout, ctx.work_dir / f"hidden-{criterion.id}.xml")
    if broker.harness_error is not None:
        raise HarnessFault(
            f"a call of the app by the hidden tests could not be sealed: {broker.harness_error}"
        )
    if run.outcome.timed_out:
        return GradeResult(fraction=0.0, evidence=[f"hidden tests timed out after {opts.timeout:g}s"])
    # no code of the workspace ran in the judging process: whatever stops it is the eval's or the harness's
    if why := run.could_not_run:
        raise HarnessFault(
            f"the judging process of the hidden tests could not run them: {why}\n{run.outcome.output[-800:]}"
        )
    prefix = source.relative_to(rootdir).as_posix() + "/"
    if run.collection_errors:
        raise HarnessFault(
            f"the hidden tests do not import in the judging process ({', '.join(run.collection_errors)}"
            f"): black-box tests import the app only inside scenarios run by the `app` fixture\n"
            f"{run.outcome.output[-800:]}"
        )
    notes = _failed_calls(ctx, broker, criterion)
    return _score(run, prefix, [], opts, ctx, notes)


def _failed_calls(ctx: ProcessContext, broker: blackbox.Broker, criterion: Criterion) -> list[str]:
    """Calls whose child crashed, hung or gave no answer: the agent's doing when the first of them runs on the
    pristine app (returning or raising), the harness's (HarnessFault) when it does not run there either."""
    if not broker.failures:
        return []
    request, why = broker.failures[0]
    opts = HiddenTestsOptions.model_validate(criterion.options)
    there = blackbox.runs_on_pristine(
        ctx, request, list(opts.pythonpath), opts.call_timeout, f"hidden-{criterion.id}"
    )
    if there.failed is not None:
        raise HarnessFault(
            f"a call of the app by the hidden tests failed ({why}), and the same call fails on the "
            f"pristine app too ({there.failed}): the app cannot be measured"
        )
    return [
        f"{len(broker.failures)} of {broker.calls} calls of the app failed (first: the child {why[:300]}); "
        "the same call runs on the pristine app"
    ]


def _score(
    run: TestRun,
    prefix: str,
    broken: list[str],
    opts: HiddenTestsOptions,
    ctx: ProcessContext,
    notes: list[str] | None = None,
) -> GradeResult:
    mine = {key: outs for key, outs in run.results.items() if key[0].startswith(prefix)}
    outcomes = [o for outs in mine.values() for o in outs]
    if not outcomes:
        if broken:
            return GradeResult(
                fraction=0.0,
                evidence=[f"collection failed in {', '.join(broken)}", run.outcome.output[-800:]],
            )
        if opts.mode == "black-box":
            raise HarnessFault(f"the judging process ran no hidden test: {run.outcome.output[-800:]}")
        # pytest ran, but not the hidden tests (the agent's pytest configuration, or a runner that cannot see
        # them)
        return GradeResult(
            fraction=0.0,
            evidence=[
                cannot_run(
                    ctx,
                    "the hidden tests",
                    "no hidden test ran",
                    opts.command,
                    opts.timeout,
                    ctx.app_env("modified"),
                ),
                run.outcome.output[-800:],
            ],
        )
    passed = sum(o == "passed" for o in outcomes)
    failed = [f"{f}::{n}" for (f, n), outs in mine.items() if any(o != "passed" for o in outs)]
    evidence = [f"hidden tests: {passed}/{len(outcomes)} passed"] + [f"failed: {t}" for t in failed]
    evidence += [f"collection failed in {f}" for f in broken] + (notes or [])
    share = passed / len(outcomes)
    if not opts.partial and share < 1.0:
        return GradeResult(fraction=0.0, evidence=[*evidence, "all hidden tests must pass (partial = false)"])
    return GradeResult(fraction=share, evidence=evidence)


def _check_imports(ctx: ProcessContext, run, broken: list[str], app) -> None:
    """A hidden test file that cannot import a module neither the app nor the pristine app's environment
    provides is the harness's problem (the eval's tests need what the app's manifest does not install),
    never the agent's zero. A module the app has (the agent deleted or broke it) or the pristine
    environment has (the agent dropped it from the manifest) is the agent's doing."""
    missing = {
        m.group(1).split(".")[0] for f in broken if (m := _MISSING.search(run.collection_messages.get(f, "")))
    }
    for name in sorted(missing):
        if not _provided_on_pristine(ctx, name):
            raise HarnessFault(
                f"the hidden tests import {name!r}, which neither the app nor its environment "
                f"provides ({app.describe()}): add it to the app's manifest"
            )


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
