"""`skillassay model-server`: serves a script file; a bad file is an error naming it, exit 2."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx


def test_serves_a_script_and_rejects_bad_files(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("id: demo\nturns:\n  - - text: hi\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillassay", "model-server", str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("demo: http://127.0.0.1:")
        url = line.split(": ", 1)[1].strip()
        deadline = time.monotonic() + 10
        while True:
            try:
                assert httpx.head(url.rsplit("/s/", 1)[0], timeout=2).status_code == 200
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns: [[{bogus: 1}]]\n")
    for path in (bad, tmp_path / "missing.yaml"):
        result = subprocess.run(
            [sys.executable, "-m", "skillassay", "model-server", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2
        assert str(path) in result.stderr
