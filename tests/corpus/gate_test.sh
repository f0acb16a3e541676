#!/usr/bin/env bash
# The calibrated correctness gate on one real-model corpus model: the
# manifest's inputs as the one sample, onednn, blas and aot must pass it, and
# the reference with one heavy op's result off by 1% (first, middle and last
# Conv/Gemm/MatMul/LSTM; inside the If bodies where the graph keeps them
# there) must be rejected (GateOnModel in tests/unit/tune/gate_models_test.cpp).
#
#   gate_test.sh UNIT_TESTS_BIN NAME WORK_DIR
#
# Exit 77 (ctest: skipped) when the model is not installed.
set -euo pipefail  # pipefail: the test binary's status survives tee
bin=$1 name=$2 work=$3
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
model="${HONE_CORPUS_DIR:-$root/corpus}/models/$name.onnx"
if [ ! -f "$model" ]; then
  echo "SKIP: $model is not installed (run scripts/install-corpus.sh)"
  exit 77
fi
dir="$work/$name"
rm -rf "$dir" && mkdir -p "$dir"
node "$here/corpus.js" inputs "$name" "$dir/in"
stem="$(basename "$model" .onnx | tr -c '[:alnum:]\n' '_')"
HONE_GATE_MODELS="$model@inputs=$dir/in" "$bin" --gtest_filter="Models/GateOnModel.*/${stem}_*" |
  tee "$dir/gtest.log"
# A filter that matched nothing would pass silently.
grep -q '^\[==========\] 1 test from 1 test suite ran' "$dir/gtest.log" ||
  { echo "FAIL: the gate test for $name did not run"; exit 1; }
