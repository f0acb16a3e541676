#!/usr/bin/env bash
# Sets hone up from a fresh checkout: the Debian packages it builds with
# (scripts/install-deps.sh; scripts/test.sh adds the test-only ones and the
# npm peers), then configures build/ with Ninja (ccache is picked up when
# installed) and builds what the README's first command needs: the `hone` CLI (the library and every backend), and the
# Python module (build/python). The tests and benchmarks are built by
# scripts/test.sh.
# Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh                       # a new build/: Release, HONE_PCH=ON
#   HONE_BUILD_TYPE=RelWithDebInfo HONE_JOBS=2 scripts/setup.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scripts/install-deps.sh

# A new build/ is an optimized build without debug info (-g costs a third of
# the compile time) with precompiled headers (HONE_PCH) and unity batches
# (HONE_UNITY), the fastest first build; HONE_BUILD_TYPE=RelWithDebInfo gives debug info. An existing
# build/ keeps its settings, so a second run rebuilds only what changed.
config=()
if [ -n "${HONE_BUILD_TYPE:-}" ]; then
  config+=(-DCMAKE_BUILD_TYPE="$HONE_BUILD_TYPE")
elif [ ! -f build/CMakeCache.txt ]; then
  # -O2 as in RelWithDebInfo (CMake's Release is -O3, slower to compile),
  # so the code is the same as a RelWithDebInfo build's, less its debug info.
  config+=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
    "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" -DHONE_PCH=ON -DHONE_UNITY=ON)
fi
jobs="${HONE_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja "${config[@]}"
cmake --build build -j "$jobs" --target hone_cli hone_python
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' build/CMakeCache.txt)"
echo "setup: built hone in build/ ($build_type); try ./build/hone --help"
