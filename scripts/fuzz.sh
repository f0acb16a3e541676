#!/usr/bin/env bash
# Builds the ONNX import fuzzer with clang 16 (libFuzzer + AddressSanitizer)
# in build-fuzz/ and runs it for SECONDS (default 300) on a seed corpus of
# small models from the ONNX backend test data. Exits non-zero on a crash;
# crash inputs are left in build-fuzz/crashes/.
#   scripts/fuzz.sh 600
set -euo pipefail

SECONDS_TO_RUN="${1:-300}"
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
ninja -C "$BUILD" -j"$JOBS" onnx_import_fuzzer

CORPUS="$(mktemp -d -t hone_fuzz_corpus_XXXXXX)"
trap 'rm -rf "$CORPUS"' EXIT
# A few dozen of the smallest models, across many ops (subgraphs included).
find "$DATA" -name model.onnx -size -4k -printf '%s %p\n' | sort -n | awk 'NR % 12 == 1 {print $2}' | head -60 |
  while read -r f; do cp "$f" "$CORPUS/$(basename "$(dirname "$f")").onnx"; done
for t in test_if test_loop11 test_scan9_sum test_sequence_insert_at_back test_optional_has_element; do
  [ -f "$DATA/$t/model.onnx" ] && cp "$DATA/$t/model.onnx" "$CORPUS/$t.onnx"
done
# Inputs that once crashed stay in the corpus.
cp "$ROOT"/tests/fuzz/regressions/* "$CORPUS"/ 2>/dev/null || true
echo "fuzz.sh: $(ls "$CORPUS" | wc -l) seeds, running for ${SECONDS_TO_RUN}s"

mkdir -p "$BUILD/crashes"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
"$BUILD/tests/fuzz/onnx_import_fuzzer" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" \
  -rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=20 -artifact_prefix="$BUILD/crashes/" -print_final_stats=1
