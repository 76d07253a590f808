"""scripts/setup.sh is cheap to rerun: pip and npm run only when what they read changed (or what they made is
gone).

Played in a copy of the checkout's layout with recording stand-ins for pip, npm and apt-get (a real install
takes minutes and the registry); the script itself, bash and the stamp logic are the real ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PYTHON = f"""#!/bin/sh
# the venv's python: pip is recorded, anything else runs the real interpreter on this copy's src/
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "pip $*" >> "$CALLS"; exit 0; fi
PYTHONPATH="$(dirname "$0")/../../src" exec {sys.executable} "$@"
"""
NPM = """#!/bin/sh
echo "npm $*" >> "$CALLS"
rm -rf node/node_modules && mkdir -p node/node_modules
"""


def _checkout(tmp: Path) -> Path:
    co = tmp / "checkout"
    (co / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", co / "scripts" / "setup.sh")
    (co / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (co / "src" / "skillassay").mkdir(parents=True)
    (co / "src" / "skillassay" / "__init__.py").write_text("")
    (co / "node").mkdir()
    (co / "node" / "package.json").write_text("{}")
    (co / "node" / "package-lock.json").write_text("{}")
    venv_bin = co / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(PYTHON)
    tools = tmp / "bin"
    tools.mkdir()
    (tools / "npm").write_text(NPM)
    for name in ("apt-get", "sudo"):  # a machine without Chromium: recorded, never run
        (tools / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "$CALLS"\n')
    for f in [venv_bin / "python", *tools.iterdir()]:
        f.chmod(0o755)
    return co


def _setup(co: Path, tmp: Path) -> list[str]:
    calls = tmp / "calls.txt"
    calls.write_text("")
    env = {**os.environ, "PATH": f"{tmp / 'bin'}:{os.environ['PATH']}", "CALLS": str(calls)}
    out = subprocess.run(
        ["bash", "scripts/setup.sh"],
        cwd=co,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return [ln.split()[0] for ln in calls.read_text().splitlines() if ln.split()[0] in ("pip", "npm")]


def test_a_rerun_installs_only_what_changed(tmp_path: Path) -> None:
    co = _checkout(tmp_path)
    assert set(_setup(co, tmp_path)) == {"pip", "npm"}  # first run: both
    assert _setup(co, tmp_path) == []  # nothing changed: neither
    (co / "node" / "package-lock.json").write_text('{"lockfileVersion": 3}')
    assert _setup(co, tmp_path) == ["npm"]
    (co / "pyproject.toml").write_text('[project]\nname = "y"\n')
    assert set(_setup(co, tmp_path)) == {"pip"}
    shutil.rmtree(co / "node" / "node_modules")  # what npm made is gone: installed again
    assert _setup(co, tmp_path) == ["npm"]
    # the package no longer imports from this checkout: installed again
    shutil.rmtree(co / "src" / "skillassay")
    assert set(_setup(co, tmp_path)) == {"pip"}


RAILS_PACKAGES = ("ruby-rails", "ruby-bundler", "ruby-sqlite3", "ruby-faraday", "puma")


def _apt_installs(co: Path, tmp: Path, installed: set[str]) -> list[str]:
    """The Debian packages setup.sh asks apt-get for, on a machine whose dpkg knows ``installed``."""
    known = " ".join(sorted(installed))
    (tmp / "bin" / "dpkg-query").write_text(
        "#!/bin/sh\nfor p in "
        + known
        + '; do [ "$p" = "$3" ] && printf "install ok installed" && exit 0; done\n'
        "exit 1\n"
    )
    (tmp / "bin" / "dpkg-query").chmod(0o755)
    _setup(co, tmp)
    lines = (tmp / "calls.txt").read_text().splitlines()
    return [w for ln in lines if ln.startswith("apt-get") and " install " in ln for w in ln.split()[1:]]


def test_the_rails_packages_are_installed_only_when_missing(tmp_path: Path) -> None:
    co = _checkout(tmp_path)
    asked = _apt_installs(co, tmp_path, set())
    assert set(RAILS_PACKAGES) <= set(asked)
    asked = _apt_installs(co, tmp_path, {"ruby-rails", "ruby-bundler", "ruby-sqlite3", "puma"})
    assert [p for p in asked if p in RAILS_PACKAGES] == ["ruby-faraday"]
    assert not [p for p in _apt_installs(co, tmp_path, set(RAILS_PACKAGES)) if p in RAILS_PACKAGES]


LARAVEL_PACKAGES = ("php8.2-cli", "php-laravel-framework", "composer", "php-guzzlehttp-guzzle", "php-sqlite3")


def test_the_laravel_packages_are_installed_only_when_missing(tmp_path: Path) -> None:
    co = _checkout(tmp_path)
    assert set(LARAVEL_PACKAGES) <= set(_apt_installs(co, tmp_path, set()))
    asked = _apt_installs(co, tmp_path, set(LARAVEL_PACKAGES) - {"composer"})
    assert [p for p in asked if p in LARAVEL_PACKAGES] == ["composer"]
    assert not [p for p in _apt_installs(co, tmp_path, set(LARAVEL_PACKAGES)) if p in LARAVEL_PACKAGES]


def test_npm_installs_beside_pip_and_its_failure_fails_the_setup(tmp_path: Path) -> None:
    co = _checkout(tmp_path)
    # npm marks its start, waits until pip has run (a minute at most), then fails: pip ran while npm ran
    (tmp_path / "bin" / "npm").write_text(
        '#!/bin/sh\necho "npm-start" >> "$CALLS"\n'
        'i=0; while ! grep -q "^pip" "$CALLS" && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n'
        'echo "npm-end" >> "$CALLS"\necho "npm ERR! the registry said no"; exit 1\n'
    )
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "CALLS": str(calls)}
    out = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=co, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode != 0
    assert "the registry said no" in out.stderr and "npm ci --prefix node failed" in out.stderr
    order = [ln.split()[0] for ln in calls.read_text().splitlines() if ln.startswith(("npm", "pip"))]
    assert order.index("npm-start") < order.index("pip") < order.index("npm-end")
    assert not (co / "node" / "node_modules" / ".skillassay-setup").exists()  # the next run tries again
