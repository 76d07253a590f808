#!/usr/bin/env bash
# Sets up everything skillassay and its tests need on a fresh machine (Debian/Ubuntu, Python >= 3.11, Node >= 20):
# the Python package in .venv, the node tools (official npm Seam SDK, @seamapi/types, Claude Code and Codex CLIs) in
# node/node_modules, Chromium for the report's browser test, bubblewrap + strace for sealed runs, and Ruby on Rails and
# Laravel (Debian's packages) for the Rails and Laravel fixtures.
# Safe and cheap to run again: it skips what is there, and the pip and npm installs when nothing they read changed.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v git >/dev/null || need_apt+=(git)
command -v node >/dev/null || need_apt+=(nodejs npm)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# bubblewrap seals every agent, app and grader process (docs/sealing.md); strace records what they touch
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v strace >/dev/null || need_apt+=(strace)
# Ruby on Rails from Debian's archive (RubyGems cannot be reached everywhere skillassay is built): the Rails
# fixtures' gems are these packages, resolved by `bundle install` without a registry (docs/languages.md)
# Laravel likewise (Packagist cannot be reached everywhere either): the Laravel fixtures' packages are these, installed
# offline by the PHP stack's install (stacks/php.py)
for pkg in ruby-rails ruby-bundler ruby-sqlite3 ruby-faraday puma \
  php8.2-cli php-laravel-framework composer php-guzzlehttp-guzzle php-sqlite3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing ${need_apt[*]} (Debian packages)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# A stamp records what each install read (a hash of its inputs); a rerun with the same inputs installs nothing.
digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

# the node tools install beside the Python one (each waits on its own downloads and unpacking): started here,
# awaited below, its output shown when it ends
node_stamp=node/node_modules/.skillassay-setup
node_want="$(digest node/package.json node/package-lock.json) $(node --version)"
npm_pid=""
npm_log="$(mktemp)"
trap 'rm -f "$npm_log"' EXIT
if [ -d node/node_modules ] && [ "$(cat "$node_stamp" 2>/dev/null)" = "$node_want" ]; then
  echo "setup: node/node_modules is up to date (package-lock.json unchanged): no npm ci"
else
  echo "setup: installing node tools (npm ci --prefix node), beside the Python install"
  npm ci --prefix node --no-audit --no-fund --loglevel=error > "$npm_log" 2>&1 &
  npm_pid=$!
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
py_stamp=.venv/.skillassay-setup
py_want="$(digest pyproject.toml) $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])')"
# the editable install must point at this checkout (a copied or moved .venv points elsewhere)
here="$(pwd -P)/src/skillassay"
if [ "$(cat "$py_stamp" 2>/dev/null)" = "$py_want" ] && \
   .venv/bin/python -c "import os, skillassay; raise SystemExit(os.path.dirname(os.path.realpath(skillassay.__file__)) != '$here')" 2>/dev/null; then
  echo "setup: .venv is up to date (pyproject.toml unchanged): no pip install"
else
  echo "setup: installing skillassay into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  # the Ray extra too: the distributed executor's tests run a real two-node cluster on this machine
  .venv/bin/python -m pip install -q -e '.[test,ray,inspect]'
  echo "$py_want" > "$py_stamp"
fi

if [ -n "$npm_pid" ]; then
  if ! wait "$npm_pid"; then
    cat "$npm_log" >&2
    echo "setup: npm ci --prefix node failed" >&2
    exit 1
  fi
  cat "$npm_log"
  echo "$node_want" > "$node_stamp"  # inside node_modules: npm ci removes it with the rest
fi

echo "setup: done. Try: .venv/bin/skillassay --help"
