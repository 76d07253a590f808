"""A Laravel app under test, sealed like every other stack's: on its first request it tries a loopback
listener of the host, another run's emulator and Packagist (a registry its install may reach, never the
running app) through PHP's own HTTP streams; every one is refused, and its own run's emulator still answers
(the golden scores 100)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillassay.isolation import Policy
from skillassay.seam.behaviour import validate
from skillassay.seam.loader import load_fixture

SUITE = Path(__file__).resolve().parents[3] / "evals"

# A hostile app: every URL of ATTACK_URLS tried once (PHP serves each request afresh: a file marks it done),
# each outcome printed
ATTACK = """<?php

$done = __DIR__.'/../storage/app/attacked';
if (! file_exists($done)) {
    touch($done);
    foreach (array_filter(explode(',', getenv('ATTACK_URLS') ?: '')) as $url) {
        $context = stream_context_create(['http' => ['timeout' => 5, 'ignore_errors' => true]]);
        $body = @file_get_contents($url, false, $context);
        $line = $body === false
            ? "ATTACK {$url} refused (".(error_get_last()['message'] ?? 'no answer').")"
            : "ATTACK {$url} reached ".explode(' ', $http_response_header[0] ?? 'HTTP/1.1 ?')[1];
        file_put_contents('php://stdout', $line."\\n");
    }
}
"""


@pytest.fixture
def other_emulator():
    from skillassay.seam.emulator.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=0.2).start()
    yield emu
    emu.stop()


def _hostile(tmp_path: Path, targets: list[str]):
    """The php-laravel golden with its front controller trying ``targets`` on the first request."""
    fixture = tmp_path / "evals" / "fixtures" / "php-laravel"
    shutil.copytree(SUITE / "fixtures" / "php-laravel", fixture)
    shutil.copy(SUITE / "rubric.json", tmp_path / "evals" / "rubric.json")
    public = fixture / "test_golden" / "public"
    (public / "attack.php").write_text(ATTACK)
    index = (public / "index.php").read_text()
    (public / "index.php").write_text(
        index.replace("<?php\n", "<?php\n\nrequire __DIR__.'/attack.php';\n", 1)
    )
    config = json.loads((fixture / "eval_config.json").read_text())
    config["run"] = {"env": {"ATTACK_URLS": ",".join(targets)}}
    (fixture / "eval_config.json").write_text(json.dumps(config))
    return load_fixture(fixture)


@pytest.mark.slow
def test_a_sealed_laravel_app_reaches_only_its_own_emulator(emulator, other_emulator, listener, tmp_path):
    targets = [
        f"http://127.0.0.1:{listener.server_address[1]}/",
        other_emulator.base_url.rstrip("/") + "/health",
        "https://repo.packagist.org/packages.json",
    ]
    d = _hostile(tmp_path, targets)
    result = validate(
        d.golden_dir, d, "laravel-attack", emulator=emulator, logs_dir=tmp_path / "logs", policy=Policy()
    )
    assert result.total == 100, {n: c.reason for n, c in result.checks.items()}
    out = (tmp_path / "logs" / "app.stdout.log").read_text()
    for target in targets:
        assert f"ATTACK {target} refused" in out, out[-3000:]
    assert listener.hits == 0


@pytest.mark.slow
def test_unsealed_the_same_laravel_app_reaches_the_listener(emulator, listener, tmp_path):
    """The control: without isolation the front controller reaches the host's listener."""
    target = f"http://127.0.0.1:{listener.server_address[1]}/"
    d = _hostile(tmp_path, [target])
    policy = Policy(isolation="none")
    validate(d.golden_dir, d, "laravel-attack2", emulator=emulator, logs_dir=tmp_path / "logs", policy=policy)
    assert f"ATTACK {target} reached 200" in (tmp_path / "logs" / "app.stdout.log").read_text()
    assert listener.hits == 1
