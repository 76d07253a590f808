"""The PHP family: apps with a ``composer.json``, their dependencies in ``vendor`` (Composer's layout). Its
framework (``laravel.py``) subclasses ``PhpStack``; ``PhpStack`` itself is a PHP app of no known framework.

Packagist cannot be reached where skillassay is built, but Debian's archive can, and it carries Laravel 8,
Guzzle 7 and their dependencies under ``/usr/share/php`` (each with an autoloader of its own). The install
the cache runs is therefore offline: it checks that every package the app's ``composer.lock`` names is the
version Debian installed, or a reviewed substitution of ``SUBSTITUTIONS`` (a package Debian ships at another
release of its line, or leaves to PHP itself: the install's log reports each one it makes); any other
difference fails it, naming each package that differs. Then ``composer dump-autoload`` writes the app's
own autoloader (its PSR-4 folders, files and class maps) and the ``vendor/autoload.php`` it writes is made
to load Debian's autoloaders of the app's direct requirements first. What an app then
runs is the code its lock names, from Debian's packages.

``vendor`` must be a real folder of the app: Composer's autoloader finds the app's own classes from where
``vendor`` lies (``dirname(__DIR__)``), and PHP resolves links in ``__DIR__``, so through a link into the
cache the app's classes would be looked for in the cache entry (``refuses_linked_dependencies``: each app
copy gets a copy of the cached folder, a few small generated files)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
    """The installed Debian PHP packages (``php-*`` and PHP's own ``php8*``) by name and by what they
    provide -> their upstream version."""
    import subprocess  # only here: the rubric loads every stack's syntax and never runs a program

    fields = "${Package}\t${Version}\t${Provides}\t${db:Status-Status}\n"
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", fields, "php-*", "php8*"],
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


@dataclass(frozen=True, kw_only=True)
class Substitution:
    """A package at the version the app's ``composer.lock`` names (as Packagist resolves it) that Debian
    ships at another version, or not at all because PHP itself has what it adds: reviewed, one entry a
    package and locked version, and reported by every install that makes it."""

    package: str
    locked: str  # the lock's version, exactly (Composer's ``v`` dropped, as ``lock_version``)
    debian: str  # the Debian package (or what one provides) the app gets instead
    version: str  # that package's upstream version, exactly; ``*``: any (PHP's own packages)
    why: str


_SYMFONY = (
    "the same Symfony 5.4 LTS line: Debian packages the symfony/symfony monorepo at 5.4.53, a later security"
    " release than this component's split on Packagist"
)
_CONTRACTS = "the same symfony/contracts 2.5 line: Debian's 2.5.5 is a later patch release"
_PHP81 = "PHP 8.2 defines everything this polyfill adds for older PHP (it is a no-op on 8.1 and later)"


def _symfony(version: str, why: str, **locked: str) -> list[Substitution]:
    """Symfony packages (``http_foundation`` for symfony/http-foundation) at their locked versions, each run
    as Debian's ``php-symfony-<name>`` at ``version``."""
    names = {key.replace("_", "-"): at for key, at in locked.items()}
    return [
        Substitution(package=f"symfony/{n}", locked=at, debian=f"php-symfony-{n}", version=version, why=why)
        for n, at in names.items()
    ]


def _polyfill(name: str, debian: str, why: str) -> Substitution:
    return Substitution(
        package=f"symfony/polyfill-{name}", locked="1.27.0", debian=debian, version="*", why=why
    )


# What the shipped Laravel fixtures' locks (Packagist's resolution of laravel/framework 8.83.26 and
# guzzlehttp/guzzle 7.4.5) get from Debian in place of what they name. A lock naming anything else that
# Debian does not have at its version fails the install.
SUBSTITUTIONS: tuple[Substitution, ...] = (
    Substitution(
        package="voku/portable-ascii",
        locked="1.6.1",
        debian="php-voku-portable-ascii",
        version="2.0.1",
        why="laravel/framework 8.83 requires ^1.6.1; Debian's Laravel is patched for portable-ascii 2",
    ),
    Substitution(
        package="egulias/email-validator",
        locked="2.1.25",
        debian="php-egulias-email-validator",
        version="3.2.5",
        why="laravel/framework 8.83 requires ^2.1.10; Debian's Laravel is patched for email-validator 3",
    ),
    Substitution(
        package="doctrine/lexer",
        locked="1.2.3",
        debian="php-doctrine-lexer",
        version="2.1.0",
        why="email-validator 2.1 requires lexer ^1.0.1; Debian's email-validator 3.2.5 is built on lexer 2",
    ),
    *_symfony(
        "5.4.53",
        _SYMFONY,
        console="5.4.36",
        css_selector="5.4.35",
        error_handler="5.4.36",
        event_dispatcher="5.4.35",
        finder="5.4.35",
        http_foundation="5.4.44",
        http_kernel="5.4.44",
        mime="5.4.43",
        process="5.4.36",
        routing="5.4.37",
        string="5.4.36",
        translation="5.4.35",
        var_dumper="5.4.36",
    ),
    *_symfony(
        "2.5.5",
        _CONTRACTS,
        deprecation_contracts="2.5.4",
        event_dispatcher_contracts="2.5.3",
        service_contracts="2.5.4",
        translation_contracts="2.5.4",
    ),
    _polyfill(
        "ctype", "php8.2-common", "PHP 8.2's ctype extension (Debian's php8.2-common) is what it polyfills"
    ),
    _polyfill(
        "iconv", "php8.2-common", "PHP 8.2's iconv extension (Debian's php8.2-common) is what it polyfills"
    ),
    _polyfill("mbstring", "php8.2-mbstring", "PHP 8.2's mbstring extension is what it polyfills"),
    _polyfill("intl-grapheme", "php8.2-intl", "PHP 8.2's intl extension is what it polyfills"),
    _polyfill("intl-idn", "php8.2-intl", "PHP 8.2's intl extension is what it polyfills"),
    _polyfill("intl-normalizer", "php8.2-intl", "PHP 8.2's intl extension is what it polyfills"),
    *(_polyfill(name, "php8.2-cli", _PHP81) for name in ("php72", "php73", "php80", "php81")),
)


@dataclass(frozen=True, kw_only=True)
class LockCheck:
    """What the offline install makes of the app's ``composer.lock``: what fails it, and the reviewed
    substitutions it makes (one line each)."""

    problems: list[str]
    substitutions: list[str]


def check_lock(
    lock: object, installed: Mapping[str, str], substitutions: tuple[Substitution, ...] = SUBSTITUTIONS
) -> LockCheck:
    """Each package of the app's ``composer.lock`` against Debian's installed packages: the version Debian
    has, a listed substitution whose Debian side is installed as listed, or a problem naming the package."""
    if not isinstance(lock, dict) or not isinstance(lock.get("packages", []), list):
        return LockCheck(
            problems=["composer.lock: not a Composer lock file (no packages list)"], substitutions=[]
        )
    problems: list[str] = []
    made: list[str] = []
    for entry in [*lock.get("packages", []), *(lock.get("packages-dev") or [])]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.append("composer.lock: a package without a name")
            continue
        name, wanted = entry["name"], lock_version(str(entry.get("version", "")))
        have = next((installed[n] for n in debian_names(name) if n in installed), None)
        if have == wanted:
            continue
        listed = next((s for s in substitutions if s.package == name and s.locked == wanted), None)
        if listed is not None:
            problem = _substitution_problem(listed, installed)
            if problem is None:
                made.append(_substitution_report(listed, installed[listed.debian]))
            else:
                problems.append(problem)
        elif have is None:
            problems.append(f"composer.lock: {name} {wanted}: no Debian package of it is installed")
        else:
            problems.append(f"composer.lock: {name} {wanted}: Debian's installed package is {have}")
    return LockCheck(problems=problems, substitutions=made)


def _substitution_problem(sub: Substitution, installed: Mapping[str, str]) -> str | None:
    """Why the reviewed ``sub`` cannot be made here (its Debian side is not installed as listed), or None."""
    have = installed.get(sub.debian)
    if have is not None and sub.version in ("*", have):
        return None
    found = "not installed" if have is None else f"installed at {have}"
    return (
        f"composer.lock: {sub.package} {sub.locked}: the reviewed substitution is Debian's {sub.debian}"
        f" {sub.version}, {found}"
    )


def _substitution_report(sub: Substitution, have: str) -> str:
    """The install log's line for a substitution made."""
    return (
        f"substituted: {sub.package} {sub.locked} (composer.lock) -> Debian's {sub.debian} {have}: {sub.why}"
    )


def lock_problems(lock: object, installed: Mapping[str, str]) -> list[str]:
    """What of the app's ``composer.lock`` Debian's installed packages do not satisfy (``check_lock``'s
    problems): a package not installed, or installed at another version, and no reviewed substitution."""
    return check_lock(lock, installed).problems


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
    checked = check_lock(lock, installed)
    unknown = [p for p in packages if p not in LOADERS]
    problems = checked.problems + [f"composer.json: {p}: no Debian autoloader known for it" for p in unknown]
    if problems:
        return _failing("\n".join(problems))
    loaders = [f"{SHARE}/{LOADERS[p]}" for p in packages]
    import shlex

    dump = ["composer", "dump-autoload", "--no-interaction", "--no-scripts", "--no-plugins"]
    # the substitutions made, first in the install's log; composer's own settings and cache in the entry
    # (the sealed install writes nothing else)
    report = f"printf '%s\\n' {shlex.join(checked.substitutions)} && " if checked.substitutions else ""
    script = report + 'COMPOSER_HOME="$PWD/.composer" "$@" && php -r "$0" -- ' + shlex.join(loaders)
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

    def install_key(self, name: str, data: bytes) -> bytes:
        # the reviewed substitutions decide whether the lock installs: a change to them checks it again
        # rather than reusing an install an older list allowed
        if name != "composer.lock":
            return data
        return data + b"\0substitutions " + repr(SUBSTITUTIONS).encode()

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
