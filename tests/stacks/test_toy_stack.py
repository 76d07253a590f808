"""A stack added from one file (docs/languages.md): a package on sys.path declares it in ``skillassay.stacks``
and skillassay detects its apps, installs, builds and starts them with the stack's own commands on the real
host backend, and the Seam wing's rubric reads its HTTP client library, without an edit anywhere else. A stack
of a new runtime family gets its apps' dependencies, read from its own manifest, installed through the install
cache into the app's environment (graders/appenv) the same way."""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution

from skillassay import stacks
from skillassay.apps.backends.host import HostBackend
from skillassay.apps.runplan import make_plan
from skillassay.definitions.loader import detect_stack
from skillassay.graders import appenv
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


# a new runtime family: its manifest (toy.deps, a dependency a line) installed by its own command into
# toy_modules/, programs in toy_modules/bin
TOY_FAMILY = """
from skillassay.stacks.base import Stack, StackCommands
from skillassay.stacks.python import PYTHON

INSTALL = (
    "import os, sys\\n"
    "for name in sys.argv[1:]:\\n"
    "    os.makedirs(f'toy_modules/{name}')\\n"
    "os.makedirs('toy_modules/bin')\\n"
    "open('toy_modules/bin/toy', 'w').write('installed: ' + ' '.join(sys.argv[1:]))\\n"
)


class ToyRuntimeStack(Stack):
    name = "toyrt"
    family = "toyrt"
    order = 6
    init_name = "toyrt"
    init_language = "python"
    default_port = 8000
    definition_languages = ("toyrt",)
    manifests = ("toy.deps",)
    runtime_files = ("toy.deps",)
    images = ("toyrt",)
    registries = ()
    syntaxes = (PYTHON,)
    installer = "toy_modules"
    dependency_files = ("toy.deps", "toy.lock")
    dependency_folder = "toy_modules"

    def declares(self, app, package, strict):
        return False

    def language(self, app):
        return "python"

    def stack_id(self, app):
        return "toyrt"

    def dockerfile(self, app, manifest, port):
        return ""

    def install_argv(self, files):  # the names, not the comments: what the install is given
        names = [ln.strip() for ln in files["toy.deps"].decode().splitlines()]
        return [PYTHON_EXE, "-c", INSTALL, *[n for n in names if n and not n.startswith("#")]]

    def dependency_bins(self, app_dir):
        return [app_dir / "toy_modules" / "bin"]

    def commands(self, app):
        return StackCommands(start=f"{PYTHON_EXE} server.py")
"""

# the toy family's app: answers with what its installed dependency says and where its PATH starts
TOY_SERVER = """
import http.server
import os
from pathlib import Path


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path == "/health" else Path("toy_modules/bin/toy").read_bytes()
        if self.path == "/path":
            body = os.environ["PATH"].split(os.pathsep)[0].encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)


http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""


@pytest.fixture
def toy_family(tmp_path: Path, monkeypatch):
    source = f"PYTHON_EXE = {sys.executable!r}\n" + TOY_FAMILY
    site = write_distribution(
        tmp_path / "site",
        "toyrt_stack",
        {"toyrt_stack.py": source},
        "[skillassay.stacks]\ntoyrt = toyrt_stack:ToyRuntimeStack\n",
    )
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    with installed(site, monkeypatch, stacks.refresh):
        yield


@pytest.fixture
def toy(tmp_path: Path, monkeypatch):
    site = write_distribution(
        tmp_path / "site",
        "toyserve-stack",
        {"toyserve_stack.py": TOY_STACK},
        "[skillassay.stacks]\ntoyserve = toyserve_stack:ToyServeStack\n",
    )
    with installed(site, monkeypatch, stacks.refresh):
        yield


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
    site = write_distribution(
        tmp_path / "site",
        "bogus",
        {"bogus_stack.py": "class Bogus:\n    pass\n"},
        "[skillassay.stacks]\nbogus = bogus_stack:Bogus\n",
    )
    with (
        installed(site, monkeypatch, stacks.refresh),
        pytest.raises(stacks.StackError, match=r"'bogus' is not a skillassay.stacks.base.Stack subclass"),
    ):
        stacks.all_stacks()


def test_a_new_runtime_familys_manifest_is_read_and_installed_by_the_app_environment(toy_family, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "toy.deps").write_text("# the toy runtime's dependencies\nleft-pad\nis-even\n")
    (app / "server.py").write_text(SERVER)
    found = appenv.read_manifest(app)
    assert found.names == ["toy.deps"] and found.declares("toyrt") and not found.venv
    assert found.families["toyrt"].install[-2:] == ["left-pad", "is-even"]

    env = appenv.build(
        app, "pristine", tmp_path / "stage", tmp_path / "install.log", seal=None, env=dict(os.environ)
    )
    assert env.error is None and env.venv is None and env.cache_hits == {"toyrt": False}, env.error
    cached = env.folders["toyrt"]
    assert cached.name == "toy_modules" and cached.parent.name.startswith("toyrt-")
    assert sorted(p.name for p in cached.iterdir()) == ["bin", "is-even", "left-pad"]
    again = appenv.build(
        app, "modified", tmp_path / "stage2", tmp_path / "install2.log", seal=None, env=dict(os.environ)
    )
    assert again.cache_hits == {"toyrt": True} and again.folders == env.folders  # one install, shared

    work = tmp_path / "work"
    work.mkdir()
    mounts, path = env.attach(work, sealed=False)
    assert (work / "toy_modules" / "bin" / "toy").read_text() == "installed: left-pad is-even"
    assert path == env.bin_dirs(work) == [str(work / "toy_modules" / "bin")] and mounts == []

    (app / "toy.deps").write_text("left-pad\n")  # another manifest: another cache entry
    other = appenv.build(
        app, "modified", tmp_path / "stage3", tmp_path / "install3.log", seal=None, env=dict(os.environ)
    )
    assert other.cache_hits == {"toyrt": False} and other.folders["toyrt"] != cached


def _toy_backend(app: Path, tmp_path: Path, run_id: str) -> HostBackend:
    return HostBackend(
        plan=make_plan(app, None, None, None),
        source_dir=app,
        fixture="toyrt",
        run_id=run_id,
        logs_dir=tmp_path / "logs" / run_id,
        fixture_dir=tmp_path,
        health_timeout=20,
    )


def test_a_new_runtime_familys_app_is_installed_and_started_by_the_host_backend(toy_family, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "toy.deps").write_text("# the toy runtime's dependencies\nleft-pad\nis-even\n")
    (app / "server.py").write_text(TOY_SERVER)
    assert make_plan(app, None, None, None).runtime == "toyrt"

    backend = _toy_backend(app, tmp_path, "toy1")
    with backend:
        backend.prepare()
        url = backend.start({})
        assert backend.app_dir is not None
        modules = backend.app_dir / "toy_modules"
        assert modules.is_symlink() and modules.resolve().parent.name.startswith("toyrt-")
        with urllib.request.urlopen(url + "/", timeout=10) as answer:
            assert answer.read() == b"installed: left-pad is-even"  # its own install, linked in
        with urllib.request.urlopen(url + "/path", timeout=10) as answer:
            assert answer.read().decode() == str(modules / "bin")  # its programs first on PATH
    assert backend.facts["install_cache_hit"] is False
    assert not (app / "toy_modules").exists()  # installed in the cache, linked into the backend's copy

    again = _toy_backend(app, tmp_path, "toy2")
    with again:
        again.prepare()
    assert again.facts["install_cache_hit"] is True  # one install, shared


def test_a_new_familys_manifest_left_as_a_link_is_not_followed_by_the_host_backend(toy_family, tmp_path):
    from skillassay.apps.steps import StepFailed

    elsewhere = tmp_path / "host-file"
    elsewhere.write_text("left-pad\n")
    app = tmp_path / "app"
    app.mkdir()
    (app / "toy.deps").symlink_to(elsewhere)  # the agent's link to a file of the host
    (app / "server.py").write_text(TOY_SERVER)
    backend = _toy_backend(app, tmp_path, "toy-link")
    with backend, pytest.raises(StepFailed, match=r"toy.deps: .*\(not read\)"):
        backend.prepare()
    assert not (tmp_path / "cache" / "deps").exists()  # nothing installed from what it names
