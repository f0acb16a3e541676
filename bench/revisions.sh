#!/usr/bin/env bash
# Two builds of hone against each other ("is any backend slower than before?"):
# for each (model, backend) pair, ROUNDS rounds that run the older build and
# the newer one back to back, alternating which goes first (the machine is
# shared and noisy), then the median p50 of each side and their ratio.
#
#   bench/revisions.sh BEFORE_HONE AFTER_HONE THREADS ROUNDS ITERS CASES_FILE
#   bench/revisions.sh /work/base/build/hone build/hone 1 5 100 bench/revision_cases.txt
#
# CASES_FILE: one case a line, `backend model.onnx [hone bench arguments...]`
# (e.g. `onednn models/resnet.onnx --batch 8`); blank lines and # comments are
# skipped. Prints a Markdown table row per case: case, before, after,
# after / before. A side that fails prints `failed` and its ratio is `-`.
set -euo pipefail
if (($# != 6)); then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
before="$1" after="$2" threads="$3" rounds="$4" iters="$5" cases="$6"
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "revisions.sh: $bin is not an executable" >&2; exit 2; }
done
[ -r "$cases" ] || { echo "revisions.sh: cannot read $cases" >&2; exit 2; }

p50_of() {  # BIN BACKEND MODEL ARGS... -> the p50 in ms, or nothing
  local bin="$1" backend="$2" model="$3"
  shift 3
  "$bin" --threads "$threads" bench "$model" --backend "$backend" --iters "$iters" "$@" --json \
      </dev/null 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["p50_ms"])' 2>/dev/null ||
    true
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "| case | before (ms) | after (ms) | after / before |"
echo "|---|---|---|---|"
while read -r backend model args <&3; do
  [[ -z "${backend:-}" || "$backend" == \#* ]] && continue
  read -ra extra <<< "${args:-}"
  b_runs="" a_runs=""
  for ((r = 0; r < rounds; ++r)); do
    if ((r % 2 == 0)); then
      b_runs+=" $(p50_of "$before" "$backend" "$model" "${extra[@]}")"
      a_runs+=" $(p50_of "$after" "$backend" "$model" "${extra[@]}")"
    else
      a_runs+=" $(p50_of "$after" "$backend" "$model" "${extra[@]}")"
      b_runs+=" $(p50_of "$before" "$backend" "$model" "${extra[@]}")"
    fi
  done
  b=$(echo "$b_runs" | median) a=$(echo "$a_runs" | median)
  ratio=-
  [[ -n "$b" && -n "$a" ]] && ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')
  echo "| $(basename "$model") ${extra[*]} on $backend | ${b:-failed} | ${a:-failed} | $ratio |"
done 3< "$cases"
