#!/usr/bin/env bash
# Sets up everything skillassay and its tests need on a fresh machine (Debian/Ubuntu, Python >= 3.11, Node >= 20):
# the Python package in .venv, the node tools (official npm Seam SDK, @seamapi/types, Claude Code and Codex CLIs) in
# node/node_modules, Chromium for the report's browser test, and bubblewrap + strace for sealed runs.
# Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v git >/dev/null || need_apt+=(git)
command -v node >/dev/null || need_apt+=(nodejs npm)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# bubblewrap seals every agent, app and grader process (docs/sealing.md); strace records what they touch
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v strace >/dev/null || need_apt+=(strace)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing ${need_apt[*]} (Debian packages)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
echo "setup: installing skillassay into .venv"
.venv/bin/python -m pip install -q --upgrade pip
# the Ray extra too: the distributed executor's tests run a real two-node cluster on this machine
.venv/bin/python -m pip install -q -e '.[test,ray]'

echo "setup: installing node tools (npm ci --prefix node)"
npm ci --prefix node --no-audit --no-fund --loglevel=error

echo "setup: done. Try: .venv/bin/skillassay --help"
