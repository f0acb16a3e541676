#!/usr/bin/env bash
# hone vs ONNX Runtime on one model, same inputs, same thread count, in one run.
# Repeats the pair ROUNDS times (interleaved, as the machine is shared and noisy)
# and prints the median p50 of each and the ratio hone / ORT.
#
#   bench/compare.sh MODEL.onnx BACKEND THREADS BATCH [ROUNDS=5] [ITERS=200] [--dim NAME=VALUE ...]
# Extra --dim bindings (other symbolic dims) go to both sides.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model="$1" backend="$2" threads="$3" batch="$4" rounds="${5:-5}" iters="${6:-200}"
shift $(( $# < 6 ? $# : 6 ))
extra=("$@")
peer="$root/bench/peers/ort"
hone="$root/build/hone"
work="$(mktemp -d -t hone_bench_XXXXXX)"
trap 'rm -rf "$work"' EXIT
# The leading symbolic dim of every input is the batch (as `hone bench --batch`).
dims=$(node -e '
  const ort = require(process.argv[1]);
  ort.InferenceSession.create(process.argv[2]).then(s => {
    const names = new Set();
    for (const m of s.inputMetadata || []) if (m.shape && typeof m.shape[0] === "string") names.add(m.shape[0]);
    console.log([...names].map(n => `--dim ${n}=${process.argv[3]}`).join(" "));
  });' "$peer/node_modules/onnxruntime-node" "$model" "$batch")
node "$peer/make_inputs.js" "$model" --outputs "$work/in" --seed 7 $dims "${extra[@]}" >/dev/null
hone_p50=() ort_p50=()
for ((r = 0; r < rounds; ++r)); do
  hone_p50+=("$("$hone" --threads "$threads" bench "$model" --backend "$backend" --batch "$batch" \
                 --iters "$iters" "${extra[@]}" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).p50_ms))')")
  ort_p50+=("$(node "$peer/bench.js" "$model" --inputs "$work/in" --threads "$threads" --iters "$iters" |
                node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).p50_ms))')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
h=$(median "${hone_p50[@]}") o=$(median "${ort_p50[@]}")
awk -v m="$(basename "$model")" -v b="$backend" -v t="$threads" -v n="$batch" -v r="$rounds" -v i="$iters" \
    -v h="$h" -v o="$o" 'BEGIN {
  printf "%s backend=%s threads=%s batch=%s rounds=%s iters=%s: hone p50 %.4f ms, ORT p50 %.4f ms, hone/ORT %.2f\n", m, b, t, n, r, i, h, o, h / o }' 
