"""Running a test command that is pytest and reading per-test outcomes from its JUnit XML report."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillassay.graders.process.appenv import AppEnv
from skillassay.graders.process.base import (
    CommandOutcome,
    HarnessFault,
    ProcessContext,
    copy_workspace,
    run_command,
    startup_failure,
)

Outcome = Literal["passed", "failed", "skipped"]


@dataclass
class TestRun:
    __test__ = False  # not a pytest class

    command: str
    outcome: CommandOutcome
    # (file, qualified name without parameters) -> outcomes of each collected item (parametrised: several)
    results: dict[tuple[str, str], list[Outcome]] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)  # files that failed to import
    collection_messages: dict[str, str] = field(default_factory=dict)  # file -> the error pytest reported
    report_found: bool = False

    @property
    def could_not_run(self) -> str | None:
        """Why the test runner could not run the tests at all (the command or the runner missing from the app's
        environment, pytest stopping on a usage or internal error such as a conftest that does not import, no
        report), or None when it ran them (passing, failing or failing to import them)."""
        out = self.outcome
        if out.timed_out:
            return None
        if not self.results and (why := startup_failure(out)):
            return why
        if out.exit_code in (3, 4) and not self.results:
            return startup_failure(out, collection=True) or (
                f"pytest stopped with exit code {out.exit_code} (an internal or usage error) before running a test")
        if not self.report_found:
            return f"the test runner wrote no report (exit code {out.exit_code}): {out.output.strip()[-300:]}"
        return None

    def outcome_of(self, file: str, qualname: str) -> Outcome | None:
        """passed only when every item passed; None when the test was not collected."""
        got = self.results.get((file, qualname))
        if not got:
            return None
        if any(o == "failed" for o in got):
            return "failed"
        return "passed" if all(o == "passed" for o in got) else "skipped"

    @property
    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for outs in self.results.values():
            for o in outs:
                out[o] += 1
        return out


def _qualname(file: str, classname: str, name: str) -> str:
    base = re.sub(r"\[.*\]$", "", name)
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file.replace("/", ".")
    if classname and classname != module and classname.startswith(module + "."):
        return classname[len(module) + 1 :] + "." + base
    return base


JUNIT_NAME = ".skillassay-junit.xml"


def run_pytest(command: str, cwd: Path, timeout: float, report: Path, sandbox=None,
               app: AppEnv | None = None) -> TestRun:
    """Run ``command`` (a pytest line) with a JUnit report (xunit1: it records each test's file); sealed in
    ``sandbox`` when given, in the app's environment ``app``. The report is written in ``cwd`` (the only folder a
    sealed run may write) and moved to ``report``."""
    report.parent.mkdir(parents=True, exist_ok=True)
    if report.exists():
        report.unlink()
    inside = Path(cwd) / JUNIT_NAME
    if inside.exists() or inside.is_symlink():
        inside.unlink()
    full = f"{command} --junitxml={inside} -o junit_family=xunit1"
    outcome = run_command(full, cwd, timeout, sandbox=sandbox, app=app)
    if inside.is_file() and not inside.is_symlink():
        shutil.move(str(inside), str(report))
    run = TestRun(command=command, outcome=outcome)
    if not report.is_file():
        return run
    try:
        root = ET.parse(report).getroot()
    except ET.ParseError:
        return run
    run.report_found = True
    for case in root.iter("testcase"):
        file = (case.get("file") or "").replace("\\", "/")
        name = case.get("name") or ""
        classname = case.get("classname") or ""
        error = case.find("error")
        if error is not None and (error.get("message") == "collection failure" or not name.startswith("test")):
            # a collection error: pytest reports the module as one failed "test" (named after the module, which
            # may well start with "test")
            run.collection_errors.append(file or classname)
            run.collection_messages[file or classname] = f"{error.get('message') or ''}\n{error.text or ''}"
            continue
        if case.find("skipped") is not None:
            o: Outcome = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            o = "failed"
        else:
            o = "passed"
        run.results.setdefault((file, _qualname(file, classname, name)), []).append(o)
    return run


def runs_on_pristine(ctx: ProcessContext, command: str, timeout: float) -> tuple[bool, str]:
    """Whether the test runner of ``command`` runs on the pristine app, in the pristine app's environment, on the
    app's own tests with nothing added (``{files}``/``{dest}`` left out): (yes or no, what happened). Asked when a
    run on the modified app could not run: if the pristine app can be measured, the agent's change is why. Raises
    HarnessFault when the pristine app's environment cannot be installed. Once per command per run."""
    key = ("runs_on_pristine", command)
    if key not in ctx._cache:
        app = ctx.app_env("pristine")
        n = len([k for k in ctx._cache if isinstance(k, tuple) and k[0] == "runs_on_pristine"])
        bare = " ".join(command.replace("{files}", "").replace("{dest}", "").split())
        workdir = copy_workspace(ctx.pristine_dir, ctx.work_dir / f"pristine-runner-{n}")
        with ctx.sealed("tests", workdir, app) as box:
            run = run_pytest(bare, workdir, timeout, ctx.work_dir / f"pristine-runner-{n}.xml", sandbox=box, app=app)
        if run.outcome.timed_out:
            why = f"timed out after {timeout:g}s"
        elif run.could_not_run:
            why = run.could_not_run
        elif run.collection_errors:
            why = f"collection failed in {', '.join(run.collection_errors)}"
        else:
            why = None
        counts = run.counts
        ctx._cache[key] = (why is None, why or f"{counts['passed']} passed, {counts['failed']} failed there")
    return ctx._cache[key]


def cannot_run(ctx: ProcessContext, what: str, why: str, command: str, timeout: float, app: AppEnv) -> str:
    """``what`` could not run on the modified app (``why``): the evidence that it is the agent's doing (the pristine
    app's tests run in its own environment), or HarnessFault when the pristine app cannot be measured either."""
    ok, there = runs_on_pristine(ctx, command, timeout)
    if not ok:
        raise HarnessFault(f"could not run {what}: {why}; the test runner cannot run on the pristine app either "
                           f"({there}); the app's environment: {app.describe()}")
    return (f"{what} could not run on the modified app ({why}), while the test runner runs on the pristine app "
            f"({there}): the change made them unrunnable")
