"""`skillassay init`: the starter suite, and an eval scaffolded around an app in styles the fixtures do not
use.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_dist import installed, write_distribution
from typer.testing import CliRunner

from skillassay.cli.main import app as cli
from skillassay.errors import SkillassayError
from skillassay.scaffold import detect, scaffold_app, write_starter

runner = CliRunner()


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())
    return root


@pytest.fixture
def flask_app(tmp_path):
    # a blueprint with a url_prefix, PATCH for updates and POST .../cancel for cancellation, port from the
    # environment
    return write(
        tmp_path / "stays-api",
        {
            "requirements.txt": "Flask==3.0.3\n",
            "main.py": """
            import os
            from flask import Flask
            from api.stays import bp
            app = Flask(__name__)
            app.register_blueprint(bp)
            if __name__ == "__main__":
                app.run(port=int(os.environ.get("PORT", 7070)))
        """,
            "api/__init__.py": "",
            "api/stays.py": """
            from flask import Blueprint, request
            from services import lodging
            bp = Blueprint("stays", __name__, url_prefix="/v2/stays")

            @bp.post("")
            def open_stay():
                return lodging.open(request.json), 201

            @bp.patch("/<stay_id>")
            def move_stay(stay_id):
                return lodging.move(stay_id, request.json)

            @bp.post("/<stay_id>/cancel")
            def end_stay(stay_id):
                return lodging.end(stay_id)

            @bp.get("/health")
            def health():
                return "ok"
        """,
            "services/lodging.py": "def open(d): ...\ndef move(i, d): ...\ndef end(i): ...\n",
            "node_modules/junk.js": "this must not be copied",
        },
    )


def test_detects_a_flask_app_in_another_style(flask_app):
    d = detect(flask_app)
    assert (d.language, d.framework, d.manifest) == ("python", "flask", "requirements.txt")
    assert d.port == 7070 and d.port_source.startswith("main.py:")
    life = {k: (v.method, v.path, v.handler) for k, v in d.lifecycle.items()}
    assert life == {
        "create": ("POST", "/v2/stays", "open_stay"),
        "update": ("PATCH", "/v2/stays/<stay_id>", "move_stay"),
        "cancel": ("POST", "/v2/stays/<stay_id>/cancel", "end_stay"),
    }


def test_express_inline_handlers_name_the_service_functions(tmp_path):
    app = write(
        tmp_path / "leases",
        {
            "package.json": json.dumps({"dependencies": {"express": "4.19.2"}, "scripts": {"build": "tsc"}}),
            "Dockerfile": 'FROM node:20-slim\nEXPOSE 4100\nCMD ["node", "dist/main.js"]\n',
            "src/main.ts": "const port = process.env.PORT ?? 9999;\n",
            "src/routes.ts": """
            import { Router } from 'express';
            import { startLease, changeLease, stopLease } from './leases';
            const r = Router();
            r.post('/leases', async (req, res) => { res.json(await startLease(req.body)); });
            r.put('/leases/:leaseId', async (req, res) => { res.json(await changeLease(req.params.leaseId, req.body)); });
            r.delete('/leases/:leaseId', async (req, res) => { await stopLease(req.params.leaseId); res.end(); });
            export default r;
        """,  # noqa: E501 - code inside a string, kept as written
        },
    )
    d = detect(app)
    assert (d.language, d.framework) == ("typescript", "express")
    assert d.port == 4100 and d.port_source == "Dockerfile:2"  # the Dockerfile wins over the code's default
    assert {k: v.handler for k, v in d.lifecycle.items()} == {
        "create": "startLease",
        "update": "changeLease",
        "cancel": "stopLease",
    }


def test_a_rails_app_in_another_style(tmp_path):
    """Rails: `scope` and a hash-rocket verb, `resources` with `except:`, the lifecycle's handlers the
    controller's actions."""
    app = write(
        tmp_path / "stays",
        {
            "Gemfile": 'source "https://rubygems.org"\ngem "rails", "~> 6.1.7"\n',
            "config/routes.rb": """
            Rails.application.routes.draw do
              scope "/v2" do
                resources :stays, except: %i[index new edit destroy]
              end
              post "/v2/stays/:id/cancel" => "stays#cancel"
            end
        """,
            "app/controllers/stays_controller.rb": """
            class StaysController < ApplicationController
              def create; end
              def update; end
              def cancel; end
            end
        """,
        },
    )
    d = detect(app)
    assert (d.language, d.framework, d.manifest) == ("ruby", "rails", "Gemfile")
    life = {k: (v.method, v.path, v.handler) for k, v in d.lifecycle.items()}
    assert life == {
        "create": ("POST", "/v2/stays", "create"),
        "update": ("PATCH", "/v2/stays/:id", "update"),
        "cancel": ("POST", "/v2/stays/:id/cancel", "cancel"),
    }
    # the route is declared in config/routes.rb, the work goes in the controller Rails' autoloading names
    assert {k: v.edited_files() for k, v in d.lifecycle.items()} == {
        k: ["app/controllers/stays_controller.rb"] for k in ("create", "update", "cancel")
    }


def test_init_app_on_rails_names_the_controller_not_the_routes_file(tmp_path):
    """The answer key's files to change and SCAFFOLD.md's handlers point at the namespaced controller, and the
    notes carry no Express-style mount advice for a routes file that gives whole paths."""
    app = write(
        tmp_path / "pms",
        {
            "Gemfile": 'source "https://rubygems.org"\ngem "rails", "~> 6.1.7"\n',
            "config/routes.rb": """
            Rails.application.routes.draw do
              namespace :api do
                resources :bookings, only: [:create, :update, :destroy]
              end
            end
        """,
            "app/controllers/api/bookings_controller.rb": """
            module Api
              class BookingsController < ApplicationController
                def create; end
                def update; end
                def destroy; end
              end
            end
        """,
        },
    )
    suite = tmp_path / "suite"
    res = runner.invoke(cli, ["init", str(suite), "--app", str(app), "--name", "pms"])
    assert res.exit_code == 0, res.output
    fixture = suite / "fixtures" / "pms"
    key = json.loads((fixture / "answer_key.json").read_text())
    assert key["expected_files_modified"] == ["app/controllers/api/bookings_controller.rb"]
    notes = (fixture / "SCAFFOLD.md").read_text()
    assert "handled by create in app/controllers/api/bookings_controller.rb" in notes
    assert "app.use(" not in notes and "mounted under a prefix" not in notes
    assert "config/initializers/seam.rb" in notes and "config/services.php" not in notes


def test_init_app_on_laravel_reads_the_route_files_and_names_the_controller(tmp_path):
    """Laravel: `Route::prefix()->group()` and `apiResource` in routes/api.php (served under /api), the
    files to change the controller PSR-4 names, no mount-prefix advice."""
    app = write(
        tmp_path / "stays",
        {
            "composer.json": '{"require": {"php": "^8.1", "laravel/framework": "^8.83"}}\n',
            "artisan": "<?php\n",
            "routes/api.php": """<?php
            use App\\Http\\Controllers\\StayController;
            use Illuminate\\Support\\Facades\\Route;

            Route::prefix('v2')->group(function () {
                Route::apiResource('stays', StayController::class)->only(['store', 'update', 'destroy']);
            });
        """,
            "app/Http/Controllers/StayController.php": """<?php
            namespace App\\Http\\Controllers;

            class StayController extends Controller
            {
                public function store() {}
                public function update($id) {}
                public function destroy($id) {}
            }
        """,
        },
    )
    suite = tmp_path / "suite"
    res = runner.invoke(cli, ["init", str(suite), "--app", str(app), "--name", "stays"])
    assert res.exit_code == 0, res.output
    fixture = suite / "fixtures" / "stays"
    config = json.loads((fixture / "eval_config.json").read_text())
    assert config["test_endpoints"]["create"]["path"] == "/api/v2/stays"
    assert config["test_endpoints"]["cancel"]["method"] == "DELETE"
    key = json.loads((fixture / "answer_key.json").read_text())
    assert key["expected_files_modified"] == ["app/Http/Controllers/StayController.php"]
    assert key["expected_package_additions"] == {"composer.json": ["seamapi/seam"]}
    notes = (fixture / "SCAFFOLD.md").read_text()
    assert "stack: php / laravel" in notes and "mounted under a prefix" not in notes
    assert "config/services.php" in notes and "routes/api.php" in notes and "config/routes.rb" not in notes


def test_an_app_of_no_known_stack_is_a_clear_error(tmp_path):
    (tmp_path / "x").mkdir()
    manifests = r"no package.json, requirements.txt, pyproject.toml, Gemfile or composer.json"
    with pytest.raises(SkillassayError, match=manifests):
        detect(tmp_path / "x")


def test_init_app_then_check_names_exactly_what_is_left(flask_app, tmp_path):
    suite = tmp_path / "suite"
    res = runner.invoke(cli, ["init", str(suite), "--app", str(flask_app), "--name", "stays"])
    assert res.exit_code == 0, res.output
    fixture = suite / "fixtures" / "stays"
    assert (fixture / "app" / "api" / "stays.py").is_file() and not (
        fixture / "app" / "node_modules"
    ).exists()
    assert (suite / "rubric.json").is_file()
    config = json.loads((fixture / "eval_config.json").read_text())
    assert config["app_port"] == 7070
    assert config["test_endpoints"]["update"] == {
        "method": "PATCH",
        "path": "/v2/stays/{{RESERVATION_ID}}",
        "payload": {},
    }
    key = json.loads((fixture / "answer_key.json").read_text())
    assert key["expected_files_modified"] == ["api/stays.py"]
    notes = (fixture / "SCAFFOLD.md").read_text()
    assert "port: 7070 (from main.py:" in notes and "open_stay" in notes
    assert 'CMD ["python", "main.py"]' in (fixture / "Dockerfile").read_text()

    res = runner.invoke(cli, ["check", str(suite)])
    assert res.exit_code == 2
    problems = res.output
    for where in (
        "eval_config.json at /prompt",
        "eval_config.json at /expected_api_path",
        "answer_key.json at /expected_calls",
        "test_golden: the golden solution is missing",
    ):
        assert where in problems, (where, problems)

    # the command line proper (main() turns skillassay's errors into exit 2 with the message)
    again = subprocess.run(
        [sys.executable, "-m", "skillassay", "init", str(suite), "--app", str(flask_app), "--name", "stays"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 2 and "exists; choose another --name" in again.stderr


def test_starter_suite_is_complete_and_refuses_a_full_folder(tmp_path):
    written = write_starter(tmp_path / "s")
    names = {p.name for p in written}
    assert {"rubric.json", "fixtures", "agent-evals", "skills", "README.md"} <= names
    assert (tmp_path / "s" / "fixtures" / "express-ts" / "test_golden").is_dir()
    assert not list((tmp_path / "s").rglob("node_modules"))
    res = runner.invoke(cli, ["check", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    with pytest.raises(SkillassayError, match=r"not empty"):
        write_starter(tmp_path / "s")


def test_scaffold_refuses_a_bad_name(flask_app, tmp_path):
    with pytest.raises(SkillassayError, match=r"--name"):
        scaffold_app(flask_app, tmp_path / "suite", "Bad Name!")


TOY_SCAFFOLD = """
from skillassay.scaffold import AppScaffold


class ToyScaffold(AppScaffold):
    def folder(self, suite, name):
        return suite / "toys" / name

    def write(self, app, suite, folder, name, found):
        (folder / "toy.txt").write_text(f"{name} {found.stack} {found.port}")


TOY = ToyScaffold()
NOT_ONE = object()
"""


def test_the_evals_files_are_the_registered_scaffolds(flask_app, tmp_path, monkeypatch):
    """`init --app` writes through the entry-point group skillassay.scaffolds: another package's scaffold
    writes its own eval around the copy; one that is not an AppScaffold, or none named among several, is
    refused."""
    from skillassay import plugins

    site = write_distribution(
        tmp_path / "site",
        "toy-scaffold",
        {"toy_scaffold.py": TOY_SCAFFOLD},
        "[skillassay.scaffolds]\ntoy = toy_scaffold:TOY\nbroken = toy_scaffold:NOT_ONE\n",
    )
    with installed(site, monkeypatch):
        folder, _found = scaffold_app(flask_app, tmp_path / "suite", "stays", kind="toy")
        assert folder == tmp_path / "suite" / "toys" / "stays"
        assert (folder / "toy.txt").read_text() == "stays flask 7070"
        assert (folder / "app" / "api" / "stays.py").is_file() and not (
            folder / "app" / "node_modules"
        ).exists()
        assert not (tmp_path / "suite" / "fixtures").exists()
        with pytest.raises(plugins.PluginError, match=r"'broken' is not an AppScaffold"):
            scaffold_app(flask_app, tmp_path / "suite", "other", kind="broken")
        with pytest.raises(plugins.PluginError, match=r"name one of seam, broken, toy"):
            scaffold_app(flask_app, tmp_path / "suite", "other")
