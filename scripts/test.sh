#!/usr/bin/env bash
# Installs what only the tests use (Debian packages through
# scripts/install-deps.sh --tests, the npm peers), builds the rest of build/
# (tests, tools, benchmarks: scripts/setup.sh builds only the CLI and the
# Python module) and runs every test hone has (unit, CLI, conformance floor,
# functional suite, cross-checks, C API, install, Python) through ctest.
#
#   scripts/test.sh                  # all tests
#   scripts/test.sh -R conformance   # extra arguments go to ctest
#   HONE_SKIP_NPM=1 scripts/test.sh  # no npm installs (those tests skip)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ ! -f build/CTestTestfile.cmake ]; then
  echo "test: build/ is not configured; run scripts/setup.sh first" >&2
  exit 1
fi
scripts/install-deps.sh --tests
if [ "${HONE_SKIP_NPM:-0}" != "1" ]; then
  # The peers only feed tests that skip without them, so a failed npm install
  # (no network) is a warning, not a setup failure.
  for peer in bench/peers/ort/install.sh tests/functional/browser/install.sh scripts/install-corpus.sh; do
    if [ -x "$peer" ]; then
      "$peer" || echo "test: warning: $peer failed; the tests that need it will be skipped"
    fi
  done
fi

cmake --build build -j "${HONE_JOBS:-$(nproc)}"
exec ctest --test-dir build --output-on-failure -j"${HONE_TEST_JOBS:-2}" "$@"
