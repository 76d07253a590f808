import json

import pytest
from pydantic import ValidationError

from skillassay.testing.script import (
    ExecAction,
    PatchAction,
    Script,
    TextAction,
    ToolUseAction,
    load_scripts,
    parse_scripts,
)

YAML = """
id: demo
final_text: All done.
usage: {input_tokens: 7, output_tokens: 3}
turns:
  - - text: "I'll use the skill."
    - tool_use: {name: Skill, input: {skill: demo}}
  - [{exec: "ls -la"}]
  - actions: [{patch: "*** Begin Patch\\n*** End Patch\\n"}]
    usage: {input_tokens: 50}
  - error: 500
  - hang: 2.5
  - "just text"
  - {type: function_call, name: view_image, arguments: {path: a.png}}
"""


def test_yaml_short_forms(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(YAML)
    (script,) = load_scripts(path)
    assert script.id == "demo" and script.final_text == "All done." and script.usage.input_tokens == 7
    t = script.turns
    assert isinstance(t[0].actions[0], TextAction)
    assert isinstance(t[0].actions[1], ToolUseAction) and t[0].actions[1].input == {"skill": "demo"}
    assert isinstance(t[1].actions[0], ExecAction) and t[1].actions[0].cmd == "ls -la"
    assert isinstance(t[2].actions[0], PatchAction) and t[2].usage.input_tokens == 50
    assert t[3].error == 500 and t[3].actions == []
    assert t[4].hang == 2.5
    assert t[5].actions[0].text == "just text"
    assert t[6].actions[0].name == "view_image"
    assert Script.from_file(path) == script


def test_json_and_lists_of_scripts(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"scripts": [{"id": "a"}, {"id": "b", "turns": [[{"text": "x"}]]}]}))
    assert [s.id for s in load_scripts(path)] == ["a", "b"]
    with pytest.raises(ValueError):
        Script.from_file(path)


def test_round_trip_through_the_long_form():
    (script,) = parse_scripts({"id": "x", "turns": [[{"tool_use": {"name": "Write", "input": {"a": 1}}}]]})
    assert Script.model_validate(script.model_dump()) == script


@pytest.mark.parametrize(
    "turn",
    [
        [{"tool_use": "Write"}],  # tool_use needs a mapping
        [{"bogus": 1}],
        {"actions": [], "hang": "soon"},
        [{"type": "text", "text": "a", "extra": 1}],
    ],
)
def test_bad_scripts_are_refused(turn):
    with pytest.raises((ValidationError, ValueError)):
        parse_scripts({"turns": [turn]})
