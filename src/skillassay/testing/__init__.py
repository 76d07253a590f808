"""Test helpers users get too: a scripted model server for running real agent CLIs offline, without tokens."""

from skillassay.testing.model_server import ModelServer, RecordedRequest
from skillassay.testing.script import (
    ExecAction,
    FunctionCallAction,
    PatchAction,
    Script,
    ScriptUsage,
    TextAction,
    ToolUseAction,
    Turn,
    load_scripts,
    parse_scripts,
)

__all__ = [
    "ExecAction",
    "FunctionCallAction",
    "ModelServer",
    "PatchAction",
    "RecordedRequest",
    "Script",
    "ScriptUsage",
    "TextAction",
    "ToolUseAction",
    "Turn",
    "load_scripts",
    "parse_scripts",
]
