#!/usr/bin/env bash
# Builds hone's libFuzzer targets with clang 16 (libFuzzer + AddressSanitizer)
# in build-fuzz/ and runs each for SECONDS (default 300), all in parallel at
# nice 19. Targets: onnx_import_fuzzer (ONNX models), npy_fuzzer (.npy files),
# manifest_fuzzer (a package's manifest.json), package_fuzzer (.hone files:
# zip container, sums, signature). Exits non-zero when any target crashes.
#   scripts/fuzz.sh 600                      # every target, 10 minutes each
#   scripts/fuzz.sh 60 npy_fuzzer            # one target
# Seeds: tests/fuzz/corpus/<target>/ (kept small; the import fuzzer also takes
# small models of the ONNX backend test data) and tests/fuzz/regressions/
# (inputs that once crashed). New corpus entries go to build-fuzz/corpus/<target>/;
# crash inputs to build-fuzz/crashes/<target>/, and a summary line per target
# (executions, coverage, features) to build-fuzz/summary.txt.
# The fuzz build is not part of CI: it needs clang-16, libclang-rt-16-dev and
# libomp-16-dev, which this script installs through apt-get when missing.
set -euo pipefail

SECONDS_TO_RUN="${1:-300}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(onnx_import_fuzzer npy_fuzzer manifest_fuzzer package_fuzzer)
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
DATA=/usr/share/libonnx-testdata/data/node
JOBS="${JOBS:-2}"

if ! command -v clang++-16 >/dev/null || [ ! -d /usr/lib/llvm-16/lib/clang/16/lib/linux ] ||
   ! ls /usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
   [ ! -e /usr/lib/llvm-16/lib/libomp.so ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "fuzz.sh: installing clang-16 libclang-rt-16-dev libomp-16-dev"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev libomp-16-dev
fi

# libstdc++ 12's <expected> is hidden from clang 16 unless __cpp_concepts says C++20 concepts.
FLAGS="-Wno-macro-redefined -D__cpp_concepts=202002L -fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer"
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang-16 CXX=clang++-16 cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHONE_FUZZ=ON -DHONE_BUILD_TESTS=OFF -DHONE_BUILD_BENCH=OFF \
    -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS"
fi
nice ninja -C "$BUILD" -j"$JOBS" "${TARGETS[@]}"

# Seeds of each target: the committed corpus, crash regressions and, for the
# importer, a few dozen of the smallest test-data models across many ops.
seed_corpus() {
  local target="$1" dir="$2"
  mkdir -p "$dir"
  cp "$ROOT/tests/fuzz/corpus/$target/"* "$dir"/ 2>/dev/null || true
  cp "$ROOT/tests/fuzz/regressions/$target/"* "$dir"/ 2>/dev/null || true
  case "$target" in
    onnx_import_fuzzer)
      cp "$ROOT"/tests/fuzz/regressions/*.onnx "$dir"/ 2>/dev/null || true
      if [ -d "$DATA" ]; then
        find "$DATA" -name model.onnx -size -4k -printf '%s %p\n' | sort -n | awk 'NR % 12 == 1 {print $2}' |
          head -60 | while read -r f; do cp "$f" "$dir/$(basename "$(dirname "$f")").onnx"; done
        for t in test_if test_loop11 test_scan9_sum test_sequence_insert_at_back test_optional_has_element; do
          [ -f "$DATA/$t/model.onnx" ] && cp "$DATA/$t/model.onnx" "$dir/$t.onnx"
        done
      fi
      ;;
    npy_fuzzer) cp "$ROOT"/tests/unit/core/data/npy/*.npy "$dir"/ 2>/dev/null || true ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
pids=()
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$target"
  seed_corpus "$target" "$corpus"
  mkdir -p "$BUILD/crashes/$target"
  echo "fuzz.sh: $target: $(ls "$corpus" | wc -l) seeds, running for ${SECONDS_TO_RUN}s"
  nice -n 19 "$BUILD/tests/fuzz/$target" "$corpus" -max_total_time="$SECONDS_TO_RUN" \
    -rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=20 -max_len=262144 \
    -artifact_prefix="$BUILD/crashes/$target/" -print_final_stats=1 >"$BUILD/$target.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!TARGETS[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "fuzz.sh: ${TARGETS[$i]} CRASHED: see $BUILD/${TARGETS[$i]}.log and $BUILD/crashes/${TARGETS[$i]}/"
    status=1
  fi
done
: >"$BUILD/summary.txt"
for target in "${TARGETS[@]}"; do
  log="$BUILD/$target.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo '?')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo '?')
  echo "$target: executions $execs, coverage $cov edges, features $ft, corpus $(ls "$BUILD/corpus/$target" | wc -l), crashes $(ls "$BUILD/crashes/$target" | wc -l)" |
    tee -a "$BUILD/summary.txt"
done
exit "$status"
