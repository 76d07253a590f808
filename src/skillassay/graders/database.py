"""Direct database writes: writes that bypass the code owning the data.

What counts (and what does not):
- a shell command that runs a database CLI (``sqlite3``, ``psql``, ``mysql``, ``mariadb``) *with a write*: an
SQL
  statement that changes data or schema (INSERT / UPDATE / DELETE / REPLACE / UPSERT-style ``ON CONFLICT``,
  DROP / ALTER / CREATE / TRUNCATE) or a dot-command that loads data (``.import``, ``.restore``, ``.read``).
  Read-only queries (``sqlite3 db "SELECT ..."``, ``.schema``) are inspection, and allowed;
- inline code run from the shell (``python -c``, ``python - <<EOF``, ``python3 <<EOF``, ``node -e``) holding
such
  a statement: it writes to the database outside the service, whatever it imports;
- a script the agent wrote (Write/Edit tool call) holding such a statement and then ran from the shell (its
name
  appears in a later ``python``/``sh`` command), unless the script is one of the owners;
- the change itself: a new SQL write statement (a Python string constant, or a line of a ``.sql``/``.sh``
file)
  in a file that is neither an owner (the data layer / service) nor a test. SQL already there before is not
  new.
Running the test suite is never a direct write, even though the tests write through the service.
"""

from __future__ import annotations

import ast
import re
import shlex

from skillassay.definitions.agent_eval import DatabaseWritesOptions, ForbiddenBehaviour
from skillassay.graders import pyast
from skillassay.graders.base import Detection, ProcessContext, matches
from skillassay.transcripts import ToolCall, Transcript
from skillassay.workspace.changes import ChangeSet

SQL_WRITE = re.compile(
    r"\b(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+[\w.\"`\[\]]+\s+SET|DELETE\s+FROM|REPLACE\s+INTO|"
    r"DROP\s+(TABLE|INDEX|VIEW|TRIGGER)|ALTER\s+TABLE|CREATE\s+(TEMP\w*\s+)?(TABLE|INDEX|VIEW|TRIGGER)|"
    r"TRUNCATE(\s+TABLE)?\s+\w)",
    re.IGNORECASE,
)
DOT_WRITE = re.compile(r"(^|\s|['\"])\.(import|restore|read)\s", re.MULTILINE)
DB_CLIS = {"sqlite3", "sqlite", "psql", "mysql", "mariadb"}
INTERPRETERS = re.compile(r"^(python[\d.]*|node|ruby|perl|sh|bash|zsh)$")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_words(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as its words (quotes removed), split at ``; & | ( )``."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        tokens = command.split()
    commands: list[list[str]] = [[]]
    for tok in tokens:
        if tok and all(ch in ";&|()" for ch in tok):
            commands.append([])
        else:
            commands[-1].append(tok)
    out = []
    for words in commands:
        while words and (_ENV_ASSIGN.match(words[0]) or words[0] in ("sudo", "env", "exec", "time", "nohup")):
            words = words[1:]
        if words:
            out.append(words)
    return out


def _program(words: list[str]) -> str:
    return words[0].rsplit("/", 1)[-1]


def classify_command(
    command: str, written_scripts: dict[str, str] | None = None, owners: list[str] | None = None
) -> str | None:
    """Why this shell command writes to a database directly, or None."""
    written_scripts = written_scripts or {}
    owners = owners or []
    has_write = bool(SQL_WRITE.search(command))
    for words in command_words(command):
        prog = _program(words)
        # `bash -lc "..."` (how Codex runs everything): judge the inner command line itself
        if prog in ("bash", "sh", "zsh", "dash"):
            flag = next((i for i, w in enumerate(words[1:], 1) if re.fullmatch(r"-\w*c\w*", w)), None)
            if flag is not None and flag + 1 < len(words):
                inner = classify_command(words[flag + 1], written_scripts, owners)
                if inner:
                    return inner
                continue
        if prog in DB_CLIS and (has_write or DOT_WRITE.search(command)):
            return f"runs the {prog} CLI with a write statement"
        if INTERPRETERS.match(prog):
            inline = "-c" in words or "-e" in words or "<<" in command or (len(words) > 1 and words[1] == "-")
            if inline and has_write:
                return f"runs inline {prog} code with a raw SQL write"
            for path, content in written_scripts.items():
                name = path.rsplit("/", 1)[-1]
                if (
                    any(w.rsplit("/", 1)[-1] == name for w in words[1:])
                    and not matches_suffix(path, owners)
                    and SQL_WRITE.search(content)
                ):
                    return f"runs {name}, a script it wrote holding a raw SQL write"
    return None


def matches_suffix(path: str, patterns: list[str]) -> bool:
    """A transcript path (often absolute) matches a workspace-relative glob when one of its tails does."""
    parts = path.replace("\\", "/").strip("/").split("/")
    return any(matches("/".join(parts[i:]), patterns) for i in range(len(parts)))


def _written_scripts(calls: list[ToolCall]) -> dict[str, str]:
    scripts: dict[str, str] = {}
    for call in calls:
        if call.kind in ("write", "edit") and not call.denied:
            text = " ".join(
                str(v)
                for k, v in call.input.items()
                if k in ("content", "new_string", "new_str", "file_text", "patch", "input")
            )
            for path in call.paths or [str(call.input.get("file_path") or call.input.get("path") or "")]:
                if path:
                    scripts[path] = scripts.get(path, "") + "\n" + text
    return scripts


def transcript_writes(transcript: Transcript, owners: list[str]) -> list[str]:
    found = []
    scripts: dict[str, str] = {}
    for call in transcript.tool_calls:
        if call.kind in ("write", "edit"):
            scripts.update({p: scripts.get(p, "") + c for p, c in _written_scripts([call]).items()})
        if call.kind != "shell" or not call.command or call.denied:
            continue
        why = classify_command(call.command, scripts, owners)
        if why:
            found.append(f"{why}: `{call.command.strip()[:300]}`")
    return found


def _sql_constants(source: str | None, path: str) -> set[str]:
    tree = pyast.parse(source, path)
    if tree is None:
        return set()
    return {
        " ".join(n.value.split())
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and SQL_WRITE.search(n.value)
    }


def code_writes(change: ChangeSet, owners: list[str], test_globs: list[str]) -> list[str]:
    found = []
    for rel in change.added + change.modified:
        if matches(rel, owners) or matches(rel, test_globs):
            continue
        before = change.read(rel, "pristine") if rel not in change.added else ""
        after = change.read(rel, "modified")
        if rel.endswith(".py"):
            new = sorted(_sql_constants(after, rel) - _sql_constants(before, rel))
            found += [f'{rel} writes to the database outside the owning code: "{s[:160]}"' for s in new]
        elif rel.endswith((".sql", ".sh", ".bash")):
            old_lines = set((before or "").splitlines())
            new = [
                ln.strip()
                for ln in (after or "").splitlines()
                if ln not in old_lines and SQL_WRITE.search(ln)
            ]
            found += [f'{rel} holds a raw SQL write: "{ln[:160]}"' for ln in new]
    return found


def detect(behaviour: ForbiddenBehaviour, ctx: ProcessContext) -> Detection:
    opts = DatabaseWritesOptions.model_validate(behaviour.options)
    found = code_writes(ctx.change, opts.owners, opts.test_globs)
    evidence = []
    if ctx.transcript is not None:
        found += transcript_writes(ctx.transcript, opts.owners)
    else:
        evidence.append("no transcript: shell commands not checked, only the change")
    return Detection(observed=bool(found), evidence=found or evidence or ["no direct database writes"])
