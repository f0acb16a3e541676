#!/usr/bin/env bash
# Sets hone up from a fresh checkout: Debian packages (scripts/install-deps.sh),
# the npm peers the cross-check and browser tests use, then configures build/
# with Ninja (ccache is picked up when installed) and builds what the README's
# first command needs: the `hone` CLI (the library and every backend), and the
# Python module (build/python). The tests and benchmarks are built by
# scripts/test.sh.
# Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh                       # RelWithDebInfo in build/
#   HONE_BUILD_TYPE=Debug HONE_JOBS=2 scripts/setup.sh
#   HONE_SKIP_NPM=1 scripts/setup.sh       # no npm installs (those tests skip)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scripts/install-deps.sh

if [ "${HONE_SKIP_NPM:-0}" != "1" ]; then
  # The peers only feed tests that skip without them, so a failed npm install
  # (no network) is a warning, not a setup failure.
  for peer in bench/peers/ort/install.sh tests/functional/browser/install.sh; do
    if [ -x "$peer" ]; then
      "$peer" || echo "setup: warning: $peer failed; the tests that need it will be skipped"
    fi
  done
fi

build_type="${HONE_BUILD_TYPE:-RelWithDebInfo}"
jobs="${HONE_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
cmake --build build -j "$jobs" --target hone_cli hone_python
echo "setup: built hone in build/ ($build_type); try ./build/hone --help"
