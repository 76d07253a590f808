"""The PHP family and the Laravel stack (stacks/php.py, stacks/laravel.py): detection from composer.json and
artisan, the definition's stack and language, the offline install (the lock's versions checked against
Debian's packages, the app's autoloader with Debian's first), ``vendor`` a real folder of each app copy, no
registry unless the eval names Packagist, the start command, the image and Dockerfile ``init`` writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from skillassay import stacks
from skillassay.apps import deps
from skillassay.apps.runplan import make_plan
from skillassay.definitions.dockerfile import parse_dockerfile
from skillassay.definitions.loader import detect_stack
from skillassay.stacks.php import (
    PACKAGIST,
    SUBSTITUTIONS,
    check_lock,
    installed_debian_php,
    lock_problems,
    upstream_version,
)

FIXTURE = Path(__file__).resolve().parents[2] / "evals" / "fixtures" / "php-laravel"
GOLDEN = FIXTURE / "test_golden"


def _app(tmp_path: Path, manifest: dict, artisan: bool = False) -> Path:
    app = tmp_path / "app"
    app.mkdir()
    (app / "composer.json").write_text(json.dumps(manifest))
    if artisan:
        (app / "artisan").write_text("#!/usr/bin/env php\n<?php\n")
    return app


def _need_php() -> None:
    if shutil.which("php") is None or shutil.which("composer") is None:
        pytest.fail("PHP or Composer is missing (scripts/setup.sh installs Debian's php8.2-cli and composer)")


def _install(entry: Path) -> subprocess.CompletedProcess[str]:
    stack = stacks.by_name("laravel")
    command = stack.install_command(["composer", "install"], entry)
    return subprocess.run(command, cwd=entry, capture_output=True, text=True, timeout=120)


def _entry(tmp_path: Path, source: Path = GOLDEN) -> Path:
    entry = tmp_path / "entry"
    entry.mkdir()
    for name in ("composer.json", "composer.lock"):
        shutil.copy(source / name, entry / name)
    return entry


def test_a_laravel_app_is_detected_from_composer_json_or_artisan(tmp_path):
    laravel = _app(tmp_path, {"require": {"php": "^8.0", "laravel/framework": "^8.83"}})
    assert stacks.detect(laravel, strict=True).name == "laravel"
    assert detect_stack(laravel) == ("php-laravel", "php")
    assert stacks.detect(FIXTURE / "app").name == "laravel"
    other = tmp_path / "other"
    other.mkdir()
    (other / "composer.json").write_text("{}")
    (other / "artisan").write_text("<?php\n")
    assert stacks.detect(other, strict=True).name == "laravel"  # artisan alone says Laravel


def test_a_framework_named_only_in_the_description_is_not_declared(tmp_path):
    plain = _app(tmp_path, {"description": "not laravel/framework", "require": {"slim/slim": "^4"}})
    found = stacks.detect(plain, strict=True)
    assert found is not None and found.name == "php" and found.stack_id(plain) == "php"


def test_the_install_is_composers_for_the_apps_own_lock():
    stack = stacks.by_name("laravel")
    files = {n: (GOLDEN / n).read_bytes() for n in ("composer.json", "composer.lock")}
    found = stack.dependencies(files.get)
    assert (
        found is not None
        and found.family == "php"
        and list(found.files) == ["composer.json", "composer.lock"]
    )
    assert found.install == ["composer", "install"]  # what a user runs; the cache entry runs it offline
    assert stacks.family("php").dependency_folder == "vendor"


def test_debian_and_lock_versions_compare_by_their_upstream_part():
    assert upstream_version("8.83.26+dfsg-2") == "8.83.26"
    assert upstream_version("2:8.2+93") == "8.2"
    assert upstream_version("5.4.53+dfsg-0+deb12u1") == "5.4.53"
    installed = {"php-laravel-framework": "8.83.26", "php-egulias-email-validator": "3.2.5"}
    lock = {
        "packages": [
            {"name": "laravel/framework", "version": "v8.83.26"},
            {"name": "egulias/email-validator", "version": "3.2.6"},
            {"name": "acme/absent", "version": "1.0.0"},
        ]
    }
    assert lock_problems(lock, installed) == [
        "composer.lock: egulias/email-validator 3.2.6: Debian's installed package is 3.2.5",
        "composer.lock: acme/absent 1.0.0: no Debian package of it is installed",
    ]
    assert lock_problems([], installed) == ["composer.lock: not a Composer lock file (no packages list)"]


def test_the_fixture_locks_get_debians_versions_or_a_reviewed_substitution():
    """Every package of every Laravel fixture's lock is Debian's installed version or on the reviewed list,
    and every entry of the list is one some shipped lock needs (none left over once a lock moves on)."""
    installed = installed_debian_php()
    made: set[str] = set()
    for folder in ("php-laravel", "hotel-php-laravel", "cowork-php-laravel"):
        for lock in (FIXTURE.parent / folder).rglob("composer.lock"):
            checked = check_lock(json.loads(lock.read_text()), installed)
            assert checked.problems == [], lock
            made |= set(checked.substitutions)
    listed = {f"{s.package} {s.locked}" for s in SUBSTITUTIONS}
    assert {line.split(" (composer.lock)")[0].removeprefix("substituted: ") for line in made} == listed


def test_a_substitution_whose_debian_side_is_not_as_reviewed_fails():
    """A Debian update of a substituted package (portable-ascii 2.0.2), or PHP's extension missing under a
    polyfill: the reviewed substitution no longer holds, and the install fails naming the package."""
    lock = {
        "packages": [
            {"name": "voku/portable-ascii", "version": "1.6.1"},
            {"name": "symfony/polyfill-mbstring", "version": "v1.27.0"},
        ]
    }
    updated = {"php-voku-portable-ascii": "2.0.2"}
    assert check_lock(lock, updated).problems == [
        "composer.lock: voku/portable-ascii 1.6.1: the reviewed substitution is Debian's"
        " php-voku-portable-ascii 2.0.1, installed at 2.0.2",
        "composer.lock: symfony/polyfill-mbstring 1.27.0: the reviewed substitution is Debian's"
        " php8.2-mbstring *, not installed",
    ]
    assert check_lock(lock, {"php-voku-portable-ascii": "2.0.1", "php8.2-mbstring": "8.2.36"}).problems == []


def test_the_offline_install_loads_debians_laravel_and_guzzle_and_the_apps_classes(tmp_path):
    _need_php()
    entry = _entry(tmp_path)
    done = _install(entry)
    assert done.returncode == 0, done.stderr
    app = tmp_path / "app"
    shutil.copytree(GOLDEN, app)
    shutil.copytree(entry / "vendor", app / "vendor")
    probe = (
        'require "vendor/autoload.php"; echo Illuminate\\Foundation\\Application::VERSION, " ",'
        ' class_exists(GuzzleHttp\\Client::class) ? "guzzle" : "-", " ",'
        ' class_exists(App\\Services\\SeamApi::class) ? "app" : "-";'
    )
    ran = subprocess.run(["php", "-r", probe], cwd=app, capture_output=True, text=True, timeout=60)
    assert ran.stdout == "8.83.26 guzzle app", ran.stderr


def test_a_lock_naming_another_version_fails_the_install_naming_it(tmp_path):
    """The agent bumps Guzzle in the lock (or adds a package): the install must not quietly run the app on
    Debian's other version."""
    _need_php()
    entry = _entry(tmp_path)
    lock = json.loads((entry / "composer.lock").read_text())
    for package in lock["packages"]:
        if package["name"] == "guzzlehttp/guzzle":
            package["version"] = "7.9.2"
    lock["packages"].append({"name": "seamapi/seam", "version": "2.1.0"})
    (entry / "composer.lock").write_text(json.dumps(lock))
    refused = _install(entry)
    assert refused.returncode != 0
    assert "guzzlehttp/guzzle 7.9.2: Debian's installed package is 7.4.5" in refused.stderr
    assert "seamapi/seam 2.1.0: no Debian package of it is installed" in refused.stderr
    assert not (entry / "vendor").exists()


def test_the_install_reports_each_substitution_it_makes(tmp_path):
    """The lock names voku/portable-ascii 1.6.1 (what laravel/framework 8.83 requires); the app runs on
    Debian's 2.0.1: the install's log says so, one line per substituted package."""
    _need_php()
    entry = _entry(tmp_path)
    done = _install(entry)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("substituted: ")]
    assert (
        "substituted: voku/portable-ascii 1.6.1 (composer.lock) -> Debian's php-voku-portable-ascii 2.0.1:"
        " laravel/framework 8.83 requires ^1.6.1; Debian's Laravel is patched for portable-ascii 2"
    ) in lines
    lock = json.loads((entry / "composer.lock").read_text())
    assert len(lines) == len(check_lock(lock, installed_debian_php()).substitutions) > 1


def test_a_change_to_the_reviewed_substitutions_makes_a_new_install(monkeypatch):
    """An install the cache keeps was checked under the list of its day: with an entry dropped, the same lock
    gets a new install (its check run again), not the one the older list allowed."""
    from skillassay.stacks import php

    before = deps.install_key(stacks.by_name("laravel"), GOLDEN, ["composer", "install"])
    monkeypatch.setattr(php, "SUBSTITUTIONS", php.SUBSTITUTIONS[1:])
    assert deps.install_key(stacks.by_name("laravel"), GOLDEN, ["composer", "install"]) != before


def test_a_mismatch_off_the_list_fails_the_install_naming_it(tmp_path):
    """The agent moves portable-ascii in the lock to 1.6.0: not the reviewed substitution (1.6.1), so the
    install refuses it rather than running Debian's 2.0.1 under a lock that says otherwise."""
    _need_php()
    entry = _entry(tmp_path)
    lock = json.loads((entry / "composer.lock").read_text())
    next(p for p in lock["packages"] if p["name"] == "voku/portable-ascii")["version"] = "1.6.0"
    (entry / "composer.lock").write_text(json.dumps(lock))
    refused = _install(entry)
    assert refused.returncode != 0
    assert "composer.lock: voku/portable-ascii 1.6.0: Debian's installed package is 2.0.1" in refused.stderr
    assert "substituted" not in refused.stdout and not (entry / "vendor").exists()


def test_a_required_package_without_a_debian_autoloader_fails_the_install(tmp_path):
    _need_php()
    entry = _entry(tmp_path)
    manifest = json.loads((entry / "composer.json").read_text())
    manifest["require"]["psr/container"] = "^1.1"  # installed (Laravel needs it), but no loader is known
    (entry / "composer.json").write_text(json.dumps(manifest))
    refused = _install(entry)
    assert refused.returncode != 0 and "psr/container: no Debian autoloader known" in refused.stderr


def test_through_a_vendor_link_php_looks_for_the_apps_classes_in_the_cache(tmp_path):
    """Why the PHP family refuses linked dependencies: PHP resolves the link in ``__DIR__``, so a ``vendor``
    linked into the cache finds the app's classes there (none); each app copy gets a real folder instead,
    and what the app writes in it never reaches the cached install."""
    _need_php()
    entry = _entry(tmp_path)
    assert _install(entry).returncode == 0
    app = tmp_path / "app"
    shutil.copytree(GOLDEN, app)
    (app / "vendor").symlink_to(entry / "vendor", target_is_directory=True)
    probe = (
        'require "vendor/autoload.php"; echo class_exists(App\\Services\\SeamApi::class) ? "app" : "none";'
    )
    linked = subprocess.run(["php", "-r", probe], cwd=app, capture_output=True, text=True, timeout=60)
    assert linked.stdout == "none"
    assert stacks.family("php").refuses_linked_dependencies
    assert deps.copy_linked_folder(app, "vendor")
    assert not (app / "vendor").is_symlink() and (app / "vendor").is_dir()
    own = subprocess.run(["php", "-r", probe], cwd=app, capture_output=True, text=True, timeout=60)
    assert own.stdout == "app", own.stderr
    cached = (entry / "vendor" / "autoload.php").read_bytes()
    (app / "vendor" / "autoload.php").write_text("<?php // the app rewrote its own copy\n")
    assert (entry / "vendor" / "autoload.php").read_bytes() == cached
    assert not deps.copy_linked_folder(app, "vendor")  # a real folder is left as it is


def test_no_registry_unless_the_eval_names_packagist():
    assert stacks.registries("php") == []
    assert PACKAGIST == ("repo.packagist.org", "packagist.org")


def test_the_dockerfiles_composer_steps_are_the_cached_install(tmp_path):
    plan = make_plan(GOLDEN, FIXTURE / "Dockerfile", None, None)
    assert plan.runtime == "php" and plan.build == [] and plan.app_port == 8000
    assert plan.start == ["/bin/sh", "-c", "php -S 0.0.0.0:${PORT:-8000} -t public public/index.php"]
    other = tmp_path / "Dockerfile"
    other.write_text("FROM php:8.2-cli\nRUN composer install && php artisan config:cache\nCMD php x.php\n")
    assert make_plan(GOLDEN, other, None, None).build == [["/bin/sh", "-c", "php artisan config:cache"]]


def test_the_php_image_and_the_dockerfile_init_writes(tmp_path):
    assert stacks.family_of_image("php") == "php"
    laravel = stacks.by_name("laravel")
    assert laravel.start_command(8000) == [
        "/bin/sh",
        "-c",
        "php -S 0.0.0.0:${PORT:-8000} -t public public/index.php",
    ]
    spec = parse_dockerfile(
        laravel.dockerfile(FIXTURE / "app", "composer.json", 8000), tmp_path / "Dockerfile"
    )
    assert spec.runtime == "php" and spec.expose == [8000]
    assert spec.start_argv() == laravel.start_command(8000)
    # Composer on the real php image needs unzip to unpack what it downloads
    assert "apt-get install -y --no-install-recommends unzip" in laravel.dockerfile(FIXTURE / "app", "", 8000)


def test_the_images_apt_step_folds_only_composers_unpackers(tmp_path):
    """The offline install downloads nothing, so the image's apt step for unzip is not a build step; a
    Dockerfile that installs any other system package keeps it as a build step (it fails where it is
    missing, rather than being dropped unseen)."""
    folded = tmp_path / "Dockerfile"
    folded.write_text(
        "FROM php:8.2-cli\nRUN apt-get update && apt-get install -y --no-install-recommends unzip git"
        " && rm -rf /var/lib/apt/lists/*\nRUN composer install\nCMD php x.php\n"
    )
    assert make_plan(GOLDEN, folded, None, None).build == []
    kept = tmp_path / "Dockerfile.other"
    kept.write_text(
        "FROM php:8.2-cli\nRUN apt-get update && apt-get install -y unzip imagemagick\nCMD php x.php\n"
    )
    assert make_plan(GOLDEN, kept, None, None).build == [
        ["/bin/sh", "-c", "apt-get install -y unzip imagemagick"]
    ]


def test_php_source_syntax():
    syntax = stacks.syntax_for("app/Services/ReservationService.php")
    assert syntax.language == "php" and syntax.comment == "// " and syntax.sdk_family == "python"
    assert "guzzlehttp" in stacks.http_clients("python") and syntax.statement_end == ";"
    assert syntax.env_is("SEAM_MUTANT", "1") == 'getenv("SEAM_MUTANT") === "1"'


def test_a_debian_update_of_a_php_package_changes_the_runtime_version(tmp_path, monkeypatch):
    """The runtime's version is part of the install cache's key: a security update of Debian's Laravel must
    make a new install (its check run again), not reuse the one checked against the old version."""
    _need_php()
    fake = tmp_path / "bin"
    fake.mkdir()
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    command = list(stacks.family("php").version_command)
    printed = []
    for version in ("8.83.26+dfsg-2", "8.83.27+dfsg-1"):
        (fake / "dpkg-query").write_text(f"#!/bin/sh\necho 'php-laravel-framework {version}'\n")
        (fake / "dpkg-query").chmod(0o755)
        printed.append(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert "php-laravel-framework 8.83.26+dfsg-2" in printed[0] and printed[0] != printed[1]


def test_the_app_environment_gives_a_php_app_a_vendor_of_its_own(tmp_path):
    """A grader's commands on a plain PHP app (no framework) unsealed: ``vendor`` a copy, never the link
    through which PHP would look for the app's classes in the cache."""
    _need_php()
    from skillassay.graders import appenv

    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    guzzle = {"guzzlehttp/", "psr/http-", "ralouphie/", "symfony/deprecation-contracts"}
    lock = json.loads((GOLDEN / "composer.lock").read_text())
    lock["packages"] = [p for p in lock["packages"] if p["name"].startswith(tuple(guzzle))]
    (app / "composer.lock").write_text(json.dumps(lock))
    manifest = {"require": {"guzzlehttp/guzzle": "^7.4"}, "autoload": {"psr-4": {"Shop\\": "src/"}}}
    (app / "composer.json").write_text(json.dumps(manifest))
    (app / "src" / "Cart.php").write_text("<?php\nnamespace Shop;\nclass Cart {}\n")
    env = appenv.build(
        app, "pristine", tmp_path / "stage", tmp_path / "install.log", seal=None, env=dict(os.environ)
    )
    assert env.error is None, env.error
    work = tmp_path / "work"
    shutil.copytree(app, work)
    env.attach(work, sealed=False)
    assert (work / "vendor").is_dir() and not (work / "vendor").is_symlink()
    probe = (
        'require "vendor/autoload.php";'
        " echo class_exists(Shop\\Cart::class) && class_exists(GuzzleHttp\\Client::class);"
    )
    ran = subprocess.run(["php", "-r", probe], cwd=work, capture_output=True, text=True, timeout=60)
    assert ran.stdout == "1", ran.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"config": {"vendor-dir": "../elsewhere"}}, "vendor-dir '../elsewhere': only vendor is kept"),
        (None, "composer.lock: missing"),
    ],
)
def test_an_install_the_cache_cannot_keep_fails_saying_why(tmp_path, change, message):
    """A vendor folder elsewhere (Composer would write outside the cache entry), or no lock to check."""
    _need_php()
    entry = _entry(tmp_path)
    if change is None:
        (entry / "composer.lock").unlink()
    else:
        manifest = json.loads((entry / "composer.json").read_text())
        (entry / "composer.json").write_text(json.dumps({**manifest, **change}))
    refused = _install(entry)
    assert refused.returncode != 0 and message in refused.stderr, refused.stderr
    assert not (entry / "vendor").exists() and not (tmp_path / "elsewhere").exists()
