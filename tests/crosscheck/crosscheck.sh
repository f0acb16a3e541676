#!/usr/bin/env bash
# Cross-checks `hone run` against ONNX Runtime (npm onnxruntime-node) on one
# model: the same seeded inputs through both, then the max relative error of
# every output must be <= RTOL.
#
#   crosscheck.sh HONE_BIN MODEL.onnx RTOL [--atol ATOL] [--dim NAME=VALUE ...]
# ATOL (default compare.js's 1e-6) is for models whose outputs are O(1) sums
# over wide reductions, where a near-zero element carries ~1e-6 of rounding.
# Exit 77 (ctest: skipped) when the npm peer is not installed.
set -euo pipefail
hone=$1 model=$2 rtol=$3
shift 3
atol=()
if [ "${1:-}" = "--atol" ]; then atol=(--atol "$2"); shift 2; fi
peer="$(cd "$(dirname "$0")/../../bench/peers/ort" && pwd)"
if [ ! -d "$peer/node_modules/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime peer not installed (run bench/peers/ort/install.sh)"
  exit 77
fi
if [ ! -f "$model" ]; then
  echo "SKIP: model $model not present (run bench/peers/ort/install.sh)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$peer/make_inputs.js" "$model" --outputs "$work/in" --seed 7 "$@"
hone_dims=()
while [ $# -gt 0 ]; do hone_dims+=("$1" "$2"); shift 2; done
"$hone" run "$model" --inputs "$work/in" --outputs "$work/hone" "${hone_dims[@]}" >/dev/null
node "$peer/run.js" "$model" --inputs "$work/in" --outputs "$work/ort" --threads 1 >/dev/null
node "$peer/compare.js" "$work/hone" "$work/ort" --rtol "$rtol" "${atol[@]}"
