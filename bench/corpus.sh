#!/usr/bin/env bash
# Tuned hone against ONNX Runtime on the real-model corpus
# (tests/corpus/manifest.json; scripts/install-corpus.sh installs it).
# Per model and thread count: `hone tune` on the manifest's inputs (one
# sample, `--inputs`), then ROUNDS rounds that alternate `hone bench PKG` and
# ORT's bench.js on the same inputs at the same thread count; each side's
# figure is the median over rounds of the round's p50. Prints a Markdown table
# (model, threads, chosen backend, tune seconds, the reference interpreter's
# p50 over 3 runs, both p50s, hone/ORT) and the
# geometric mean of the ratios per thread count.
#
#   bench/corpus.sh [THREADS="1 2"] [ROUNDS=5]
#   HONE_CORPUS_MODELS="oww_alexa ppocr_cls_v2" bench/corpus.sh "1" 3
# ITERS per round is chosen per model so that a round of ORT takes about a
# second (5 to 200). HONE_TUNE_TIMEOUT (default 300 s) bounds each tune; a
# model whose tune fails or times out gets a row saying so and no ratio.
# Tuning starts from an empty tuning cache and aot compile cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
threads_list=(${1:-1 2})
rounds=${2:-5}
hone="$root/build/hone"
peer="$root/bench/peers/ort"
corpus="$root/tests/corpus/corpus.js"
models_dir="${HONE_CORPUS_DIR:-$root/corpus}/models"
[ -x "$hone" ] || { echo "bench/corpus.sh: build hone first ($hone)"; exit 1; }
[ -d "$peer/node_modules/onnxruntime-node" ] || { echo "bench/corpus.sh: run bench/peers/ort/install.sh"; exit 1; }
names=(${HONE_CORPUS_MODELS:-$(node "$corpus" list)})
work="$(mktemp -d -t hone_corpus_bench_XXXXXX)"
trap 'rm -rf "$work"' EXIT
# A fresh tuning cache and aot compile cache: tune times are a first tune's.
export HONE_CACHE_DIR="$work/cache"
p50() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).p50_ms))'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%FT%TZ), rounds $rounds, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| model | threads | chosen backend | tune (s) | reference p50 (ms) | hone p50 (ms) | ORT p50 (ms) | hone / ORT |"
echo "|---|---|---|---|---|---|---|---|"
declare -A logsum count
for name in "${names[@]}"; do
  model="$models_dir/$name.onnx"
  [ -f "$model" ] || { echo "| $name | | not installed | | | | | |"; continue; }
  in="$work/$name/in"
  node "$corpus" inputs "$name" "$in"
  for t in "${threads_list[@]}"; do
    pkg="$work/$name/t$t.hone"
    t0=$(date +%s.%N)
    if ! timeout "${HONE_TUNE_TIMEOUT:-300}" "$hone" --threads "$t" tune "$model" -o "$pkg" --inputs "$in" \
        > "$work/$name/tune$t.log" 2>&1; then
      why=$(grep -m1 '^error:' "$work/$name/tune$t.log" || echo "timed out")
      echo "| $name | $t | tune failed: ${why//|/\\|} | | | | | |"
      continue
    fi
    tune_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    backend=$(sed -n 's/.*; \([a-z0-9_-]*\) backend, tuned in.*/\1/p' "$work/$name/tune$t.log")
    ref=$("$hone" --threads "$t" bench "$model" --backend reference --inputs "$in" --iters 3 --warmup 1 --json | p50)
    est=$(node "$peer/bench.js" "$model" --inputs "$in" --threads "$t" --iters 5 --warmup 2 | p50)
    iters=$(awk -v m="$est" 'BEGIN {i = int(1000 / (m > 0 ? m : 1)); print (i < 5 ? 5 : (i > 200 ? 200 : i))}')
    h=() o=()
    for ((r = 0; r < rounds; ++r)); do
      h+=("$("$hone" --threads "$t" bench "$pkg" --inputs "$in" --iters "$iters" --json | p50)")
      o+=("$(node "$peer/bench.js" "$model" --inputs "$in" --threads "$t" --iters "$iters" | p50)")
    done
    hm=$(median "${h[@]}") om=$(median "${o[@]}")
    ratio=$(awk -v a="$hm" -v b="$om" 'BEGIN {printf "%.2f", a / b}')
    printf '| %s | %s | %s | %s | %.3f | %.4f | %.4f | %s |\n' "$name" "$t" "$backend" "$tune_s" "$ref" "$hm" "$om" "$ratio"
    logsum[$t]=$(awk -v s="${logsum[$t]:-0}" -v r="$ratio" 'BEGIN {print s + log(r)}')
    count[$t]=$(( ${count[$t]:-0} + 1 ))
  done
done
echo
for t in "${threads_list[@]}"; do
  [ -n "${count[$t]:-}" ] || continue
  awk -v s="${logsum[$t]}" -v n="${count[$t]}" -v t="$t" \
    'BEGIN {printf "geometric mean of hone / ORT at %s thread(s): %.2f over %d models\n", t, exp(s / n), n}'
done
