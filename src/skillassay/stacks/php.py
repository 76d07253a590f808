"""The PHP family: apps with a ``composer.json``, their dependencies in ``vendor`` (Composer's layout). Its
framework (``laravel.py``) subclasses ``PhpStack``; ``PhpStack`` itself is a PHP app of no known framework.

Packagist cannot be reached where skillassay is built, but Debian's archive can, and it carries Laravel 8,
Guzzle 7 and their dependencies under ``/usr/share/php`` (each with an autoloader of its own). The install
the cache runs is therefore offline: it checks that every package the app's ``composer.lock`` names is the
version Debian installed (else it fails, naming each package that differs), then ``composer dump-autoload``
writes the app's own autoloader (its PSR-4 folders, files and class maps) and the ``vendor/autoload.php``
it writes is made to load Debian's autoloaders of the app's direct requirements first. What an app then
runs is the code its lock names, from Debian's packages.

``vendor`` must be a real folder of the app: Composer's autoloader finds the app's own classes from where
``vendor`` lies (``dirname(__DIR__)``), and PHP resolves links in ``__DIR__``, so through a link into the
cache the app's classes would be looked for in the cache entry (``refuses_linked_dependencies``: each app
copy gets a copy of the cached folder, a few small generated files)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from skillassay.stacks.base import SourceSyntax, Stack, system_path, which_real

PHP = SourceSyntax(
    language="php",
    extensions=(".php",),
    comment="// ",
    # a JSON string is a double-quoted PHP string: `$` interpolates there, so a mutant moving a call into a
    # string escapes it (as Ruby's `#`)
    literal="json",
    statement_end=";",
    # first segments of the import sources languages/php.py writes (`use GuzzleHttp\Client;` ->
    # guzzlehttp/client), Laravel's Http facade, and curl
    http_clients=frozenset({"guzzlehttp", "illuminate/support/facades/http", "curl"}),
    # the official PHP SDK (seamapi/seam) shares the Python SDK's method names and parameter names
    sdk_family="python",
    label="PHP",
    env_test='getenv("{name}") === "{value}"',
    choice="(({cond}) ? ({new}) : ({old}))",
)

PACKAGIST = ("repo.packagist.org", "packagist.org")  # what Composer reaches for a package it does not have

SHARE = "/usr/share/php"  # where Debian's PHP packages live (on PHP's default include_path)

# Debian's autoloader of a package an app may require directly (the framework's loads its own dependencies)
LOADERS = {
    "laravel/framework": "Illuminate/autoload.php",
    "guzzlehttp/guzzle": "GuzzleHttp/autoload.php",
    "guzzlehttp/psr7": "GuzzleHttp/Psr7/autoload.php",
    "guzzlehttp/promises": "GuzzleHttp/Promise/autoload.php",
    "monolog/monolog": "Monolog/autoload.php",
    "nesbot/carbon": "Carbon/autoload.php",
    "ramsey/uuid": "Ramsey/Uuid/autoload.php",
    "vlucas/phpdotenv": "Dotenv/autoload.php",
    "psr/log": "Psr/Log/autoload.php",
    "psr/http-client": "Psr/Http/Client/autoload.php",
    "psr/http-message": "Psr/Http/Message/autoload.php",
    "symfony/console": "Symfony/Component/Console/autoload.php",
    "symfony/http-foundation": "Symfony/Component/HttpFoundation/autoload.php",
}

# Composer packages whose Debian package is not php-<vendor>-<name> (nor php-<name> when they are the same)
_DEBIAN_ALIASES = {"ralouphie/getallheaders": "php-getallheaders"}

_DOCKERFILE = """\
FROM php:8.2-cli
COPY --from=composer:2 /usr/bin/composer /usr/bin/composer
# Composer unpacks the packages' zip files with unzip (the php image has neither it nor the zip extension)
RUN apt-get update && apt-get install -y --no-install-recommends unzip && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY composer.json composer.lock ./
RUN composer install --no-dev --no-scripts --no-autoloader
COPY . .
RUN composer dump-autoload --optimize
EXPOSE {port}
CMD {cmd}
"""

# what a PHP image installs for Composer to unpack packages with, and the apt steps around it
_COMPOSER_UNPACKERS = frozenset({"unzip", "git", "p7zip", "p7zip-full", "7zip"})
_APT_CLEANUP = ["rm", "-rf", "/var/lib/apt/lists/*"]


def _composer_unpackers_step(argv: list[str]) -> bool:
    """``apt-get update``, ``apt-get install -y [--no-install-recommends] unzip`` (Composer's unpackers
    only) or the apt lists' clean-up."""
    if argv == _APT_CLEANUP or argv in (["apt-get", "update"], ["apt", "update"]):
        return True
    if argv[:1] not in (["apt-get"], ["apt"]) or argv[1:2] != ["install"]:
        return False
    names = [a for a in argv[2:] if not a.startswith("-")]
    return bool(names) and all(n in _COMPOSER_UNPACKERS for n in names)


# the offline install's last step, in PHP: Debian's autoloaders (argv) loaded first by vendor/autoload.php
_PREPEND = (
    '$f = "vendor/autoload.php"; $s = file_get_contents($f); $r = "";'
    ' foreach (array_slice($argv, 1) as $p) { $r .= "require_once " . var_export($p, true) . ";\\n"; }'
    ' file_put_contents($f, preg_replace("/^<\\\\?php\\\\s*/", "<?php\\n\\n// Debian\'s packages\\n" . $r'
    ' . "\\n", $s, 1)) !== false || exit(1);'
)
_FAIL = 'fwrite(STDERR, $argv[1] . "\\n"); exit(1);'
_VERSIONS = (
    'echo PHP_VERSION, "\\n";'
    " passthru(\"dpkg-query -W -f '\\${Package} \\${Version}\\\\n' 'php-*' 2>/dev/null\");"
)


def upstream_version(debian: str) -> str:
    """A Debian package version's upstream part: ``2:8.83.26+dfsg-2`` -> ``8.83.26``."""
    version = debian.split(":", 1)[-1]
    if "-" in version:
        version = version.rsplit("-", 1)[0]
    return re.split(r"[+~]", version, maxsplit=1)[0]


def lock_version(version: str) -> str:
    """A composer.lock version as Debian writes it: ``v8.83.26`` -> ``8.83.26``."""
    return version[1:] if version[:1] in ("v", "V") and version[1:2].isdigit() else version


def debian_names(package: str) -> list[str]:
    """The Debian package names (or virtual names) Composer's ``package`` goes by."""
    if package in _DEBIAN_ALIASES:
        return [_DEBIAN_ALIASES[package]]
    vendor, _, name = package.partition("/")
    names = [f"php-{vendor}-{name}"]
    if vendor == name:
        names.append(f"php-{name}")
    return names


def installed_debian_php() -> dict[str, str]:
    """The installed Debian PHP packages by name and by what they provide -> their upstream version."""
    import subprocess  # only here: the rubric loads every stack's syntax and never runs a program

    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${Provides}\t${db:Status-Status}\n", "php-*"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, str] = {}
    for line in out.splitlines():
        name, version, provides, status = [*line.split("\t"), "", "", ""][:4]
        if status != "installed":
            continue
        found[name] = upstream_version(version)
        for virtual in provides.split(","):
            found.setdefault(virtual.strip().split(" ", 1)[0], found[name])
    return found


def lock_problems(lock: object, installed: Mapping[str, str]) -> list[str]:
    """What of the app's ``composer.lock`` Debian's installed packages do not satisfy: a package not
    installed, or installed at another version, one line each."""
    if not isinstance(lock, dict) or not isinstance(lock.get("packages", []), list):
        return ["composer.lock: not a Composer lock file (no packages list)"]
    problems = []
    for entry in [*lock.get("packages", []), *(lock.get("packages-dev") or [])]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.append("composer.lock: a package without a name")
            continue
        name, wanted = entry["name"], lock_version(str(entry.get("version", "")))
        have = next((installed[n] for n in debian_names(name) if n in installed), None)
        if have is None:
            problems.append(f"composer.lock: {name} {wanted}: no Debian package of it is installed")
        elif have != wanted:
            problems.append(f"composer.lock: {name} {wanted}: Debian's installed package is {have}")
    return problems


def offline_install(entry: Path, installed: Mapping[str, str]) -> list[str]:
    """The command installing the app whose ``composer.json`` and ``composer.lock`` are in ``entry`` from
    Debian's packages: failing with the lock's problems, or writing ``vendor`` (see the module's text)."""
    try:
        manifest = json.loads((entry / "composer.json").read_bytes())
        lock = json.loads((entry / "composer.lock").read_bytes())
    except FileNotFoundError as e:
        return _failing(f"{Path(e.filename).name}: missing (the offline install reads both)")
    except ValueError as e:
        return _failing(f"composer.json or composer.lock is not JSON: {e}")
    if not isinstance(manifest, dict):
        return _failing("composer.json: not a JSON object")
    config = manifest.get("config")
    if isinstance(config, dict) and config.get("vendor-dir", "vendor") != "vendor":
        # Composer would write the dependencies there, outside what the cache keeps (and anywhere on disk)
        return _failing(f"composer.json: config.vendor-dir {config['vendor-dir']!r}: only vendor is kept")
    requires = manifest.get("require")
    requires = requires if isinstance(requires, dict) else {}
    packages = [p for p in requires if "/" in p]
    problems = lock_problems(lock, installed)
    unknown = [p for p in packages if p not in LOADERS]
    problems += [f"composer.json: {p}: no Debian autoloader known for it" for p in unknown]
    if problems:
        return _failing("\n".join(problems))
    loaders = [f"{SHARE}/{LOADERS[p]}" for p in packages]
    import shlex

    dump = ["composer", "dump-autoload", "--no-interaction", "--no-scripts", "--no-plugins"]
    # composer's own settings and cache in the entry (the sealed install writes nothing else)
    script = 'COMPOSER_HOME="$PWD/.composer" "$@" && php -r "$0" -- ' + shlex.join(loaders)
    return ["sh", "-c", script, _PREPEND, *dump]


def _failing(message: str) -> list[str]:
    """A command failing with ``message`` on its error output (the install log shows it)."""
    return ["php", "-r", _FAIL, "--", message]


def composer_requires(text: str) -> dict[str, object]:
    """composer.json's require and require-dev (empty for a file that is not a JSON object)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, object] = {}
    for field in ("require", "require-dev"):
        if isinstance(data.get(field), dict):
            out.update(data[field])
    return out


class PhpStack(Stack):
    name = "php"
    family = "php"
    order = 49
    init_name = "php"
    init_language = "php"
    default_port = 8000
    definition_languages: ClassVar[tuple[str, ...]] = ("php",)
    manifests: ClassVar[tuple[str, ...]] = ("composer.json",)
    runtime_files: ClassVar[tuple[str, ...]] = ("composer.json",)
    images: ClassVar[tuple[str, ...]] = ("php",)
    # none by default: the shipped PHP apps' packages are Debian's, installed offline. An eval whose app needs
    # a package fetched from Packagist names the registry in its definition (``registries``: ``PACKAGIST``)
    registries: ClassVar[tuple[str, ...]] = ()
    syntaxes: ClassVar[tuple[SourceSyntax, ...]] = (PHP,)
    installer = "composer"
    refuses_linked_dependencies = True
    mount_order = 3
    dependency_files: ClassVar[tuple[str, ...]] = ("composer.json", "composer.lock")
    dependency_folder = "vendor"
    # PHP's version and every installed Debian PHP package's: a Debian update of one (a security release of
    # Laravel's) makes a new install, whose check says whether the app's lock still names what is there
    version_command: ClassVar[tuple[str, ...]] = ("php", "-r", _VERSIONS)

    def declares(self, app: Path, package: str, strict: bool) -> bool:
        text = (app / "composer.json").read_text(encoding="utf-8", errors="replace")
        if strict:
            return package in composer_requires(text)
        return f'"{package}"' in text

    def install_argv(self, files: Mapping[str, bytes]) -> list[str]:
        return ["composer", "install"]

    def install_command(self, argv: list[str], entry: Path) -> list[str]:
        # what `composer install` would do with the lock, from Debian's packages (Packagist unreachable)
        return offline_install(entry, installed_debian_php())

    def folds_install(self, argv: list[str]) -> bool:
        """``composer install`` and ``composer dump-autoload`` in a Dockerfile are what the cached install
        does (the app's autoloader included): not build steps run again in the app's copy. So is the image's
        apt step for the tools Composer unpacks downloads with, and nothing more: the offline install
        downloads nothing, and any other system package stays a build step that fails where it is missing."""
        if argv[:1] == ["composer"]:
            return argv[1:2] in (["install"], ["dump-autoload"], ["dumpautoload"])
        return _composer_unpackers_step(argv)

    def language(self, app: Path) -> str:
        return "php"

    def stack_id(self, app: Path) -> str:
        return "php" if self.name == "php" else f"php-{self.name}"

    def runtime_paths(self, venv: bool) -> tuple[list[Path], list[str]]:
        real = which_real("php")
        if real is None or system_path(real):
            return [], []  # Debian's PHP and its packages live under /usr: visible to every sealed process
        prefix = real.parent.parent
        return [prefix], [str(prefix / "bin")]

    def start_command(self, port: int) -> list[str]:
        return ["/bin/sh", "-c", f"php -S 0.0.0.0:${{PORT:-{port}}} index.php"]

    def dockerfile(self, app: Path, manifest: str, port: int) -> str:
        return _DOCKERFILE.format(port=port, cmd=json.dumps(self.start_command(port)))
