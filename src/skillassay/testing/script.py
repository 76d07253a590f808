"""The script a scripted model server replays: a list of model turns, each a list of actions.

YAML example (one script; the file may also hold a list of scripts, or ``{scripts: [...]}``)::

    id: add-widget
    final_text: All done.            # said once the turns run out
    usage: {input_tokens: 100, output_tokens: 20}
    turns:
      - - text: "I'll use the skill."
        - tool_use: {name: Skill, input: {skill: seam-integration}}
      - - tool_use: {name: Write, input: {file_path: "{workspace}/a.txt", content: "hi\\n"}}
      - actions: [{exec: "ls -la"}]             # Codex: exec_command
        usage: {input_tokens: 500, output_tokens: 40}
      - actions: [{patch: "*** Begin Patch\\n*** Add File: b.txt\\n+hi\\n*** End Patch\\n"}]
      - error: 500                                # this turn answers HTTP 500 (every attempt)
      - {error: 529, fail_times: 1, actions: [{text: ok}]}   # 529 once, then the reply (retries)
      - hang: 30                                  # this turn answers after 30 s (timeouts)
      - stream_error: overloaded_error            # HTTP 200, then an error event inside the stream

A turn is either a list of actions or a mapping with ``actions`` and the options ``error``, ``fail_times``,
``hang``, ``stream_error``, ``usage``.
An action is a one-key mapping (``text``, ``tool_use``, ``exec``, ``patch``, ``function_call``) or the long
form with ``type``. ``tool_use`` is for the Anthropic Messages API; ``exec``, ``patch`` and ``function_call``
for OpenAI Responses; ``text`` for both. ``{workspace}`` in any string is replaced with the request's working
directory when the server can find one (it cannot always), so prefer relative paths where the CLI accepts
them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextAction(_Strict):
    type: Literal["text"] = "text"
    text: str


class ToolUseAction(_Strict):
    """An Anthropic ``tool_use`` block (Claude Code: Write, Edit, Bash, Skill, ...)."""

    type: Literal["tool_use"] = "tool_use"
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None  # generated (stable per script, turn and position) when omitted


class ExecAction(_Strict):
    """An OpenAI ``function_call`` to Codex's ``exec_command`` tool."""

    type: Literal["exec"] = "exec"
    cmd: str
    workdir: str | None = None


class PatchAction(_Strict):
    """An OpenAI ``custom_tool_call`` to Codex's ``apply_patch`` tool, with the raw ``*** Begin Patch``
    text.
    """

    type: Literal["patch"] = "patch"
    text: str


class FunctionCallAction(_Strict):
    """Any OpenAI ``function_call``; ``arguments`` is sent as a JSON string."""

    type: Literal["function_call"] = "function_call"
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


Action = Annotated[
    TextAction | ToolUseAction | ExecAction | PatchAction | FunctionCallAction, Field(discriminator="type")
]

# the short forms: the value of a one-key mapping, and which field a bare string fills
_SHORT_FIELD = {"text": "text", "exec": "cmd", "patch": "text", "tool_use": None, "function_call": None}


def _expand_action(value: Any) -> Any:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, dict) and "type" not in value and len(value) == 1:
        ((key, body),) = value.items()
        if key in _SHORT_FIELD:
            if isinstance(body, dict):
                return {"type": key, **body}
            field = _SHORT_FIELD[key]
            if field is None:
                raise ValueError(f"{key!r} needs a mapping, e.g. {{name: ..., input: {{...}}}}")
            return {"type": key, field: body}
    return value


class ScriptUsage(_Strict):
    input_tokens: int = 100
    output_tokens: int = 20
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class Turn(_Strict):
    actions: list[Action] = Field(default_factory=list)
    error: int | None = None  # answer this HTTP status (e.g. 500) instead of a reply, on every attempt...
    fail_times: int | None = None  # ...or only on the first N attempts (then the actions), to test retries
    hang: float | None = None  # wait this many seconds before answering (to test timeouts)
    # answer 200, start the stream, then fail inside it with this error type (e.g. overloaded_error), every
    # attempt
    stream_error: str | None = None
    usage: ScriptUsage | None = None

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, data: Any) -> Any:
        is_action = isinstance(data, dict) and (
            set(data) & set(_SHORT_FIELD) or data.get("type") in _SHORT_FIELD
        )
        if isinstance(data, (list, str)) or is_action:
            data = {"actions": data if isinstance(data, list) else [data]}
        if isinstance(data, dict) and isinstance(data.get("actions"), list):
            data = {**data, "actions": [_expand_action(a) for a in data["actions"]]}
        return data


class Script(_Strict):
    id: str = "default"
    turns: list[Turn] = Field(default_factory=list)
    final_text: str = "Done."
    usage: ScriptUsage = Field(default_factory=ScriptUsage)
    side_text: str = "OK"  # the reply to side calls that are not part of the conversation (e.g. titles)
    # text of the task that picks this script when the request names none (one server, one URL, a job of many
    # evals: each eval's prompt holds its script's `match`)
    match: str | None = None
    # the model names this script answers to (None: any). A request for another model gets the provider's own
    # "no such model" answer, which echoes the name asked for (Anthropic: 404 "model: <name>"; OpenAI: 404
    # "The model `<name>` does not exist...")
    models: list[str] | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> Script:
        scripts = load_scripts(path)
        if len(scripts) != 1:
            raise ValueError(f"{path}: expected one script, found {len(scripts)}")
        return scripts[0]


_SCRIPTS = TypeAdapter(list[Script])


def parse_scripts(data: Any) -> list[Script]:
    """One script, a list of scripts, or ``{scripts: [...]}``, as loaded from YAML or JSON."""
    if isinstance(data, dict) and "scripts" in data and "turns" not in data:
        data = data["scripts"]
    if isinstance(data, dict):
        data = [data]
    return _SCRIPTS.validate_python(data)


def load_scripts(path: str | Path) -> list[Script]:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return parse_scripts(data)
