"""Every check a definition must pass before anything runs it: the one validation path of ``check`` and
``run``.

Loading (``native``, a format's loader) catches missing files, invalid JSON/TOML and fields of the wrong
shape; the checks here catch what a schema cannot, for every format: a missing golden solution, folders that
are symlinks out of the suite, hidden tests outside the definition's folder. A format's own checks (the Seam
wing's: rubric checks, answer keys against the SDK surface and the API spec, endpoints, Dockerfiles) come with
its ``DefinitionFormat`` (``definitions/formats.py``).

``inspect`` returns the definition (when it loads) and every problem, errors and warnings; ``suite.load_one``
raises on the errors, ``check`` prints them all. A warning never stops a run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from skillassay.definitions.loader import CONTROLS_DIR, GOLDEN_DIR
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import DefinitionError, Problem

Defined = Callable[[Path], "set[str] | None"]


# ----------------------------------------------------------------------------- files and folders
def _escaping_links(folder: Path) -> list[str]:
    """Symlinks under ``folder`` that resolve outside it (the harness copies these folders for every run)."""
    from skillassay.workspace.skiplist import skipped_dir

    root = folder.resolve()
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        top = Path(dirpath) == folder
        dirnames[:] = [n for n in dirnames if not skipped_dir(n, top)]
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink() and not p.resolve().is_relative_to(root):
                out.append(p.relative_to(folder).as_posix())
    return out


def folder_problems(folder: Path, what: str) -> list[Problem]:
    """A folder the harness copies (app/, test_golden/, a control, hidden tests) must be a real folder of the
    suite: not a symlink, and holding no symlink that leads out of it."""
    if folder.is_symlink():
        return [
            Problem(folder, "", f"{what} is a symlink (to {os.readlink(folder)}); it must be a real folder")
        ]
    if not folder.is_dir():
        return []
    return [
        Problem(folder / rel, "", f"a symlink in {what} leading outside it")
        for rel in _escaping_links(folder)
    ]


def golden_problems(fixture_dir: Path) -> list[Problem]:
    golden = fixture_dir / GOLDEN_DIR
    if not golden.is_dir() and not golden.is_symlink():
        return [
            Problem(
                golden,
                "",
                f"the golden solution is missing (expected {GOLDEN_DIR}/ in the fixture: "
                "the whole app, solved; check --controls grades it)",
            )
        ]
    return folder_problems(golden, f"the golden solution ({GOLDEN_DIR}/)")


def fixture_folder_problems(d: EvalDefinition) -> list[Problem]:
    problems = folder_problems(d.app_dir, "the pristine app (app/)")
    problems.extend(golden_problems(d.fixture_dir))
    for control in d.controls:
        problems.extend(folder_problems(control.dir, f"the control {CONTROLS_DIR}/{control.name}/"))
    return problems


def defined_functions(app_dir: Path) -> set[str] | None:
    """Names of the functions and methods the app defines, from its syntax trees (the rubric's own
    parsers).
    """
    from skillassay.languages import parser_for
    from skillassay.workspace.changes import walk

    names: set[str] = set()
    for rel_posix, info in sorted(walk(app_dir).items()):
        path = app_dir / rel_posix
        if not stat.S_ISREG(info.st_mode):
            continue  # a symlink is never followed
        rel = Path(rel_posix)
        parse = parser_for(rel.as_posix())
        if parse is None:
            continue
        module = parse(path.read_bytes(), rel.as_posix())
        for fn in module.functions:
            if fn.name:
                names.add(fn.name)
            names.add(fn.qualname)
            names.add(fn.qualname.rsplit(".", 1)[-1])
    return names


# ----------------------------------------------------------------------------- one definition
def inspect_native(source: Path, suite_dir: Path) -> tuple[EvalDefinition | None, list[Problem]]:
    """A native agent-eval definition: the definition (None when it cannot load) and every problem."""
    from skillassay.definitions.native import load_native

    try:
        d = load_native(source, suite_dir)
    except DefinitionError as exc:
        return None, list(exc.problems)
    problems = fixture_folder_problems(d)
    from skillassay.definitions.agent_eval import HiddenTestsOptions
    from skillassay.definitions.native import hidden_tests_dir

    home = source.resolve().parent
    for i, c in enumerate(d.criteria):
        if c.grader != "hidden_tests":
            continue
        options = HiddenTestsOptions.model_validate(c.options)
        folder = hidden_tests_dir(d, options)
        if options.mode == "white-box":
            problems.append(
                Problem(
                    source,
                    f"/criteria/{i}/options/mode",
                    "white-box hidden tests are forgeable: the app's code runs in the process that "
                    'decides pass or fail (set mode = "black-box", docs/agent-evals.md)',
                    "warning",
                )
            )
        if not folder.resolve().is_relative_to(home):
            problems.append(
                Problem(
                    source,
                    f"/criteria/{i}/options/path",
                    f"the hidden tests folder {folder} is outside the definition's folder",
                )
            )
        else:
            problems.extend(folder_problems(folder, "the hidden tests folder"))
    return d, problems
