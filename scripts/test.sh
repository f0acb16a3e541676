#!/usr/bin/env bash
# Builds the rest of build/ (tests, tools, benchmarks: scripts/setup.sh builds
# only the CLI) and runs every test hone has (unit, CLI, conformance floor,
# functional suite, cross-checks) through ctest.
#
#   scripts/test.sh                  # all tests
#   scripts/test.sh -R conformance   # extra arguments go to ctest
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ ! -f build/CTestTestfile.cmake ]; then
  echo "test: build/ is not configured; run scripts/setup.sh first" >&2
  exit 1
fi
cmake --build build -j "${HONE_JOBS:-$(nproc)}"
exec ctest --test-dir build --output-on-failure -j"${HONE_TEST_JOBS:-2}" "$@"
