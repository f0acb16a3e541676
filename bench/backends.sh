#!/usr/bin/env bash
# hone's backends against each other on one model: each backend's p50 over
# ROUNDS interleaved rounds (the machine is shared and noisy), the median of
# each, and every backend's ratio to the first one named.
#
#   bench/backends.sh MODEL.onnx THREADS BATCH ROUNDS ITERS BACKEND... [-- --dim NAME=VALUE ...]
#   bench/backends.sh models/resnet.onnx 1 8 5 200 onednn aot blas
# Prints one line: model, dims, then "backend median_ms" pairs and the ratios.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model="$1" threads="$2" batch="$3" rounds="$4" iters="$5"
shift 5
backends=()
while (($#)) && [ "$1" != "--" ]; do backends+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
extra=("$@")
hone="$root/build/hone"
declare -A runs
for ((r = 0; r < rounds; ++r)); do
  for b in "${backends[@]}"; do
    p50=$("$hone" --threads "$threads" bench "$model" --backend "$b" --batch "$batch" \
            --iters "$iters" "${extra[@]}" --json |
          node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).p50_ms))')
    runs[$b]="${runs[$b]:-} $p50"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
line="$(basename "$model") threads=$threads batch=$batch ${extra[*]}:"
first=""
for b in "${backends[@]}"; do
  m=$(echo "${runs[$b]}" | median)
  [ -z "$first" ] && first=$m
  line+=" $b $(printf '%.4f' "$m")"
  ratios+=" $b/${backends[0]}=$(awk -v a="$m" -v b="$first" 'BEGIN {printf "%.2f", a / b}')"
done
echo "$line |${ratios}"
