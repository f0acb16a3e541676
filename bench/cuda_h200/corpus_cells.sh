#!/usr/bin/env bash
# Part 3 of the corpus's cuda cells, run here on what corpus_run.sh brought back: remakes each
# model's inputs (checked against the checksums the device recorded), computes ONNX Runtime's
# expectation (`node tests/corpus/corpus.js expect`), compares the device's outputs with it by
# the corpus's rule (`corpus.js verdict`, as tests/corpus/corpus_test.sh does) and writes the
# feature-matrix cells models.corpus-NAME/BACKEND with the run's provenance (device and driver
# from DEVICE_TXT, the commit the binaries were built from, the run's time) for
# `hone-matrix update PAGE FILE --backend cuda` (.ci/run merges tests/functional/gpu_results/*.json).
#
#   bench/cuda_h200/corpus_cells.sh RESULT_ARCHIVE[:RESULT_ARCHIVE...] DEVICE_TXT COMMIT [OUT_JSON]
#
# OUT_JSON defaults to tests/functional/gpu_results/h200_corpus.json. Several archives (a corpus
# split over device calls with HONE_CORPUS_MODELS at pack time) are joined with ':'. A model the
# device did not run ("not run") gets no cell: it stays untested, and the script says so and
# exits 1 after writing the others. A failed cell (an error, a timeout, outside the bound) is
# recorded as failed; the manifest's known_failures for the backend are named in the output.
set -euo pipefail
[ $# -ge 3 ] && [ $# -le 4 ] ||
  { echo "usage: bench/cuda_h200/corpus_cells.sh RESULT_ARCHIVE[:...] DEVICE_TXT COMMIT [OUT_JSON]" >&2; exit 2; }
archives=$1 device_txt=$2 commit=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=${4:-$root/tests/functional/gpu_results/h200_corpus.json}
corpus="$root/tests/corpus/corpus.js"
models_dir="${HONE_CORPUS_DIR:-$root/corpus}/models"
[ -d "$root/bench/peers/ort/node_modules/onnxruntime-node" ] ||
  { echo "corpus_cells: the ONNX Runtime peer is not installed (run bench/peers/ort/install.sh)" >&2; exit 1; }
IFS=, read -r device driver < "$device_txt" || true
device=$(echo "${device:-}" | xargs) driver=$(echo "${driver:-}" | xargs)
[ -n "$device" ] && [ -n "$driver" ] ||
  { echo "corpus_cells: $device_txt is not 'NAME, DRIVER' (nvidia-smi --query-gpu=name,driver_version)" >&2; exit 1; }
[ -n "$commit" ] || { echo "corpus_cells: COMMIT is empty" >&2; exit 1; }
W=$(mktemp -d -t hone_corpus_cells_XXXXXX)
trap 'rm -rf "$W"' EXIT
: > "$W/cells.tsv"
missing=0 k=0 time="" backend=""
IFS=: read -ra parts <<< "$archives"
for a in "${parts[@]}"; do
  k=$((k + 1)); R="$W/r$k"; mkdir -p "$R"
  tar -xJf "$a" -C "$R" || { echo "corpus_cells: cannot unpack $a" >&2; exit 1; }
  for f in status.tsv time.txt backend.txt timeout.txt inputs.sha256; do
    [ -f "$R/$f" ] || { echo "corpus_cells: $a has no $f (not made by corpus_run.sh?)" >&2; exit 1; }
  done
  b=$(cat "$R/backend.txt")
  [ -z "$backend" ] || [ "$backend" = "$b" ] ||
    { echo "corpus_cells: $a ran backend '$b', an earlier archive '$backend'" >&2; exit 1; }
  backend=$b
  t=$(cat "$R/time.txt")
  if [ -z "$time" ] || [[ "$t" > "$time" ]]; then time=$t; fi  # the latest call's
  limit=$(cat "$R/timeout.txt")
  while IFS=$'\t' read -r name rc secs; do
    if [ "$rc" = "not run" ]; then
      echo "NOT RUN $name/$backend: the device call's budget ran out; its cell stays untested"
      missing=1; continue
    fi
    model="$models_dir/$name.onnx"
    [ -f "$model" ] || { echo "corpus_cells: $model is not installed (run scripts/install-corpus.sh)" >&2; exit 1; }
    node "$corpus" inputs "$name" "$R/in/$name"
    (cd "$R" && grep " in/$name/" inputs.sha256 | sha256sum --quiet -c -) ||
      { echo "corpus_cells: the inputs of '$name' made here differ from those the device ran" >&2; exit 1; }
    node "$corpus" expect "$name" "$model" "$R/in/$name" "$R/expect/$name"
    if [ "$rc" -eq 124 ]; then
      status=failed detail="timed out after $limit s"
    elif [ "$rc" -ne 0 ]; then
      status=failed detail="$(grep -m1 '^error:' "$R/log/$name.log" || tail -n1 "$R/log/$name.log")"
    elif detail=$(node "$corpus" verdict "$R/expect/$name" "$R/out/$name"); then
      status=passed
    else
      status=failed
    fi
    fallback=$(node "$corpus" fallback < "$R/inspect/$name.json")
    reason="$detail${fallback:+; $fallback} (${secs} s)"
    known=$(node -e 'const m = require(process.argv[1]).models.find(x => x.name === process.argv[2]);
      const k = (m && m.known_failures) || {}; if (k[process.argv[3]]) console.log(k[process.argv[3]]);' \
      "$root/tests/corpus/manifest.json" "$name" "$backend")
    case "$status" in
      passed) echo "ok $name/$backend: $reason${known:+ (XPASS: known_failures says: $known)}" ;;
      *) echo "${known:+KNOWN }FAIL $name/$backend: $reason${known:+ (known: $known)}" ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$backend" "$status" "$(echo "$reason" | tr '\t' ' ')" \
      "corpus_$name on $backend (bench/cuda_h200/corpus_run.sh)" >> "$W/cells.tsv"
  done < "$R/status.tsv"
done
node -e 'const [f, commit, time, device, driver] = process.argv.slice(1);
  require("fs").writeFileSync(f, JSON.stringify({ commit, time, device, driver }));' \
  "$W/run.json" "$commit" "$time" "$device" "$driver"
node "$corpus" cells "$out" "$W/run.json" < "$W/cells.tsv"
echo "corpus_cells: $(grep -c . "$W/cells.tsv") cells ($(cut -f3 "$W/cells.tsv" | sort | uniq -c | xargs)) -> $out"
exit $missing
