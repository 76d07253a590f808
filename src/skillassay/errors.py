"""Errors a user can act on. Each names the file and, where there is one, the field (a JSON pointer)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class SkillassayError(Exception):
    """Base of every error skillassay raises on purpose. The CLI prints it and exits 2."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a definition: where (file + JSON pointer) and what was expected."""

    file: Path
    pointer: str
    message: str
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        where = f"{self.file}"
        if self.pointer:
            where += f" at {self.pointer}"
        return f"{where}: {self.message}"


class DefinitionError(SkillassayError):
    """A definition file could not be loaded. Carries every problem found, not only the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class InfrastructureError(SkillassayError):
    """Something the harness needs (a tool, a port, a service) failed; not the agent's fault."""
