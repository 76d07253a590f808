"""The harness is generic: a wing for another API, added by a package that declares entry points and touches
no file of skillassay, runs through the real ``skillassay run`` to a scored run.

The toy wing (a weather API) brings one emulated route (a ``skillassay.services`` entry point: ``GET
/forecast``), one check (a ``skillassay.graders`` entry point that runs the app against the emulator and
compares what it prints with what the emulator answered) and one eval (a native definition naming that
grader). The reference agent applies the eval's golden solution, which calls the route; the pristine app does
not, so the same grader must score it 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_dist import write_distribution

WING = '''
import json, random, subprocess, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from skillassay.graders.base import GradeResult
from skillassay.services import service_class


class WeatherEmulator:
    """GET /forecast?city=...: a temperature chosen when the emulator starts (so no app can hard-code it)."""

    def __init__(self, **_):
        self.temperature = random.randint(-30, 40)
        self.requests = []

    def start(self, host="127.0.0.1", port=0):
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                emulator.requests.append(self.path)
                if not self.path.startswith("/forecast?city="):
                    self.send_error(404)
                    return
                body = json.dumps({"temperature": emulator.temperature}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.base_url = f"http://{host}:{self._server.server_port}"
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


def forecast_matches(criterion, ctx):
    """The app, run against the emulator, prints the temperature the emulator answered."""
    emulator = service_class("toy-weather")().start()
    try:
        proc = subprocess.run([sys.executable, "forecast.py", emulator.base_url], cwd=ctx.modified_dir,
                              capture_output=True, text=True, timeout=30)
        printed = proc.stdout.strip()
        right = printed == str(emulator.temperature) and any(r.startswith("/forecast") for r in emulator.requests)
        return GradeResult(fraction=1.0 if right else 0.0,
                           evidence=[f"printed {printed!r}; the emulator said {emulator.temperature}"])
    finally:
        emulator.stop()
'''  # noqa: E501 - code inside a string, kept as written

ENTRY_POINTS = """
[skillassay.services]
toy-weather = toy_wing:WeatherEmulator

[skillassay.graders]
toy_forecast = toy_wing:forecast_matches
"""

EVAL = """
id = "toy-forecast"
title = "Print the forecast from the weather API"
prompt = "Make forecast.py print the temperature the weather API at argv[1] gives for Oslo."
fixture = "weather"
pass_threshold = 1.0

[[criteria]]
id = "prints_the_forecast"
description = "The app prints the API's temperature"
weight = 1
grader = "toy_forecast"
"""

PRISTINE = 'print("unknown")\n'
GOLDEN = """import json, sys, urllib.request

with urllib.request.urlopen(sys.argv[1] + "/forecast?city=Oslo", timeout=10) as response:
    print(json.load(response)["temperature"])
"""


def _wing(root: Path) -> Path:
    return write_distribution(root, "toy-wing", {"toy_wing.py": WING}, ENTRY_POINTS, version="0.1")


def _suite(root: Path) -> Path:
    fixture = root / "fixtures" / "weather"
    for folder, source in (("app", PRISTINE), ("test_golden", GOLDEN)):
        (fixture / folder).mkdir(parents=True)
        (fixture / folder / "forecast.py").write_text(source)
    (root / "agent-evals").mkdir()
    (root / "agent-evals" / "toy-forecast.toml").write_text(EVAL)
    return root


@pytest.mark.parametrize("agent", ["reference", "noop"])
def test_a_second_wing_grades_its_eval_through_skillassay_run(tmp_path: Path, agent: str):
    site = _wing(tmp_path / "site")
    suite = _suite(tmp_path / "suite")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillassay",
            "run",
            str(suite),
            "--agent",
            agent,
            "--isolation",
            "none",
            "--canary-runs",
            "0",
            "--results",
            str(tmp_path / "results"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    [run] = json.loads(proc.stdout)["runs"]
    record = json.loads((tmp_path / "results" / run["run_dir"] / "run.json").read_text())
    [criterion] = record["criteria"]
    assert criterion["id"] == "prints_the_forecast"
    assert criterion["fraction"] == (1.0 if agent == "reference" else 0.0), criterion
    assert record["verdict"]["passed"] is (agent == "reference")
