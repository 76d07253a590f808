"""Source edits: a mutant's own source, and a *schema* holding every mutant of an eval behind a run-time
switch.

A mutant is a list of ``Edit``s on the golden's files (byte spans, replaced). For the sandbox, an app with a
build step (TypeScript: ``tsc``, ``next build``) would otherwise be built once per mutant; instead every
mutant's run-time behaviour is also written as ``Switch``es on expression spans, and all of them go into one
copy of the golden (the schema, after Untch, Offutt & Harrold's *mutant schemata*, as Stryker does for
JavaScript): built once, then started once per mutant with ``SKILLASSAY_MUTANT=<id>`` choosing which switch is
on. A switch's text must behave at run time exactly as the mutant's own source does (a commented-out call and
a call behind ``if (false)`` both become "this call does not happen"); the rubric always reads the mutant's
own source.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from skillassay import stacks
from skillassay.kinds.mutants import Edit, Mutant, Switch
from skillassay.stacks import SourceSyntax
from skillassay.workspace.changes import copy_ignore

MUTANT_ENV = "SKILLASSAY_MUTANT"
OLD = "\x00OLD\x00"  # in a Switch's form: the original text of its span (with inner switches rendered)
COND = "\x00COND\x00"  # in a Switch's form: the condition "this mutant is the active one"


class SchemaConflict(Exception):
    """Two switches overlap without one holding the other."""


def _syntax(language: str) -> SourceSyntax:
    """The syntax of a parsed language (``Module.language``), or of the files named by the extension
    ``language`` ("js"); anything else is read as the parsers read it (``stacks.syntax_for``)."""
    return stacks.syntax_of(language) or stacks.syntax_for(f"source.{language}")


def condition(language: str, mutant: str) -> str:
    """True in the app when ``mutant`` is the active one (in the stack's own syntax:
    ``SourceSyntax.env_test``).
    """
    return _syntax(language).env_is(MUTANT_ENV, mutant)


def ternary(language: str, new: str) -> str:
    """The usual switch form: ``new`` when the mutant is on, the original text otherwise."""
    return _syntax(language).choose(COND, new, OLD)


def apply(source: bytes, edits: list[Edit]) -> bytes:
    """``edits`` applied to one file's bytes (spans of the original; they must not overlap)."""
    out = source
    last = len(source) + 1
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if edit.end > last:
            raise ValueError(f"overlapping edits in {edit.file} at {edit.start}..{edit.end}")
        out = out[: edit.start] + edit.text.encode() + out[edit.end :]
        last = edit.start
    return out


def copy_app(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True, ignore=copy_ignore(src))


def materialise(golden: Path, mutant: Mutant, dest: Path) -> Path:
    """The mutant's own source: a copy of the golden with its edits applied."""
    copy_app(golden, dest)
    by_file: dict[str, list[Edit]] = {}
    for edit in mutant.edits:
        by_file.setdefault(edit.file, []).append(edit)
    for rel, edits in by_file.items():
        path = dest / rel
        path.write_bytes(apply(path.read_bytes(), edits))
    return dest


def _render(text: bytes, start: int, end: int, nodes: list[Switch], language: str) -> bytes:
    """The schema text of text[start:end], with the switches inside that span applied (outermost first)."""
    out: list[bytes] = []
    cursor = start
    i = 0
    for n in nodes:  # a switch reaching out of this span cannot nest in it
        if (
            n.start < end
            and n.end > start
            and not (start <= n.start and n.end <= end)
            and not (n.start <= start and end <= n.end)
        ):
            raise SchemaConflict(f"{n.file}: switches overlap at {n.start}..{n.end}")
        if n.end > len(text):
            raise SchemaConflict(f"{n.file}: a switch past the end of the file")
    inside = sorted(
        (n for n in nodes if start <= n.start and n.end <= end and (n.start, n.end) != (start, end)),
        key=lambda n: (n.start, -n.end),
    )
    while i < len(inside):
        node = inside[i]
        if node.start < cursor:
            raise SchemaConflict(f"{node.file}: switches overlap at {node.start}..{node.end}")
        same = [n for n in inside[i:] if (n.start, n.end) == (node.start, node.end)]
        out.append(text[cursor : node.start])
        out.append(_chain(text, node.start, node.end, same, [n for n in nodes if n not in same], language))
        cursor = node.end
        # skip everything within this span (rendered inside the chain)
        i += 1
        while i < len(inside) and inside[i].start < node.end:
            if inside[i].end > node.end:
                raise SchemaConflict(f"{node.file}: switches overlap at {inside[i].start}..{inside[i].end}")
            i += 1
    out.append(text[cursor:end])
    return b"".join(out)


def _chain(
    text: bytes, start: int, end: int, same: list[Switch], others: list[Switch], language: str
) -> bytes:
    """Several switches on one span: each wraps the next; the innermost wraps the original text."""
    if not same:
        return _render(text, start, end, others, language)
    head, rest = same[0], same[1:]
    old = _chain(text, start, end, rest, others, language)
    form = head.form
    if head.mutant is not None:
        form = form.replace(COND, condition(language, head.mutant))
    return form.encode().replace(OLD.encode(), old)


def schema(golden: Path, mutants: list[Mutant], dest: Path, language_of) -> list[str]:
    """Write the schema of ``mutants`` into ``dest`` (a copy of ``golden``); returns the ids it holds. A
    mutant whose switches conflict with those already in is left out (it runs from its own source)."""
    copy_app(golden, dest)
    taken: list[Switch] = []
    held: list[str] = []
    texts: dict[str, bytes] = {}
    for mutant in mutants:
        if not mutant.switches:
            continue
        candidate = taken + [
            Switch(s.file, s.start, s.end, s.form, mutant.id if COND in s.form else None)
            for s in mutant.switches
        ]
        try:
            for rel in {s.file for s in candidate}:
                if rel not in texts:
                    texts[rel] = (golden / rel).read_bytes()
                _render(
                    texts[rel], 0, len(texts[rel]), [s for s in candidate if s.file == rel], language_of(rel)
                )
        except SchemaConflict:
            continue
        taken = candidate
        held.append(mutant.id)
    for rel in {s.file for s in taken}:
        nodes = _dedupe([s for s in taken if s.file == rel])
        (dest / rel).write_bytes(_render(texts[rel], 0, len(texts[rel]), nodes, language_of(rel)))
    return held


def _dedupe(nodes: list[Switch]) -> list[Switch]:
    """Unconditional forms written by several mutants (the same helper, the same cast) go in once."""
    seen: set[tuple[int, int, str]] = set()
    out = []
    for node in nodes:
        key = (node.start, node.end, node.form)
        if node.mutant is None and key in seen:
            continue
        seen.add(key)
        out.append(node)
    return out
