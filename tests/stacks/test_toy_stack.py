"""A stack added from one file (docs/languages.md): a package on sys.path declares it in ``skillassay.stacks``
and skillassay detects its apps, installs, builds and starts them with the stack's own commands on the real
host backend, and the Seam wing's rubric reads its HTTP client library, without an edit anywhere else."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from skillassay import plugins, stacks
from skillassay.apps.backends.host import HostBackend
from skillassay.apps.runplan import make_plan
from skillassay.definitions.loader import detect_stack
from skillassay.seam.rubric.project import Project
from skillassay.seam.rubric.rawhttp import RawHttp

# the whole stack: one module
TOY_STACK = '''
"""Apps served by Python's http.server, recognised by their serve.toml; they call Seam with toyhttp."""

import dataclasses

from skillassay.stacks.base import StackCommands
from skillassay.stacks.python import PYTHON, PythonStack

TOY_PYTHON = dataclasses.replace(PYTHON, http_clients=PYTHON.http_clients | {"toyhttp"})


class ToyServeStack(PythonStack):
    name = "toyserve"
    order = 5
    package = None
    init_name = "toyserve"
    manifests = ("serve.toml",)
    syntaxes = (TOY_PYTHON,)

    def commands(self, app):
        return StackCommands(build=["python -c \\"open('built.txt', 'w').write('built by toyserve')\\""],
                             start="python server.py")
'''

SERVER = """
import http.server
import os
from pathlib import Path


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path == "/health" else Path("built.txt").read_bytes()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)


http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""

CLIENT = """
import toyhttp


def unlock(seam_url, device_id):
    return toyhttp.post(f"{seam_url}/locks/unlock_door", json={"device_id": device_id})
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "toyserve_stack.py").write_text(TOY_STACK)
    info = site / "toyserve_stack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyserve-stack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skillassay.stacks]\ntoyserve = toyserve_stack:ToyServeStack\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(site))
    plugins.refresh()
    stacks.refresh()
    yield
    monkeypatch.undo()
    plugins.refresh()
    stacks.refresh()


@pytest.fixture
def app(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    app.mkdir()
    (app / "serve.toml").write_text("[serve]\n")
    (app / "server.py").write_text(SERVER)
    (app / "client.py").write_text(CLIENT)
    return app


def _raw_routes(app: Path) -> list[str]:
    project = Project.load(app, ["client.py", "server.py"])
    return [r.route for r in RawHttp(project).requests()]


def test_a_stack_from_one_file_is_detected_built_and_graded(toy, app, tmp_path):
    assert stacks.detect(app).name == "toyserve"
    assert detect_stack(app) == ("python-toyserve", "python")

    plan = make_plan(app, None, None, None)  # no Dockerfile, no `run`: the stack's own commands
    assert plan.runtime == "python" and plan.start == ["/bin/sh", "-c", "python server.py"]
    backend = HostBackend(
        plan=plan,
        source_dir=app,
        fixture="toy",
        run_id="toy1",
        logs_dir=tmp_path / "logs",
        fixture_dir=tmp_path,
        health_timeout=20,
    )
    with backend:
        backend.prepare()
        url = backend.start({})
        with urllib.request.urlopen(url + "/", timeout=10) as answer:
            assert answer.read() == b"built by toyserve"
    assert not (app / "built.txt").exists()  # built in the backend's copy

    assert _raw_routes(app) == ["/locks/unlock_door"]  # the rubric knows toyhttp from the stack


def test_without_the_stack_nothing_knows_the_app(app):
    assert stacks.detect(app) is None and detect_stack(app) == ("unknown", "python")
    with pytest.raises(Exception, match="nothing says how to start the app"):
        make_plan(app, None, None, None)
    assert _raw_routes(app) == []  # toyhttp is no HTTP client to the rubric


def test_a_registered_stack_that_is_no_stack_is_named(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "bogus-1.0.dist-info").mkdir(parents=True)
    (site / "bogus_stack.py").write_text("class Bogus:\n    pass\n")
    (site / "bogus-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: bogus\nVersion: 1.0\n"
    )
    (site / "bogus-1.0.dist-info" / "entry_points.txt").write_text(
        "[skillassay.stacks]\nbogus = bogus_stack:Bogus\n"
    )
    monkeypatch.syspath_prepend(str(site))
    plugins.refresh()
    stacks.refresh()
    try:
        with pytest.raises(
            stacks.StackError, match=r"'bogus' is not a skillassay.stacks.base.Stack subclass"
        ):
            stacks.all_stacks()
    finally:
        monkeypatch.undo()
        plugins.refresh()
        stacks.refresh()
