#!/usr/bin/env bash
# Sets hone up from a fresh checkout: the Debian packages it builds with
# (scripts/install-deps.sh; scripts/test.sh adds the test-only ones and the
# npm peers), then configures build/ with Ninja (ccache is picked up when
# installed) and builds what the README's first command needs: the `hone` CLI (the library and every backend), and the
# Python module (build/python). The tests and benchmarks are built by
# scripts/test.sh.
# Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh                       # RelWithDebInfo in build/
#   HONE_BUILD_TYPE=Debug HONE_JOBS=2 scripts/setup.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scripts/install-deps.sh

build_type="${HONE_BUILD_TYPE:-RelWithDebInfo}"
jobs="${HONE_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
cmake --build build -j "$jobs" --target hone_cli hone_python
echo "setup: built hone in build/ ($build_type); try ./build/hone --help"
