"""`export --format inspect`: Inspect AI eval logs, written and read back with the real inspect-ai package."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import list_eval_logs, read_eval_log
from parts import CHROMIUM, needs
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.agents.claude_code import parse_stream_json
from skillassay.cli.main import app
from skillassay.secrets import forms
from skillassay.transcripts import Transcript

JOB = "20261202-120000-insp"
WAIT_MS = 30_000  # inspect view is a single-page app: on a loaded machine its first render is slow
runner = CliRunner()


def export(root, out, *extra: str):
    return runner.invoke(
        app, ["export", JOB, str(out), "--format", "inspect", "--results", str(root), *extra]
    )


@pytest.fixture
def exported(tmp_path):
    root = tmp_path / "results"
    # failing verdicts become provider errors: unscored runs, next to scored ones
    evals = ("express-ts", "flask-py")
    _, runs = make_job(root, job_id=JOB, evals=evals, runs=3, baseline=True, failures_as="provider_error")
    out = tmp_path / "out"
    result = export(root, out)
    assert result.exit_code == 0, result.output
    return root, runs, out


def test_one_log_per_eval_and_arm_with_the_same_scores(exported):
    _, runs, out = exported
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [
        f"2026-11-29T22-45-12+00-00_{e}-{v}_{JOB}.json"
        for e in ("express-ts", "flask-py")
        for v in ("baseline", "skill")
    ]
    # Inspect lists them as its own logs (`inspect view` shows only what this lists)
    assert sorted(Path(i.name).name for i in list_eval_logs(str(out))) == [f.name for f in files]
    unscored = 0
    for f in files:
        log = read_eval_log(str(f))
        eval_id, variant = log.eval.task.split(":")
        assert log.eval.metadata is not None and log.eval.metadata["job_id"] == JOB
        assert log.eval.metadata["options"]["baseline"] is True
        arm = [r for r in runs if (r.eval_id, r.variant) == (eval_id, variant)]
        mine = sorted(arm, key=lambda r: r.run_index)
        assert log.samples is not None and len(log.samples) == len(mine) == 3
        for run, sample in zip(mine, log.samples, strict=True):
            assert sample.metadata["outcome"] == run.outcome
            assert sample.model_usage["claude-sonnet"].input_tokens == run.transcript.input_tokens
            assert sample.model_usage["claude-sonnet"].total_cost == run.transcript.cost_usd
            if not run.scored:  # an error, never a zero
                unscored += 1
                assert sample.error is not None and "provider_error" in sample.error.message
                assert not sample.scores
                continue
            assert sample.error is None and sample.scores is not None
            assert run.verdict is not None
            assert sample.scores["verdict"].value == run.verdict.score
            for c in run.criteria:
                score = sample.scores[c.id]
                assert score.value == c.fraction
                assert score.explanation
                assert score.metadata is not None and score.metadata["evidence"] == c.evidence
    assert unscored == sum(1 for r in runs if not r.scored) > 0


def test_each_turn_a_model_event_and_each_tool_call_a_tool_event(exported):
    root, runs, out = exported
    run = runs[0]
    transcript = Transcript.model_validate_json((root / run.run_dir / "transcript.json").read_bytes())
    log = read_eval_log(str(next(out.glob(f"*_{run.eval_id}-{run.variant}_{JOB}.json"))))
    assert log.samples is not None
    sample = next(s for s in log.samples if s.id == f"{run.variant}-run_{run.run_index}")
    models = [e for e in sample.events if isinstance(e, ModelEvent)]
    tools = [e for e in sample.events if isinstance(e, ToolEvent)]
    assistant = [m.text for m in transcript.messages if m.role == "assistant"]
    assert [m.output.completion for m in models] == assistant
    assert [(t.id, t.function, t.result) for t in tools] == [
        (c.id, c.name, c.result) for c in transcript.tool_calls
    ]
    assert sample.input == transcript.messages[0].text


def _assistant(msg_id: str, blocks: list[dict], tokens: tuple[int, int, int]) -> dict:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "cache_read_input_tokens": tokens[2]}
    return {"type": "assistant", "message": {"id": msg_id, "content": blocks, "usage": usage}}


def _result(call_id: str, text: str) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def _claude_code_transcript() -> Transcript:
    """Claude Code's stream-json of three model turns, the second one tool calls only (no text), parsed by
    skillassay's own parser."""
    records = [
        {"type": "system", "subtype": "init", "model": "claude-sonnet", "session_id": "s1"},
        _assistant("m1", [{"type": "text", "text": "Reading first."}], (900, 40, 0)),
        _assistant(
            "m1",
            [{"type": "tool_use", "id": "c1", "name": "Read", "input": {"file_path": "a.py"}}],
            (900, 40, 0),
        ),
        _result("c1", "print('a')"),
        _assistant(
            "m2",
            [{"type": "tool_use", "id": "c2", "name": "Edit", "input": {"file_path": "a.py"}}],
            (20, 60, 900),
        ),
        _assistant(
            "m2",
            [{"type": "tool_use", "id": "c3", "name": "Bash", "input": {"command": "pytest"}}],
            (20, 60, 900),
        ),
        _result("c2", "ok"),
        _result("c3", "1 passed"),
        _assistant("m3", [{"type": "text", "text": "Done."}], (30, 10, 980)),
    ]
    return parse_stream_json(records, prompt="Fix a.py.")


def test_each_model_turn_a_model_event_with_its_input_and_usage(tmp_path):
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("flask-py",), runs=1)
    run = runs[0]
    transcript = _claude_code_transcript()
    assert len(transcript.turn_usage) == 3 and [c.turn for c in transcript.tool_calls] == [1, 2, 2]
    (root / run.run_dir / "transcript.json").write_text(transcript.model_dump_json(), encoding="utf-8")
    out = tmp_path / "out"
    assert export(root, out).exit_code == 0
    log = read_eval_log(str(next(out.glob("*.json"))), resolve_attachments=True)
    assert log.samples is not None
    sample = log.samples[0]
    kinds = [
        ("model", e.output.completion) if isinstance(e, ModelEvent) else ("tool", e.function)
        for e in sample.events
        if isinstance(e, (ModelEvent, ToolEvent))
    ]
    # a model event per turn of the transcript, the tool-only one too; each call after its turn
    assert kinds == [
        ("model", "Reading first."),
        ("tool", "Read"),
        ("model", ""),
        ("tool", "Edit"),
        ("tool", "Bash"),
        ("model", "Done."),
    ]
    models = [e for e in sample.events if isinstance(e, ModelEvent)]
    for event, usage in zip(models, transcript.turn_usage, strict=True):
        assert event.output.usage is not None
        got = event.output.usage
        assert (got.input_tokens, got.output_tokens, got.input_tokens_cache_read) == (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
        )
        assert got.total_tokens == usage.total
    # each turn's input is the conversation so far: the prompt, the earlier turns and their tools' results
    roles = [[m.role for m in e.input] for e in models]
    assert roles == [
        ["user"],
        ["user", "assistant", "tool"],
        ["user", "assistant", "tool", "assistant", "tool", "tool"],
    ]
    assert models[0].input[0].text == "Fix a.py."
    third = models[2].input
    assert [m.text for m in third if m.role == "tool"] == ["print('a')", "ok", "1 passed"]
    assert [c.function for c in third[3].tool_calls or []] == ["Edit", "Bash"]
    assert [m.role for m in sample.messages] == [*roles[2], "assistant"]


def test_a_long_conversation_is_kept_once_and_reads_back_whole(tmp_path):
    """Each turn's input repeats the conversation before it: past a few messages the sample is condensed
    (repeated content pooled as Inspect's own logs do), and reads back whole."""
    turns = 12
    results = [f"result {k}: " + "x" * 3000 for k in range(1, turns + 1)]
    records: list[dict] = [{"type": "system", "subtype": "init", "model": "claude-sonnet"}]
    for k in range(1, turns + 1):
        call = {"type": "tool_use", "id": f"c{k}", "name": "Read", "input": {"file_path": f"f{k}.py"}}
        records += [_assistant(f"m{k}", [call], (10, 5, 100)), _result(f"c{k}", results[k - 1])]
    transcript = parse_stream_json(records, prompt="Read them all.")
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("flask-py",), runs=1)
    (root / runs[0].run_dir / "transcript.json").write_text(transcript.model_dump_json(), encoding="utf-8")
    out = tmp_path / "out"
    assert export(root, out).exit_code == 0
    (path,) = out.glob("*.json")
    raw = path.read_text(encoding="utf-8")
    # the first result: pooled once, in its tool event and in the sample's messages; not once per later input
    assert "attachment://" in raw and raw.count(results[0]) <= 3
    log = read_eval_log(str(path), resolve_attachments=True)
    assert log.samples is not None
    models = [e for e in log.samples[0].events if isinstance(e, ModelEvent)]
    assert len(models) == turns == len(transcript.turn_usage)
    last = models[-1].input
    assert len(last) == 1 + 2 * (turns - 1)
    assert [m.text for m in last if m.role == "tool"] == results[:-1]


def test_a_planted_key_is_in_no_exported_file(tmp_path):
    root = tmp_path / "results"
    key = "sk-ant-api03-" + "Q7x" * 12
    _, runs = make_job(root, job_id=JOB, evals=("express-ts",), runs=1)
    run = runs[0]
    tpath = root / run.run_dir / "transcript.json"
    t = Transcript.model_validate_json(tpath.read_bytes())
    t.messages[1].text = f"my key is {key}"
    t.tool_calls[3].result = f"export ANTHROPIC_API_KEY={key}"
    t.messages[0].text = f"prompt {key}"
    tpath.write_text(t.model_dump_json(), encoding="utf-8")
    out = tmp_path / "out"
    assert export(root, out).exit_code == 0
    files = list(out.rglob("*"))
    assert files
    for f in files:
        assert key not in f.read_text(encoding="utf-8")
        assert key not in f.name
    log = read_eval_log(str(files[0]))  # still a valid log after scrubbing
    assert log.samples is not None and "[REDACTED]" in str(log.samples[0].input)


def test_without_the_extra_a_clear_error_and_exit_2(tmp_path, monkeypatch):
    root = tmp_path / "results"
    make_job(root, job_id=JOB, evals=("express-ts",), runs=1)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if not installed: importing it fails
    result = export(root, tmp_path / "out")
    assert result.exit_code == 2
    assert "skillassay[inspect]" in result.output


def test_unknown_job_and_format_exit_2(tmp_path):
    root = tmp_path / "results"
    make_job(root, job_id=JOB, evals=("express-ts",), runs=1)
    bad = runner.invoke(app, ["export", "nope", str(tmp_path / "o"), "--results", str(root)])
    assert bad.exit_code == 2 and "no job 'nope'" in bad.output
    assert export(root, tmp_path / "o", "--format", "csv").exit_code == 2


@needs(CHROMIUM.exists(), "Debian's chromium (apt-get install chromium)")
def test_inspect_view_shows_the_logs_and_unscored_runs_as_errors(exported):
    from playwright.sync_api import expect, sync_playwright

    _, runs, out = exported
    arm = sorted(
        (r for r in runs if (r.eval_id, r.variant) == ("express-ts", "skill")), key=lambda r: r.run_index
    )
    errors = sum(1 for r in arm if not r.scored)
    assert 0 < errors < len(arm)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inspect_cli = Path(sys.executable).parent / "inspect"
    view = subprocess.Popen(
        [str(inspect_cli), "view", "--log-dir", str(out), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_for_logs(f"{url}api/logs", count=len(list(out.iterdir())))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                # straight to the skill arm's log (its route, as a link to it would): the view opens a log
                # of its own choosing when it starts, and all four share a timestamp, so clicking through the
                # list raced with it on a loaded machine (the other arm's grid counted)
                log = next(f.name for f in out.iterdir() if "express-ts-skill" in f.name)
                page.goto(f"{url}#/logs/{log}")
                expect(page.get_by_text("express-ts:skill").first).to_be_visible(timeout=WAIT_MS)
                expect(page.get_by_text(f"{errors} of {len(arm)} samples")).to_be_visible(timeout=WAIT_MS)
                # the error column's cells (a row's status icon carries the same words as its title)
                expect(
                    page.locator('[role="gridcell"][data-col-id="error"]').filter(
                        has_text="provider_error: provider error (synthetic)"
                    )
                ).to_have_count(errors, timeout=WAIT_MS)
                expect(page.get_by_role("gridcell", name="skill-run_1", exact=True)).to_have_count(1)
            finally:
                browser.close()
    finally:
        view.terminate()
        view.wait(timeout=10)


def _wait_for_logs(url: str, count: int, seconds: float = 60.0) -> None:
    """Until the server answers and lists every log (it starts listening before it has read the folder)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if len(json.loads(response.read())["files"]) == count:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url}: not {count} logs after {seconds:g} s")
        time.sleep(0.2)


def test_an_environment_secret_in_any_form_is_in_no_exported_file(tmp_path, monkeypatch):
    """A secret of the harness's environment, planted in the transcript, the final message and the evidence in
    the forms the scrubber knows (raw, base64, hex, reversed, url-quoted), reaches no exported file."""
    value = "acme-live-" + "Zp4" * 8 + "/+="
    monkeypatch.setenv("ACME_API_TOKEN", value)
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("express-ts",), runs=1)
    run = runs[0]
    planted = {
        form: needle.decode("latin-1") for form, needle in forms(value) if form in ("raw", "base64", "hex")
    }
    planted["reversed"] = value[::-1]
    planted["url"] = urllib.parse.quote(value, safe="")
    tpath = root / run.run_dir / "transcript.json"
    t = Transcript.model_validate_json(tpath.read_bytes())
    t.messages[1].text = " ".join(planted.values())
    t.tool_calls[0].input = {"file_path": planted["base64"]}
    t.final_message = planted["hex"]
    tpath.write_text(t.model_dump_json(), encoding="utf-8")
    rpath = root / run.run_dir / "run.json"
    first = run.criteria[0].evidence[0]
    rpath.write_text(rpath.read_text(encoding="utf-8").replace(first, planted["raw"]), encoding="utf-8")
    out = tmp_path / "out"
    result = export(root, out)
    assert result.exit_code == 0, result.output
    data = b"".join(f.read_bytes() for f in out.iterdir())
    assert b"REDACTED" in data
    for form, needle in forms(value):
        assert needle not in data, form
    sample = (read_eval_log(str(next(out.iterdir()))).samples or [])[0]
    assert sample.scores is not None
    assert "[REDACTED]" in sample.scores[run.criteria[0].id].metadata["evidence"][0]  # the evidence went too
