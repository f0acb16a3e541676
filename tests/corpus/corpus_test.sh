#!/usr/bin/env bash
# One real-model corpus model (tests/corpus/manifest.json) on every CPU
# backend (select, per-op selection among onednn, blas and aot, included):
# the manifest's inputs through `hone run --backend B`, each output
# compared with ONNX Runtime's by relative L2 against the model's own spread
# (the rule is in corpus.js). Writes the feature-matrix cells
# models.corpus-NAME/B to RESULTS_DIR/NAME.json and a summary line per backend
# to WORK/NAME/summary.tsv: backend, status, seconds, detail.
#
#   corpus_test.sh HONE_BIN NAME WORK_DIR RESULTS_DIR
#
# A backend failing or computing outside the bound fails the test unless the
# manifest's "known_failures" names it for this model (with the reason); its
# cell is then recorded failed all the same, and the test passes. A known
# failure that now passes is reported ("XPASS") so the manifest can be updated.
# Exit 77 (ctest: skipped) when the model or the ONNX Runtime peer is missing.
set -uo pipefail
hone=$1 name=$2 work=$3 results=$4
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
model="${HONE_CORPUS_DIR:-$root/corpus}/models/$name.onnx"
backends=(${HONE_CORPUS_BACKENDS:-reference onednn blas aot select})
per_run_timeout=${HONE_CORPUS_TIMEOUT:-240}
if [ ! -f "$model" ]; then
  echo "SKIP: $model is not installed (run scripts/install-corpus.sh)"
  exit 77
fi
if [ ! -d "$root/bench/peers/ort/node_modules/onnxruntime-node" ]; then
  echo "SKIP: the ONNX Runtime peer is not installed (run bench/peers/ort/install.sh)"
  exit 77
fi
dir="$work/$name"
rm -rf "$dir" && mkdir -p "$dir" "$results"
node "$here/corpus.js" inputs "$name" "$dir/in" || exit 1
node "$here/corpus.js" expect "$name" "$model" "$dir/in" "$dir/expect" || exit 1
known() {  # the manifest's reason for a known failure of model $name on backend $1, or nothing
  node -e 'const m = require(process.argv[1]).models.find(x => x.name === process.argv[2]);
           const k = (m && m.known_failures) || {}; if (k[process.argv[3]]) console.log(k[process.argv[3]]);' \
    "$here/manifest.json" "$name" "$1"
}

unexpected=0
: > "$dir/summary.tsv"
: > "$dir/cells.tsv"
for b in "${backends[@]}"; do
  t0=$(date +%s.%N)
  timeout "$per_run_timeout" "$hone" --threads 1 run "$model" --backend "$b" --inputs "$dir/in" \
    --outputs "$dir/$b" > "$dir/$b.log" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
  if [ $rc -eq 124 ]; then
    status=failed detail="timed out after ${per_run_timeout} s"
  elif [ $rc -ne 0 ]; then
    status=failed detail="$(grep -m1 '^error:' "$dir/$b.log" || tail -n1 "$dir/$b.log")"
  else
    if detail=$(node "$here/corpus.js" verdict "$dir/expect" "$dir/$b"); then status=passed; else status=failed; fi
  fi
  # Nodes the backend leaves to the reference (fallback), from its partition.
  fallback=$(timeout 120 "$hone" inspect "$model" --backend "$b" --json 2>/dev/null | node "$here/corpus.js" fallback)
  [ "$b" = reference ] && fallback=""
  reason="$detail"
  [ -n "$fallback" ] && reason="$reason; $fallback"
  why=$(known "$b")
  if [ "$status" = failed ]; then
    if [ -n "$why" ]; then echo "KNOWN FAIL $name/$b ($why): $detail"; else echo "FAIL $name/$b: $detail"; unexpected=1; fi
  else
    echo "ok $name/$b (${secs} s): $detail${fallback:+; $fallback}"
    [ -n "$why" ] && echo "XPASS $name/$b: listed in known_failures ($why) but passes now; update the manifest"
  fi
  printf '%s\t%s\t%s\t%s\n' "$b" "$status" "$secs" "$reason" >> "$dir/summary.tsv"
  printf '%s\t%s\t%s\t%s\tcorpus_%s\n' "$name" "$b" "$status" "$reason (${secs} s)" "$name" >> "$dir/cells.tsv"
done

# No RUN.json: the page keeps the run of the functional suite.
node "$here/corpus.js" cells "$results/$name.json" < "$dir/cells.tsv" ||
  { echo "FAIL: could not write $results/$name.json"; exit 1; }
exit $unexpected
