"""What a kind's mutants are made of (``check --mutants``): a mutant is a list of ``Edit``s on the golden's
files, and, for the schema the sandbox builds once (``orchestrator.mutants.edits``), ``Switch``es on
expression spans. A kind deriving its own mutants (``EvalKind.derive_mutants``) returns them as
``DerivedMutants``."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillassay.transcripts import Transcript


@dataclass(frozen=True)
class Edit:
    file: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Switch:
    """In the schema, the span [start, end) of ``file`` becomes ``form`` with OLD and COND filled in (a form
    without COND is applied whatever mutant is active: a helper function, a type cast)."""

    file: str
    start: int
    end: int
    form: str
    mutant: str | None = None  # filled in by the schema for forms using COND


@dataclass
class Mutant:
    id: str
    cls: str
    description: str
    location: str | None
    edits: list[Edit] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)  # empty: no schema form (the mutant runs on its own)
    # agent evals: the transcript the process graders read instead of the golden's
    transcript: Transcript | None = None


@dataclass
class DerivedMutants:
    """An eval's mutants, notes on the classes that could not be derived, and the transcript the golden is
    graded with (None: grading reads none)."""

    mutants: list[Mutant]
    notes: list[str]
    transcript: Transcript | None = None
