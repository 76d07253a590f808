"""Running a test command that is pytest and reading per-test outcomes from its JUnit XML report."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillassay.graders.process.base import CommandOutcome, run_command

Outcome = Literal["passed", "failed", "skipped"]


@dataclass
class TestRun:
    __test__ = False  # not a pytest class

    command: str
    outcome: CommandOutcome
    # (file, qualified name without parameters) -> outcomes of each collected item (parametrised: several)
    results: dict[tuple[str, str], list[Outcome]] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)  # files that failed to import
    report_found: bool = False

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


def run_pytest(command: str, cwd: Path, timeout: float, report: Path, sandbox=None) -> TestRun:
    """Run ``command`` (a pytest line) with a JUnit report (xunit1: it records each test's file); sealed in
    ``sandbox`` when given. The report is written in ``cwd`` (the only folder a sealed run may write) and moved to
    ``report``."""
    report.parent.mkdir(parents=True, exist_ok=True)
    if report.exists():
        report.unlink()
    inside = Path(cwd) / JUNIT_NAME
    if inside.exists() or inside.is_symlink():
        inside.unlink()
    full = f"{command} --junitxml={inside} -o junit_family=xunit1"
    outcome = run_command(full, cwd, timeout, sandbox=sandbox)
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
        if case.find("error") is not None and not name.startswith("test"):
            # a collection error: pytest reports the module as one failed "test"
            run.collection_errors.append(file or classname)
            continue
        if case.find("skipped") is not None:
            o: Outcome = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            o = "failed"
        else:
            o = "passed"
        run.results.setdefault((file, _qualname(file, classname, name)), []).append(o)
    return run
