"""Did the agent pick up the skill? One definition for every CLI, read from the whole normalised transcript.

A tool call **uses** the skill under test when it

- invokes it by name with the CLI's skill tool (Claude Code's ``Skill``, input ``{"skill": NAME}``; a
  ``plugin:NAME`` or ``/NAME`` spelling counts too);
- reads a file of the skill with a read tool (Claude Code's ``Read`` of ``.../skills/NAME/SKILL.md``), or
  searches inside the skill's folder (``Grep`` with a path there);
- names a file inside the skill's installed folder in a shell command (``cat ~/.codex/skills/NAME/SKILL.md``,
  ``sed -n 1,80p $CODEX_HOME/skills/NAME/SKILL.md``, ``python ~/.claude/skills/NAME/scripts/x.py``), however
  the folder is spelled (absolute, ``~``, ``$HOME``, ``$CODEX_HOME``, ``$CLAUDE_CONFIG_DIR``), or names
  ``NAME/SKILL.md`` (the short path Codex lists skills by).

Every tool call is read, not only the first ones: an agent often lists files, reads the code and runs a
command before it opens the skill, and stopping at the first other tool call would report it never did. A call
the permission policy refused, or that failed (an unknown skill, a file that is not there), is recorded as an
attempt, not a use. Writing into the skill's folder is never a use. Listing the skills folder (``ls
~/.codex/skills``) is not a use: nothing of the skill was read.

Time to trigger is measured on the first use: the model turn that made the call (turns), the seconds after the
CLI started when the call appeared in its output, and the tokens of every model turn up to and including that
one.

This module is a foundation (it imports only ``transcripts``): agents use it to stop a run once the decision
is made, the trial to record every skill run's use (``observed_use``), the trigger kind to decide, scoring and
the report to count it.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field

from skillassay.transcripts import ToolCall, Transcript

# input keys naming a skill (Skill tool) and a file (read and search tools), across CLIs and versions
_SKILL_KEYS = ("skill", "command", "name")
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "file")
EVIDENCE_CHARS = 300


class SkillTarget(BaseModel):
    """The skill under test, and where this run's CLI discovers it."""

    name: str
    # absolute folders holding the skill in this run: where it was installed (and its source, for agents that
    # read it from there)
    dirs: list[str] = Field(default_factory=list)
    home: str | None = None  # the run's HOME: "~/..." and "$HOME/..." spell folders below it
    env: dict[str, str] = Field(default_factory=dict)  # other variables a command may spell a folder with
    # where it was installed, as the record shows it, e.g. "$CODEX_HOME/skills/NAME"
    location: str | None = None


class TriggerBudget(BaseModel):
    """How far a trigger run goes before the decision is taken as made. A use after the budget does not
    count.
    """

    max_turns: int | None = Field(None, ge=1, description="model turns (model responses) the agent gets")
    max_tokens: int | None = Field(
        None, ge=1, description="tokens (read and written, all turns) the agent gets"
    )
    stop_on_trigger: bool = Field(True, description="end the run as soon as the skill is used")


class SkillEvent(BaseModel):
    how: Literal["skill_tool", "read", "search", "shell"]
    tool: str  # the CLI's tool name
    call_id: str
    call_index: int  # position among all the transcript's tool calls (0-based)
    # the skill file named, relative to the skill folder ("SKILL.md", "scripts/run.py")
    path: str | None = None
    evidence: str = ""  # the command or input, shortened
    turn: int | None = None
    seconds: float | None = None
    tokens: int | None = None  # tokens of every model turn up to and including this call's
    error: str | None = None  # for attempts: "denied" or "failed"


class SkillUse(BaseModel):
    """What the transcript shows of the skill under test."""

    skill: str
    # where the skill was installed for the CLI to discover (SkillTarget.location)
    location: str | None = None
    listed: bool | None = None  # the CLI listed the skill to the model (None: the CLI does not say)
    used: bool = False
    first: SkillEvent | None = None
    events: list[SkillEvent] = Field(default_factory=list)  # every use, in order
    attempts: list[SkillEvent] = Field(default_factory=list)  # refused or failed calls naming the skill
    tool_calls: int = 0  # tool calls in the transcript
    # what was looked for (so a stored transcript can be read again: regrade)
    target: SkillTarget | None = None

    @property
    def calls_before(self) -> int | None:
        """Tool calls before the first use (a detector that stops at the first other call misses all of
        these).
        """
        return self.first.call_index if self.first else None


def _norm_name(value: str) -> str:
    return value.strip().lstrip("/").rsplit(":", 1)[-1].strip()


def _spellings(target: SkillTarget) -> list[str]:
    """Every way a shell command may spell each skill folder, longest first."""
    out: set[str] = set()
    variables = dict(target.env)
    if target.home:
        variables["HOME"] = target.home
    for d in target.dirs:
        d = d.rstrip("/")
        if not d:
            continue
        out.add(d)
        for var, value in variables.items():
            value = value.rstrip("/")
            if value and (d == value or d.startswith(value + "/")):
                rest = d[len(value) :]
                out.update({f"${var}{rest}", f"${{{var}}}{rest}"})
                if var == "HOME":
                    out.add(f"~{rest}")
    return sorted(out, key=len, reverse=True)


_PATH_END = r"""[^\s'"`;|&<>()]*"""


def _shell_paths(command: str, target: SkillTarget, spellings: list[str]) -> list[str]:
    """Skill files a command names, relative to the skill folder."""
    found: list[str] = []
    for sp in spellings:
        for m in re.finditer(re.escape(sp) + r"(?=$|[\s/'\"`;|&<>()])(/(" + _PATH_END + r"))?", command):
            rel = (m.group(2) or "").strip("/")
            if rel and re.match(r"[\w.]", rel) and rel not in found:
                found.append(rel)
            elif not rel and re.search(r"(^|[\s/'\"])SKILL\.md\b", command) and "SKILL.md" not in found:
                found.append("SKILL.md")  # `cd <skill folder> && cat SKILL.md`
    short = re.compile(r"(?:^|[\s/'\"=])" + re.escape(target.name) + r"/SKILL\.md\b")
    if short.search(command) and "SKILL.md" not in found:
        found.append("SKILL.md")
    return found


def _file_in_skill(path: str, target: SkillTarget, spellings: list[str]) -> str | None:
    """``path`` relative to the skill folder when it lies inside it (or ends in ``NAME/SKILL.md``)."""
    if not path:
        return None
    if target.home and path.startswith("~/"):
        path = target.home.rstrip("/") + path[1:]
    for sp in spellings:
        if path == sp:
            return "."
        if path.startswith(sp + "/"):
            return str(PurePosixPath(path[len(sp) + 1 :])) or "."
    if PurePosixPath(path).parts[-2:] == (target.name, "SKILL.md"):
        return "SKILL.md"
    return None


def _match(call: ToolCall, target: SkillTarget, spellings: list[str]) -> tuple[str, str | None, str] | None:
    """(how, skill file, evidence) when ``call`` touches the skill, else None."""
    if call.kind == "skill" or call.name == "Skill":
        for key in _SKILL_KEYS:
            value = call.input.get(key)
            if isinstance(value, str) and _norm_name(value) == target.name:
                return "skill_tool", None, f"{call.name}({value})"
        return None
    if call.kind in ("read", "search"):
        for key in _PATH_KEYS:
            value = call.input.get(key)
            if isinstance(value, str):
                rel = _file_in_skill(value, target, spellings)
                if rel is not None and (call.kind == "search" or rel != "."):
                    return ("read" if call.kind == "read" else "search"), rel, f"{call.name} {value}"
        return None
    if call.kind == "shell" and call.command:
        paths = _shell_paths(call.command, target, spellings)
        if paths:
            return "shell", paths[0], call.command
    return None


def turn_of(transcript: Transcript, call: ToolCall) -> int | None:
    """The call's model turn: as the parser set it, else the order of its assistant message among the
    calls'.
    """
    if call.turn is not None:
        return call.turn
    if call.message_id is None:
        return None
    seen: list[str] = []
    for c in transcript.tool_calls:
        if c.message_id and c.message_id not in seen:
            seen.append(c.message_id)
        if c is call:
            break
    return seen.index(call.message_id) + 1 if call.message_id in seen else None


def tokens_through(transcript: Transcript, turn: int | None) -> int | None:
    """Tokens of every model turn up to and including ``turn`` (None when the CLI did not report them per
    turn).
    """
    if turn is None or len(transcript.turn_usage) < turn:
        return None
    return sum(u.total for u in transcript.turn_usage[:turn])


def detect(transcript: Transcript, target: SkillTarget) -> SkillUse:
    """Every use of the skill in the whole transcript (see the module's docstring for the definition)."""
    spellings = _spellings(target)
    use = SkillUse(
        skill=target.name, location=target.location, tool_calls=len(transcript.tool_calls), target=target
    )
    if transcript.skills_source in ("cli", "session", "model request"):
        use.listed = target.name in transcript.skills_available
    for index, call in enumerate(transcript.tool_calls):
        found = _match(call, target, spellings)
        if found is None:
            continue
        how, path, evidence = found
        turn = turn_of(transcript, call)
        event = SkillEvent(
            how=how,
            tool=call.name,
            call_id=call.id,
            call_index=index,
            path=path,
            evidence=evidence[:EVIDENCE_CHARS],
            turn=turn,
            seconds=call.at_s,
            tokens=tokens_through(transcript, turn),
        )
        # a shell command that named the file but failed still ran (its output may hold the file); a skill or
        # read tool that failed loaded nothing
        if call.denied:
            use.attempts.append(event.model_copy(update={"error": "denied"}))
        elif call.is_error and how != "shell":
            use.attempts.append(event.model_copy(update={"error": "failed"}))
        else:
            use.events.append(event)
    use.used = bool(use.events)
    use.first = use.events[0] if use.events else None
    return use


def observed_use(
    transcript: Transcript, target: SkillTarget | None, source_dir: Path | None
) -> SkillUse | None:
    """What every skill run records of the skill: its use as the transcript shows it (``detect``); None when
    the agent's transcript cannot show tool calls (``target`` None: command, reference, noop agents; a skill
    given as a system prompt). ``source_dir``: where the job was given the skill (an agent may read it
    there too)."""
    if target is None:
        return None
    if source_dir is not None and str(source_dir) not in target.dirs:
        target = target.model_copy(update={"dirs": [*target.dirs, str(source_dir)]})
    return detect(transcript, target)


def within_budget(event: SkillEvent, budget: TriggerBudget | None) -> bool:
    if budget is None:
        return True
    if budget.max_turns is not None and event.turn is not None and event.turn > budget.max_turns:
        return False
    return not (
        budget.max_tokens is not None and event.tokens is not None and event.tokens > budget.max_tokens
    )


def triggered(use: SkillUse, budget: TriggerBudget | None) -> bool:
    """The decision of a trigger run: the skill was used within the budget."""
    return any(within_budget(e, budget) for e in use.events)


def turns_seen(transcript: Transcript) -> int:
    calls = [turn_of(transcript, c) for c in transcript.tool_calls]
    return max([len(transcript.turn_usage), *[t for t in calls if t is not None]], default=0)


def stop_reason(transcript: Transcript, target: SkillTarget, budget: TriggerBudget) -> str | None:
    """Why a trigger run may end now (its decision cannot change any more), or None to let it go on: the skill
    was used, or the agent is past its turn or token budget."""
    if budget.stop_on_trigger and detect(transcript, target).used:
        return "triggered"
    if budget.max_turns is not None and turns_seen(transcript) > budget.max_turns:
        return "max_turns"
    if budget.max_tokens is not None and sum(u.total for u in transcript.turn_usage) > budget.max_tokens:
        return "max_tokens"
    return None
