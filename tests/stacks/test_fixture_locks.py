"""The Laravel and Rails fixtures' locks are real ones: what Composer or Bundler would write from the app's
composer.json or Gemfile against Packagist or RubyGems, only installed here with other flags. Read with the
package managers' own code (Composer's semver and content hash through Debian's PHP, Bundler's lock file
parser and Gem::Requirement through Ruby): every package carries the metadata its manager writes, every
requirement is met by a locked version, the lock's packages are exactly the requirements' closure, and the
lock is up to date with its manifest. The checks themselves are tried on locks broken each way."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "evals" / "fixtures"
LARAVEL = ("php-laravel", "hotel-php-laravel", "cowork-php-laravel")
RAILS = ("rails-rb", "hotel-rails-rb", "cowork-rails-rb")
# each fixture's app, its golden and its controls
FOLDERS = ("app", "test_golden", "test_controls/wrong-path", "test_controls/incomplete")

# Composer's platform packages: PHP, its extensions and libraries, Composer's APIs (no package locks them)
_PLATFORM = re.compile(r"php(-64bit|-ipv6|-zts|-debug)?|hhvm|ext-.+|lib-.+|composer(-plugin|-runtime)?-api")
_SHA = re.compile(r"[0-9a-f]{40}")
_LOCK_KEYS = (
    "_readme",
    "content-hash",
    "packages",
    "packages-dev",
    "aliases",
    "minimum-stability",
    "stability-flags",
    "prefer-stable",
    "prefer-lowest",
    "platform",
    "platform-dev",
    "plugin-api-version",
)
_PACKAGE_KEYS = (
    "name",
    "version",
    "source",
    "dist",
    "require",
    "type",
    "autoload",
    "notification-url",
    "license",
)
_PACKAGE_KEYS += ("description", "time")

# Composer's own code, from Debian's composer: the manifest's content hash, and whether versions satisfy
# constraints (stdin: {"manifest": text, "pairs": [[version, constraint], ...]})
_COMPOSER = (
    'require "/usr/share/php/Composer/autoload.php";'
    " $in = json_decode(stream_get_contents(STDIN), true);"
    ' $ok = array_map(fn ($p) => Composer\\Semver\\Semver::satisfies($p[0], $p[1]), $in["pairs"]);'
    ' echo json_encode(["hash" => Composer\\Package\\Locker::getContentHash($in["manifest"]), "ok" => $ok]);'
)


def _composer(manifest: str, pairs: list[tuple[str, str]]) -> tuple[str, list[bool]]:
    if shutil.which("php") is None:
        pytest.fail("PHP is missing (scripts/setup.sh installs Debian's php8.2-cli and composer)")
    stdin = json.dumps({"manifest": manifest, "pairs": pairs})
    done = subprocess.run(["php", "-r", _COMPOSER], input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    return out["hash"], out["ok"]


def _metadata_findings(lock: dict) -> list[str]:
    """The lock's own keys, and each package's metadata as Composer writes it from Packagist."""
    findings = [f"lock: no {k}" for k in _LOCK_KEYS if k not in lock]
    for p in lock.get("packages", []):
        name = p.get("name", "?")
        findings += [f"{name}: no {k}" for k in _PACKAGE_KEYS if not p.get(k)]
        source, dist = p.get("source") or {}, p.get("dist") or {}
        for where, ref in (("source", source.get("reference", "")), ("dist", dist.get("reference", ""))):
            if not _SHA.fullmatch(ref):
                findings.append(f"{name}: {where} reference {ref!r} is not the release's commit")
        if (
            dist.get("type") != "zip"
            or "shasum" not in dist
            or dist.get("reference", "?") not in dist.get("url", "")
        ):
            findings.append(f"{name}: dist is not Packagist's zip of the release (type, url, shasum)")
    return findings


def _offers(lock: dict) -> dict[str, str]:
    """What the locked packages satisfy: their names, and what they replace or provide -> the version."""
    offers: dict[str, str] = {}
    for p in lock.get("packages", []):
        for link in ("replace", "provide"):
            for other, version in (p.get(link) or {}).items():
                offers[other] = p["version"] if version == "self.version" else version
    for p in lock.get("packages", []):
        offers[p["name"]] = p["version"]
    return offers


def _requirements(manifest: dict, lock: dict) -> list[tuple[str, str, str]]:
    """Every (who, package, constraint) of the root and the locked packages, platform packages left out."""
    rows = [("composer.json", n, c) for n, c in (manifest.get("require") or {}).items()]
    for p in lock.get("packages", []):
        rows += [(p["name"], n, c) for n, c in (p.get("require") or {}).items()]
    return [r for r in rows if not _PLATFORM.fullmatch(r[1])]


def _closure(manifest: dict, lock: dict) -> set[str]:
    """The locked packages reachable from the root's requirements (through what each package requires,
    replaces or provides)."""
    by_offer: dict[str, str] = {}
    for p in lock.get("packages", []):
        by_offer[p["name"]] = p["name"]
        for link in ("replace", "provide"):
            by_offer.update(dict.fromkeys(p.get(link) or {}, p["name"]))
    requires = {p["name"]: list(p.get("require") or {}) for p in lock.get("packages", [])}
    todo, seen = list(manifest.get("require") or {}), set()
    while todo:
        found = by_offer.get(todo.pop())
        if found and found not in seen:
            seen.add(found)
            todo += requires[found]
    return seen


def composer_lock_findings(manifest_text: str, lock_text: str) -> list[str]:
    """What makes ``lock_text`` other than the lock Composer writes for ``manifest_text``."""
    manifest, lock = json.loads(manifest_text), json.loads(lock_text)
    findings = _metadata_findings(lock)
    offers = _offers(lock)
    rows = _requirements(manifest, lock)
    findings += [f"{who}: requires {n} {c}: nothing locked is it" for who, n, c in rows if n not in offers]
    met = [r for r in rows if r[1] in offers]
    digest, ok = _composer(manifest_text, [(offers[n], c) for _, n, c in met])
    for (who, n, c), satisfied in zip(met, ok, strict=True):
        if not satisfied:
            findings.append(f"{who}: requires {n} {c}: the lock has {offers[n]}")
    names = {p["name"] for p in lock.get("packages", [])}
    findings += [f"{n}: locked, but nothing requires it" for n in sorted(names - _closure(manifest, lock))]
    if lock.get("content-hash") != digest:
        findings.append(f"content-hash {lock.get('content-hash')!r}: Composer computes {digest!r}")
    return findings


def _laravel_locks() -> list[Path]:
    return [FIXTURES / f / d for f in LARAVEL for d in FOLDERS]


@pytest.mark.parametrize("folder", _laravel_locks(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_laravel_fixtures_lock_is_composers_own_for_its_manifest(folder):
    manifest = (folder / "composer.json").read_text()
    assert composer_lock_findings(manifest, (folder / "composer.lock").read_text()) == []


GOLDEN = FIXTURES / "php-laravel" / "test_golden"


def _broken(change) -> list[str]:
    lock = json.loads((GOLDEN / "composer.lock").read_text())
    change(lock)
    return composer_lock_findings((GOLDEN / "composer.json").read_text(), json.dumps(lock))


def _package(lock: dict, name: str) -> dict:
    return next(p for p in lock["packages"] if p["name"] == name)


def test_a_lock_naming_debians_portable_ascii_breaks_laravels_constraint():
    """Debian's voku/portable-ascii 2.0.1 in the lock (what the skeletal lock said) is not what Packagist
    resolves: laravel/framework 8.83 requires ^1.6.1."""
    found = _broken(lambda lock: _package(lock, "voku/portable-ascii").update(version="2.0.1"))
    assert found == ["laravel/framework: requires voku/portable-ascii ^1.6.1: the lock has 2.0.1"]


def test_a_lock_of_skeletal_entries_fails():
    """Entries with a name, version and tags only (no require, autoload, license, commits) are not what
    Composer writes: every missing field is named."""

    def strip(lock: dict) -> None:
        for p in lock["packages"]:
            for key in ("require", "autoload", "license", "description", "time"):
                p.pop(key, None)
            for where in ("source", "dist"):
                p[where]["reference"] = p["version"]

    found = _broken(strip)
    assert "laravel/framework: no require" in found and "laravel/framework: no autoload" in found
    assert "guzzlehttp/guzzle: source reference '7.4.5' is not the release's commit" in found
    assert any(f.endswith("locked, but nothing requires it") for f in found)  # no requires: no closure


@pytest.mark.parametrize(
    ("change", "finding"),
    [
        (
            lambda lock: lock["packages"].remove(_package(lock, "psr/log")),
            "monolog/monolog: requires psr/log ^1.0.1 || ^2.0 || ^3.0: nothing locked is it",
        ),
        (
            lambda lock: lock["packages"].append(
                {**copy.deepcopy(_package(lock, "psr/log")), "name": "acme/extra"}
            ),
            "acme/extra: locked, but nothing requires it",
        ),
        (
            lambda lock: lock.update({"content-hash": "582acc1662da309f6c577c7a0145403e"}),
            "content-hash '582acc1662da309f6c577c7a0145403e': Composer computes",
        ),
        (
            lambda lock: _package(lock, "guzzlehttp/guzzle").update(version="6.5.8"),
            "composer.json: requires guzzlehttp/guzzle ^7.4: the lock has 6.5.8",
        ),
        (lambda lock: lock.pop("plugin-api-version"), "lock: no plugin-api-version"),
    ],
    ids=["missing-dependency", "extra-package", "stale-hash", "root-unsatisfied", "no-top-level-key"],
)
def test_each_way_a_lock_can_be_wrong_is_named(change, finding):
    found = _broken(change)
    assert any(f.startswith(finding) for f in found), found


# Bundler's own reading of a Gemfile and its lock (ARGV: Gemfile, Gemfile.lock), each requirement checked
# with Gem::Requirement against the locked spec of that name
_BUNDLER = """
require "bundler"
require "json"
lock = Bundler::LockfileParser.new(File.read(ARGV[1]))
dsl = Bundler::Dsl.new
dsl.eval_gemfile(ARGV[0])
locked = lock.specs.to_h { |s| [s.name, s.version] }
check = ->(d) { { name: d.name, requirement: d.requirement.to_s,
  met: locked.key?(d.name) ? d.requirement.satisfied_by?(locked[d.name]) : nil } }
puts JSON.generate(
  specs: lock.specs.map { |s| { name: s.name, version: s.version.to_s, deps: s.dependencies.map(&check) } },
  dependencies: lock.dependencies.values.map(&check),
  gemfile: dsl.dependencies.map { |d| { name: d.name, requirement: d.requirement.to_s } },
  platforms: lock.platforms.map(&:to_s),
  bundler: lock.bundler_version&.to_s,
  remotes: lock.sources.flat_map { |s| s.respond_to?(:remotes) ? s.remotes.map(&:to_s) : [] })
"""


def _bundler(gemfile: Path, lock: Path) -> dict:
    if shutil.which("ruby") is None:
        pytest.fail("Ruby is missing (scripts/setup.sh installs Debian's ruby and ruby-bundler)")
    env = {**os.environ, "BUNDLE_GEMFILE": str(gemfile)}  # Bundler finds its root from the Gemfile
    argv = ["ruby", "-e", _BUNDLER, str(gemfile), str(lock)]
    done = subprocess.run(argv, cwd=gemfile.parent, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _unmet(who: str, deps: list[dict]) -> list[str]:
    out = []
    for d in deps:
        if d["met"] is None:
            out.append(f"{who}: depends on {d['name']} ({d['requirement']}): no spec of it is locked")
        elif not d["met"]:
            out.append(
                f"{who}: depends on {d['name']} ({d['requirement']}): the locked version does not meet it"
            )
    return out


def gemfile_lock_findings(gemfile: Path, lock: Path) -> list[str]:
    """What makes ``lock`` other than the lock Bundler writes for ``gemfile``."""
    read = _bundler(gemfile, lock)
    findings = [] if read["platforms"] else ["PLATFORMS: none"]
    findings += [] if read["bundler"] else ["BUNDLED WITH: none"]
    findings += (
        [] if "https://rubygems.org/" in read["remotes"] else ["GEM: remote is not https://rubygems.org/"]
    )
    for spec in read["specs"]:
        findings += _unmet(f"{spec['name']} ({spec['version']})", spec["deps"])
    findings += _unmet("DEPENDENCIES", read["dependencies"])
    wanted = {(d["name"], d["requirement"]) for d in read["gemfile"]}
    have = {(d["name"], d["requirement"]) for d in read["dependencies"]}
    findings += [f"Gemfile: gem {n} ({r}) is not in DEPENDENCIES" for n, r in sorted(wanted - have)]
    findings += [f"DEPENDENCIES: {n} ({r}) is not in the Gemfile" for n, r in sorted(have - wanted)]
    deps = {s["name"]: [d["name"] for d in s["deps"]] for s in read["specs"]}
    todo, seen = [d["name"] for d in read["dependencies"]], set()
    while todo:
        name = todo.pop()
        if name in deps and name not in seen:
            seen.add(name)
            todo += deps[name]
    findings += [f"{n}: locked, but nothing depends on it" for n in sorted(set(deps) - seen)]
    return findings


def _rails_locks() -> list[Path]:
    return [FIXTURES / f / d for f in RAILS for d in FOLDERS]


@pytest.mark.parametrize("folder", _rails_locks(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_rails_fixtures_lock_is_bundlers_own_for_its_gemfile(folder):
    assert gemfile_lock_findings(folder / "Gemfile", folder / "Gemfile.lock") == []


RAILS_APP = FIXTURES / "rails-rb" / "app"


@pytest.mark.parametrize(
    ("edit", "finding"),
    [
        (
            ("    rack (2.2.22)\n", "    rack (1.6.13)\n"),
            "actionpack (6.1.7.10): depends on rack (~> 2.0, >= 2.0.9)",
        ),
        (
            ("    thor (1.2.1)\n", ""),
            "railties (6.1.7.10): depends on thor (~> 1.0): no spec of it is locked",
        ),
        (("  puma (~> 5.6)\n", ""), "Gemfile: gem puma (~> 5.6) is not in DEPENDENCIES"),
        (
            ("    zeitwerk (2.6.1)\n", "    zeitwerk (2.6.1)\n    left-over (1.0.0)\n"),
            "left-over: locked, but",
        ),
        (("\nBUNDLED WITH\n   2.3.15\n", "\n"), "BUNDLED WITH: none"),
    ],
    ids=["unmet-version", "missing-gem", "gemfile-dependency-dropped", "extra-gem", "no-bundled-with"],
)
def test_each_way_a_gemfile_lock_can_be_wrong_is_named(tmp_path, edit, finding):
    text = (RAILS_APP / "Gemfile.lock").read_text()
    assert edit[0] in text
    (tmp_path / "Gemfile.lock").write_text(text.replace(edit[0], edit[1], 1))
    shutil.copy(RAILS_APP / "Gemfile", tmp_path / "Gemfile")
    found = gemfile_lock_findings(tmp_path / "Gemfile", tmp_path / "Gemfile.lock")
    assert any(f.startswith(finding) for f in found), found
