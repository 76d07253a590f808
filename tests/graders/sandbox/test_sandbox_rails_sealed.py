"""A Rails app under test, sealed like every other stack's: at boot it tries a loopback listener of the host,
another run's emulator and RubyGems (a registry its install may reach, never the running app) through Ruby's
own Net::HTTP; every one is refused, and its own run's emulator still answers (the golden scores 100)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillassay.isolation import Policy
from skillassay.seam.behaviour import validate
from skillassay.seam.loader import load_fixture

SUITE = Path(__file__).resolve().parents[3] / "evals"

ATTACK = """
require "net/http"

# A hostile app: every URL of ATTACK_URLS tried at boot, each outcome printed
ENV.fetch("ATTACK_URLS", "").split(",").each do |url|
  response = Net::HTTP.get_response(URI(url))
  puts "ATTACK #{url} reached #{response.code}"
rescue StandardError, Timeout::Error => e
  puts "ATTACK #{url} refused (#{e.class})"
ensure
  $stdout.flush
end
"""


@pytest.fixture
def other_emulator():
    from skillassay.seam.emulator.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=0.2).start()
    yield emu
    emu.stop()


def _hostile(tmp_path: Path, targets: list[str]):
    """The cowork-rails-rb golden with an initializer trying ``targets`` at boot."""
    fixture = tmp_path / "evals" / "fixtures" / "cowork-rails-rb"
    shutil.copytree(SUITE / "fixtures" / "cowork-rails-rb", fixture)
    shutil.copy(SUITE / "rubric.json", tmp_path / "evals" / "rubric.json")
    (fixture / "test_golden" / "config" / "initializers").mkdir(parents=True)
    (fixture / "test_golden" / "config" / "initializers" / "attack.rb").write_text(ATTACK)
    config = json.loads((fixture / "eval_config.json").read_text())
    config["run"] = {"env": {"ATTACK_URLS": ",".join(targets)}}
    (fixture / "eval_config.json").write_text(json.dumps(config))
    return load_fixture(fixture)


@pytest.mark.slow
def test_a_sealed_rails_app_reaches_only_its_own_emulator(emulator, other_emulator, listener, tmp_path):
    targets = [
        f"http://127.0.0.1:{listener.server_address[1]}/",
        other_emulator.base_url.rstrip("/") + "/health",
        "https://rubygems.org/",
    ]
    d = _hostile(tmp_path, targets)
    result = validate(
        d.golden_dir, d, "rails-attack", emulator=emulator, logs_dir=tmp_path / "logs", policy=Policy()
    )
    assert result.total == 100, {n: c.reason for n, c in result.checks.items()}
    out = (tmp_path / "logs" / "app.stdout.log").read_text()
    for target in targets:
        assert f"ATTACK {target} refused" in out, out[-3000:]
    assert listener.hits == 0


@pytest.mark.slow
def test_unsealed_the_same_rails_app_reaches_the_listener(emulator, listener, tmp_path):
    """The control: without isolation the initializer reaches the host's listener."""
    target = f"http://127.0.0.1:{listener.server_address[1]}/"
    d = _hostile(tmp_path, [target])
    policy = Policy(isolation="none")
    validate(d.golden_dir, d, "rails-attack2", emulator=emulator, logs_dir=tmp_path / "logs", policy=policy)
    assert f"ATTACK {target} reached 200" in (tmp_path / "logs" / "app.stdout.log").read_text()
    assert listener.hits == 1
