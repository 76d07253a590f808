"""The one skip-list of everything that walks or copies an app (``changes.py`` says what each entry is and
why). A module of its own, importing nothing, so a process that only needs to know what a walk leaves out
(the rubric's memo, ``memo.py``) pays for nothing else."""

from __future__ import annotations

# at any depth: installed, cached or version-control state, never an agent's edit
SKIP_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".git"}
)
# at the app's top level: what its build and its test runs produce (the sandbox builds it again)
OUTPUT_DIRS = frozenset({"dist", "build", ".next", ".turbo", "coverage", "htmlcov"})
SKIP_SUFFIXES = (".pyc", ".pyo", ".db", ".sqlite", ".sqlite3", ".db-journal", ".db-wal", ".db-shm")
SKIP_NAMES = frozenset({".DS_Store", ".coverage"})


def skipped_dir(name: str, top_level: bool) -> bool:
    """Is the folder ``name`` (directly under the app's root when ``top_level``) left out of changes and
    copies?
    """
    return name in SKIP_DIRS or (top_level and name in OUTPUT_DIRS)


def skipped_file(name: str) -> bool:
    return name in SKIP_NAMES or name.endswith(SKIP_SUFFIXES)
