"""Finding every eval under a path, whatever format each is written in.

A suite folder holds native agent-eval definitions (``agent-evals/<id>.toml``), trigger suites
(``trigger-evals/<id>.toml``, see ``kinds.trigger.definitions``) and the definitions of each wing's format
(``definitions/formats.py``; the Seam wing's: the plan's fixtures, ``fixtures/<name>/eval_config.json``). A
path may also name one native definition file, one trigger suite, the ``trigger-evals`` folder or one
definition of a wing's format.

Trigger suites are checked and listed with the rest, but run only when the path names them: a folder's evals
and its trigger suites measure different things (``load_suite`` gives the evals of a suite folder, or the
prompts of the trigger suites a path names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from skillassay import plugins
from skillassay.definitions.formats import formats
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import DefinitionError, Problem

NATIVE_DIR = "agent-evals"
NATIVE_SUFFIX = ".toml"
TRIGGER_DIR = "trigger-evals"


def definition_sources(path: Path) -> list[tuple[str, Path, Path]]:
    """(kind, source, suite_dir) for every definition under ``path``; kind is "native", "trigger" or the name
    of a wing's format ("plan-json")."""
    path = Path(path)
    if path.is_file() and path.suffix == NATIVE_SUFFIX and path.resolve().parent.name == TRIGGER_DIR:
        return [("trigger", path, path.resolve().parent.parent)]
    if path.is_dir() and path.resolve().name == TRIGGER_DIR:
        suites = [("trigger", f, path.resolve().parent) for f in sorted(path.glob(f"*{NATIVE_SUFFIX}"))]
        if not suites:
            raise DefinitionError(
                [Problem(path, "", f"no trigger suites (<id>{NATIVE_SUFFIX}) in this folder")]
            )
        return suites
    if path.is_file() and path.suffix == NATIVE_SUFFIX:
        return [("native", path, path.resolve().parent.parent)]
    if not path.exists():
        raise DefinitionError([Problem(path, "", "no such file or folder")])
    wings = formats()
    for form in wings:
        named = form.named(path)
        if named is not None:
            return [(form.name, *named)]
    if path.is_file():
        names = "".join(f"{form.named_as}, " for form in wings)
        raise DefinitionError(
            [
                Problem(
                    path,
                    "",
                    f"not a definition: expected a suite folder, {names.rstrip(', ')} "
                    f"or a {NATIVE_SUFFIX} definition",
                )
            ]
        )
    found: list[tuple[str, Path, Path]] = [
        (form.name, source, path) for form in wings for source in form.in_suite(path)
    ]
    native = path / NATIVE_DIR
    if native.is_dir():
        for f in sorted(native.glob(f"*{NATIVE_SUFFIX}")):
            found.append(("native", f, path))
    trigger = path / TRIGGER_DIR
    if trigger.is_dir():
        for f in sorted(trigger.glob(f"*{NATIVE_SUFFIX}")):
            found.append(("trigger", f, path))
    if not found:
        where = "".join(f"{form.where} or " for form in wings)
        raise DefinitionError(
            [
                Problem(
                    path,
                    "",
                    f"no evals found: expected {where}{NATIVE_DIR}/<id>{NATIVE_SUFFIX} below this folder",
                )
            ]
        )
    return found


def _trigger_kind() -> TriggerSource:
    """The trigger kind (``skillassay.kinds.trigger``), reached through its entry point: it reads its
    suites.
    """
    return plugins.load("skillassay.kinds", "trigger")()


class TriggerSource(Protocol):
    def problems(self, source: Path, suite_dir: Path) -> list[Problem]: ...

    def prompts(self, source: Path, suite_dir: Path) -> list[EvalDefinition]: ...


def inspect_one(kind: str, source: Path, suite_dir: Path) -> tuple[EvalDefinition | None, list[Problem]]:
    """The definition (None when it cannot load) and every problem with it, errors and warnings: the one
    validation path. ``check`` prints the problems; ``load_one`` (so ``run``, ``regrade``, ``list``)
    refuses on any error."""
    from skillassay.definitions import validation

    if kind == "trigger":  # a suite of prompts, not one eval: only its problems here (load_suite expands it)
        return None, _trigger_kind().problems(source, suite_dir)
    if kind == "native":
        return validation.inspect_native(source, suite_dir)
    from skillassay.definitions.formats import format_named

    return format_named(kind).inspect(source, suite_dir)


def load_one(kind: str, source: Path, suite_dir: Path) -> EvalDefinition:
    definition, problems = inspect_one(kind, source, suite_dir)
    errors = list(dict.fromkeys(p for p in problems if p.severity == "error"))
    if errors or definition is None:
        raise DefinitionError(errors or [Problem(source, "", "could not be loaded")])
    return definition


def load_source(kind: str, source: Path, suite_dir: Path) -> list[EvalDefinition]:
    """The evals one source holds: one, or a trigger suite's prompts (one definition each)."""
    if kind == "trigger":
        return _trigger_kind().prompts(source, suite_dir)
    return [load_one(kind, source, suite_dir)]


def source_id(kind: str, source: Path) -> str:
    """The eval id a source will load as: the fixture folder's name, or the definition file's stem (a trigger
    suite's: the prefix of its prompts' ids)."""
    if kind in ("native", "trigger"):
        return source.stem
    from skillassay.definitions.formats import format_named

    return format_named(kind).source_id(source)


def load_suite(path: Path, ids: list[str] | None = None) -> list[EvalDefinition]:
    """Every eval under ``path`` (only those named in ``ids``, when given, so one broken definition does not
    stop a run of the others). Raises DefinitionError with every problem of every definition loaded."""
    evals: list[EvalDefinition] = []
    problems: list[Problem] = []
    sources = definition_sources(path)
    # trigger suites run only when the path names them (a suite file, or the trigger-evals folder)
    named_triggers = all(kind == "trigger" for kind, _, _ in sources) and (
        Path(path).suffix == NATIVE_SUFFIX or Path(path).resolve().name == TRIGGER_DIR
    )
    sources = [s for s in sources if (s[0] == "trigger") == named_triggers]
    if not sources:
        raise DefinitionError(
            [
                Problem(
                    Path(path),
                    "",
                    "no evals found, only trigger suites: they run when named "
                    f"({TRIGGER_DIR}/<id>{NATIVE_SUFFIX})",
                )
            ]
        )
    if ids:
        prefixes = {i.split(".", 1)[0] for i in ids} if named_triggers else set(ids)
        sources = [s for s in sources if source_id(s[0], s[1]) in prefixes] or sources
    for kind, source, suite_dir in sources:
        try:
            evals.extend(load_source(kind, source, suite_dir))
        except DefinitionError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DefinitionError(list(dict.fromkeys(problems)))  # a suite's rubric.json is every fixture's
    ids = [e.id for e in evals]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise DefinitionError([Problem(Path(path), "", f"eval id used twice: {', '.join(dupes)}")])
    return evals


def select(
    evals: list[EvalDefinition], ids: list[str] | None = None, api_path: str | None = None
) -> list[EvalDefinition]:
    """The plan's filters: ``--fixtures a,b`` picks by id; ``--api-path`` filters (never overrides) by
    path.
    """
    chosen = evals
    if ids:
        known = {e.id for e in evals}
        unknown = [i for i in ids if i not in known]
        if unknown:
            import difflib

            close = [m for i in unknown for m in difflib.get_close_matches(i, sorted(known), n=1)]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise DefinitionError(
                [
                    Problem(
                        Path(evals[0].suite_dir) if evals else Path("."),
                        "",
                        f"unknown eval(s): {', '.join(unknown)}{hint}; known: {', '.join(sorted(known))}",
                    )
                ]
            )
        chosen = [e for e in chosen if e.id in ids]
    if api_path:
        from skillassay.definitions.formats import api_path_aliases

        meant = api_path_aliases().get(api_path)
        chosen = [e for e in chosen if e.api_path == api_path or (meant is not None and e.api_path == meant)]
    return chosen
