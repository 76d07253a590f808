"""The Ruby family and the Rails stack (stacks/ruby.py, stacks/rails.py): detection from the Gemfile, the
definition's stack and language, the install the cache runs (Bundler, the lock as the app wrote it), no
registry unless the eval names one, the image and Dockerfile ``init`` writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skillassay import stacks
from skillassay.definitions.dockerfile import parse_dockerfile
from skillassay.definitions.loader import detect_stack
from skillassay.stacks.ruby import RUBYGEMS, gemfile_gems

FIXTURE_APP = Path(__file__).resolve().parents[2] / "evals" / "fixtures" / "cowork-rails-rb" / "app"


def _app(tmp_path: Path, gemfile: str) -> Path:
    app = tmp_path / "app"
    app.mkdir()
    (app / "Gemfile").write_text(gemfile)
    return app


def test_a_rails_app_is_detected_from_its_gemfile(tmp_path):
    rails = _app(tmp_path, 'source "https://rubygems.org"\ngem "rails", "~> 6.1.7"\ngem "puma"\n')
    assert stacks.detect(rails, strict=True).name == "rails"
    assert detect_stack(rails) == ("ruby-rails", "ruby")
    assert stacks.detect(FIXTURE_APP).name == "rails"


def test_a_gem_named_only_in_a_comment_is_not_declared(tmp_path):
    plain = _app(tmp_path, "source 'https://rubygems.org'\n# gem 'rails' (some day)\ngem 'sinatra'\n")
    assert gemfile_gems((plain / "Gemfile").read_text()) == ["sinatra"]
    found = stacks.detect(plain, strict=True)
    assert found is not None and found.name == "ruby" and found.stack_id(plain) == "ruby"


def test_the_install_is_bundlers_for_the_apps_own_lock():
    stack = stacks.by_name("rails")
    files = {n: (FIXTURE_APP / n).read_bytes() for n in ("Gemfile", "Gemfile.lock")}
    found = stack.dependencies(files.get)
    assert found is not None and found.family == "ruby" and list(found.files) == ["Gemfile", "Gemfile.lock"]
    assert found.install == ["bundle", "install"]  # what a user runs; the cache entry runs it frozen
    assert stack.dependencies(lambda rel: None) is None
    assert stacks.family("ruby").dependency_folder == ".bundle"


def test_a_gemfile_its_lock_does_not_satisfy_fails_the_install(tmp_path):
    """The agent adds a gem to the Gemfile and leaves the lock as it was: the install must not quietly
    resolve a lock of its own (the app would then run with gems its lock never named)."""
    if shutil.which("bundle") is None:
        pytest.fail("Bundler is missing (scripts/setup.sh installs Debian's ruby-bundler)")
    stack = stacks.by_name("rails")
    for name in ("Gemfile", "Gemfile.lock"):
        shutil.copy(FIXTURE_APP / name, tmp_path / name)
    ok = subprocess.run(stack.install_command(["bundle", "install"], tmp_path), cwd=tmp_path, timeout=120)
    assert ok.returncode == 0
    with (tmp_path / "Gemfile").open("a") as f:
        f.write('gem "faraday"\n')
    lock = (tmp_path / "Gemfile.lock").read_bytes()
    refused = subprocess.run(
        stack.install_command(["bundle", "install"], tmp_path), cwd=tmp_path, capture_output=True, timeout=120
    )
    assert refused.returncode != 0 and b"faraday" in refused.stdout + refused.stderr
    assert (tmp_path / "Gemfile.lock").read_bytes() == lock
    (tmp_path / "Gemfile.lock").unlink()  # no lock at all: Bundler resolves one, as for a new app
    assert "--frozen" not in stack.install_command(["bundle", "install"], tmp_path)


def test_no_registry_unless_the_eval_names_rubygems():
    assert stacks.registries("ruby") == []
    assert RUBYGEMS == ("rubygems.org", "index.rubygems.org")


def test_the_ruby_image_and_the_dockerfile_init_writes(tmp_path):
    assert stacks.family_of_image("ruby") == "ruby"
    assert "ruby" in [s.family for s in stacks.families()]
    rails = stacks.by_name("rails")
    text = rails.dockerfile(FIXTURE_APP, "Gemfile", 3000)
    spec = parse_dockerfile(text, tmp_path / "Dockerfile")
    assert spec.runtime == "ruby" and spec.expose == [3000]
    assert spec.start_argv() == ["bundle", "exec", "puma", "-C", "config/puma.rb"]


def test_ruby_source_syntax():
    syntax = stacks.syntax_for("app/services/booking_service.rb")
    assert syntax.language == "ruby" and syntax.comment == "# " and syntax.sdk_family == "python"
    assert "faraday" in stacks.http_clients("python") and "net/http" in syntax.http_clients
    assert syntax.env_is("SEAM_MUTANT", "1") == 'ENV["SEAM_MUTANT"] == "1"'
