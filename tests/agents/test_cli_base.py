"""The CLI agent base: a new CLI agent is one small class; the base finds the pinned CLI (never one on PATH),
records its version, gives it an explicit environment and the model endpoint, and types how it ended."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from skillassay.agents.installed import CliAgent
from skillassay.services.model_proxy import ModelEndpoint
from skillassay.transcripts import Message, Transcript


class ToyAgent(CliAgent):
    """All a new CLI agent needs: what differs, declared; three small methods."""

    name = "toy"
    model_api = "openai"
    binary_name = "toy"
    package = "@example/toy-cli"
    bin_env = "SKILLASSAY_TOY_BIN"
    config_dirs: ClassVar[dict[str, str]] = {"TOY_HOME": ".toy"}
    switches: ClassVar[dict[str, str]] = {"TOY_TELEMETRY": "off"}
    error_patterns = ((r"model is busy", "overloaded"), (r"out of turns", "max_turns"))

    def command(self, ctx, prompt, skill, notes):
        return ["--json", "--", prompt]

    def model_env(self, ctx, endpoint):
        return {"TOY_BASE_URL": endpoint.base_url + "/v1", "TOY_KEY": endpoint.token}

    def parse(self, records, ctx, times=None):
        done = next((r for r in records if r.get("type") == "done"), {})
        return Transcript(
            agent=self.name,
            messages=[Message(role="user", text=ctx.prompt)],
            final_message=done.get("text"),
            is_error=bool(done.get("error")),
        )

    def ended(self, records):
        return any(r.get("type") == "done" for r in records)


def toy_cli(path: Path, body: str) -> Path:
    """A toy CLI: a Python script that prints JSON lines (``body`` runs first, with ``env`` and ``argv``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys\nenv, argv = dict(os.environ), sys.argv[1:]\n{body}\n"
    )
    path.chmod(0o755)
    return path


def install(node_dir: Path, version: str, pin: str, body: str) -> None:
    """The toy CLI installed into a node folder, as `npm install --prefix` leaves it."""
    (node_dir / "package.json").parent.mkdir(parents=True, exist_ok=True)
    (node_dir / "package.json").write_text(json.dumps({"dependencies": {"@example/toy-cli": pin}}))
    pkg = node_dir / "node_modules" / "@example" / "toy-cli"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@example/toy-cli", "version": version}))
    toy_cli(node_dir / "node_modules" / ".bin" / "toy", body)


DONE = 'print(json.dumps({"type": "done", "text": json.dumps({"env": env, "argv": argv})}))'


@pytest.fixture
def endpoint() -> ModelEndpoint:
    return ModelEndpoint(base_url="http://127.0.0.1:9", token="sk-skillassay-run-" + "toy-token-0123456789")


def test_the_pinned_cli_from_the_cache_never_one_on_path(tmp_path, monkeypatch, make_ctx, endpoint):
    impostor = toy_cli(tmp_path / "bin" / "toy", 'print(json.dumps({"type": "done", "text": "impostor"}))')
    monkeypatch.setenv("PATH", f"{impostor.parent}:/usr/bin:/bin")
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLASSAY_TOY_BIN", raising=False)
    assert ToyAgent().locate() is None and "npm install --prefix" in ToyAgent().preflight({})
    result = ToyAgent().run(make_ctx(model_endpoint=endpoint))
    assert result.status == "harness_error" and result.error_kind == "cli_not_found"
    assert "not used unless named" in result.error  # the one on PATH was seen and refused

    install(tmp_path / "cache" / "node", "1.2.4", "1.2.3", DONE)
    agent = ToyAgent()
    assert agent.locate().source == "cache" and agent.version() == "1.2.4"
    result = agent.run(
        make_ctx(model_endpoint=endpoint, env={"TOY_EXTRA": "1", "OPENAI_API_KEY": "sk-leak-123456"})
    )
    assert result.status == "completed", result.error
    assert result.cli_source == "cache" and result.cli_version == "1.2.4"
    assert any("1.2.4 is installed, 1.2.3 is pinned" in n for n in result.notes)
    seen = json.loads(result.transcript.final_message)
    env = seen["env"]
    assert seen["argv"] == ["--json", "--", "Create a greeting file."]
    assert env["TOY_BASE_URL"] == "http://127.0.0.1:9/v1" and env["TOY_KEY"] == "[REDACTED]"
    assert env["TOY_TELEMETRY"] == "off" and env["TOY_HOME"].endswith("/.toy") and env["TOY_EXTRA"] == "1"
    assert "OPENAI_API_KEY" not in env

    # named on purpose, a binary on PATH is used, and said to be not the pinned one
    monkeypatch.setenv("SKILLASSAY_TOY_BIN", "toy")
    named = ToyAgent().run(make_ctx(model_endpoint=endpoint))
    assert named.transcript.final_message == "impostor" and named.cli_source == "configured"
    assert any("not the pinned CLI" in n for n in named.notes)


@pytest.mark.parametrize(
    ("error", "code", "status", "kind"),
    [
        ("the model is busy, try later", 1, "provider_error", "overloaded"),
        ("unexpected status 429 Too Many Requests", 1, "provider_error", "rate_limited"),
        ("HTTP 503 from upstream", 1, "provider_error", "server_error"),
        ("unexpected status 401 Unauthorized", 1, "harness_error", "auth_failed"),
        ("out of turns", 1, "agent_error", "max_turns"),
        ("something odd", 3, "agent_error", "exit_nonzero"),
    ],
)
def test_typed_endings_from_declared_patterns(tmp_path, make_ctx, endpoint, error, code, status, kind):
    binary = toy_cli(
        tmp_path / "toy",
        f'print(json.dumps({{"type": "done", "text": {error!r}, "error": True}}))\nsys.exit({code})',
    )
    result = ToyAgent(binary=str(binary)).run(make_ctx(model_endpoint=endpoint))
    assert (result.status, result.error_kind) == (status, kind), result.error
    assert result.exit_code == code and error in result.error
    if status != "agent_error":
        assert [e.kind for e in result.provider_errors] == [kind]


def test_no_end_record_is_a_crash_and_a_signal_is_recorded(tmp_path, make_ctx, endpoint):
    crashed = ToyAgent(
        binary=str(toy_cli(tmp_path / "a", 'sys.stderr.write("segfault-ish\\n"); sys.exit(2)'))
    ).run(make_ctx(model_endpoint=endpoint))
    assert (crashed.status, crashed.error_kind, crashed.exit_code) == ("agent_error", "crashed", 2)
    assert "segfault-ish" in crashed.error
    killed = ToyAgent(
        binary=str(toy_cli(tmp_path / "b", "import signal; os.kill(os.getpid(), signal.SIGKILL)"))
    ).run(make_ctx(model_endpoint=endpoint))
    assert killed.status == "agent_error" and killed.signal == 9 and killed.exit_code is None
    assert "signal 9" in killed.error


def _writes_into_home(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A CLI that, as Codex does to answer ``--version``, writes under its home; it records which home."""
    record = tmp_path / f"{name}-home.txt"
    script = tmp_path / name
    script.write_text(
        "#!/bin/sh\n"
        f'printf %s "$HOME" > {record}\n'
        'mkdir -p "$HOME/.cli/tmp" && touch "$HOME/.cli/tmp/lock"\n'
        'echo "toy 1.2.3 --append-system-prompt"\n'
    )
    script.chmod(0o755)
    return script, record


def test_the_harness_asks_a_cli_its_version_with_a_private_home_removed_after(tmp_path: Path):
    # a made-up home (/nonexistent) is created by the first CLI that writes there, as root, then shared by
    # every probe on the machine: each probe gets an empty home of its own, and none of it outlives the probe
    from skillassay.agents.installed import probe_version

    script, record = _writes_into_home(tmp_path, "toy-version")
    assert probe_version(str(script)) == "1.2.3"
    home = Path(record.read_text())
    assert home.is_absolute() and home != Path("/nonexistent")
    assert not home.exists()


def test_claude_codes_help_is_read_with_a_private_home_removed_after(tmp_path: Path):
    from skillassay.agents.claude_code import ClaudeCodeAgent

    script, record = _writes_into_home(tmp_path, "claude")
    assert ClaudeCodeAgent(binary=str(script)).supports_system_prompt_flag()
    home = Path(record.read_text())
    assert home.is_absolute() and home != Path("/nonexistent")
    assert not home.exists()
