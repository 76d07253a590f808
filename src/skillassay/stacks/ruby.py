"""The Ruby family: apps with a ``Gemfile``, installed by Bundler (``bundle install``, resolving the app's
``Gemfile.lock``) in a cache entry of their own. Its framework (``rails.py``) subclasses ``RubyStack``;
``RubyStack`` itself is a Ruby app of no known framework.

Bundler installs gems into the Ruby installation's own gem folders (or finds them there: a machine with the
Debian packages of Rails has every gem of a Rails 6.1 app installed, and ``bundle install`` then resolves the
lock without reaching RubyGems). What the cache entry keeps is Bundler's per-app settings folder, ``.bundle``;
the gems themselves are read where the runtime keeps them (``runtime_paths``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from skillassay.stacks.base import SourceSyntax, Stack, system_path, which_real

RUBY = SourceSyntax(
    language="ruby",
    extensions=(".rb",),
    comment="# ",
    literal="json",
    http_clients=frozenset(
        {"faraday", "net/http", "httparty", "rest-client", "excon", "typhoeus", "http", "open-uri"}
    ),
    # the gem seam shares the Python SDK's method names and keyword arguments
    sdk_family="python",
    label="Ruby",
    env_test='ENV["{name}"] == "{value}"',
    choice="(({cond}) ? ({new}) : ({old}))",
)

RUBYGEMS = ("rubygems.org", "index.rubygems.org")  # what Bundler reaches for a gem it does not have

_DOCKERFILE = """\
FROM ruby:3.1-slim
WORKDIR /app
COPY Gemfile Gemfile.lock ./
RUN bundle install
COPY . .
EXPOSE {port}
CMD {cmd}
"""

# `gem "rails", "~> 6.1"` in a Gemfile (any quotes, with or without parentheses)
_GEM_LINE = re.compile(r"""^\s*gem\s*\(?\s*["']([^"']+)["']""", re.MULTILINE)


def gemfile_gems(text: str) -> list[str]:
    """The gems a Gemfile declares (comments left out)."""
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return _GEM_LINE.findall(code)


class RubyStack(Stack):
    name = "ruby"
    family = "ruby"
    order = 39
    init_name = "ruby"
    init_language = "ruby"
    default_port = 3000
    definition_languages: ClassVar[tuple[str, ...]] = ("ruby",)
    manifests: ClassVar[tuple[str, ...]] = ("Gemfile",)
    runtime_files: ClassVar[tuple[str, ...]] = ("Gemfile", "config.ru")
    images: ClassVar[tuple[str, ...]] = ("ruby",)
    # none by default: the gems of the shipped Ruby apps are the Ruby installation's own (Debian's packages),
    # and `bundle install` resolves their locks without a registry. An eval whose app needs a gem fetched
    # from RubyGems names the registry in its definition (``registries``: ``RUBYGEMS``)
    registries: ClassVar[tuple[str, ...]] = ()
    syntaxes: ClassVar[tuple[SourceSyntax, ...]] = (RUBY,)
    installer = "bundle"
    mount_order = 2
    dependency_files: ClassVar[tuple[str, ...]] = ("Gemfile", "Gemfile.lock")
    dependency_folder = ".bundle"
    version_command: ClassVar[tuple[str, ...]] = ("ruby", "--version")

    def declares(self, app: Path, package: str, strict: bool) -> bool:
        text = (app / "Gemfile").read_text(encoding="utf-8", errors="replace")
        if strict:
            return package in gemfile_gems(text)
        return f'"{package}"' in text or f"'{package}'" in text

    def install_argv(self, files: Mapping[str, bytes]) -> list[str]:
        return ["bundle", "install"]

    def install_command(self, argv: list[str], entry: Path) -> list[str]:
        # the lock as the app wrote it: Bundler resolves it, never rewrites it (a Gemfile it does not
        # satisfy fails the install, as `bundle install --frozen` does in a deployment)
        return [*argv, "--frozen"] if (entry / "Gemfile.lock").exists() else list(argv)

    def language(self, app: Path) -> str:
        return "ruby"

    def stack_id(self, app: Path) -> str:
        return "ruby" if self.name == "ruby" else f"ruby-{self.name}"

    def runtime_paths(self, venv: bool) -> tuple[list[Path], list[str]]:
        real = which_real("ruby")
        if real is None or system_path(real):
            return [], []  # Debian's Ruby and its gems live under /usr: visible to every sealed process
        prefix = real.parent.parent  # <prefix>/bin/ruby (rbenv, a Ruby built from source)
        return [prefix], [str(prefix / "bin")]

    def start_command(self, port: int) -> list[str]:
        return ["bundle", "exec", "ruby", "app.rb"]

    def dockerfile(self, app: Path, manifest: str, port: int) -> str:
        return _DOCKERFILE.format(port=port, cmd=json.dumps(self.start_command(port)))
