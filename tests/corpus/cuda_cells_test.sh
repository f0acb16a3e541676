#!/usr/bin/env bash
# The corpus's cuda-cell harness (bench/cuda_h200/corpus_{pack,run,cells}.sh) end to end, with
# a CPU backend standing in for cuda (HONE_CORPUS_RUN_BACKEND): two models packed, run, compared
# with ONNX Runtime and written as cells that `hone-matrix update --backend` merges with their
# provenance; an output 1% off turns its cell failed; a model the call had no time for gets no
# cell and a non-zero exit. Exit 77 (skipped) where the models or the ORT peer are missing.
#
#   cuda_cells_test.sh HONE_BIN HONE_MATRIX_BIN WORK_DIR
set -uo pipefail
hone=$1 matrix=$2 work=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
models="oww_alexa silero_vad_v5"
for n in $models; do
  [ -f "${HONE_CORPUS_DIR:-$root/corpus}/models/$n.onnx" ] ||
    { echo "SKIP: corpus model $n is not installed (run scripts/install-corpus.sh)"; exit 77; }
done
[ -d "$root/bench/peers/ort/node_modules/onnxruntime-node" ] ||
  { echo "SKIP: the ONNX Runtime peer is not installed (run bench/peers/ort/install.sh)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
b=onednn
rm -rf "$work" && mkdir -p "$work/o1" "$work/o2" || exit 1
HONE_CORPUS_MODELS="$models" "$root/bench/cuda_h200/corpus_pack.sh" "$work/pack" || fail "corpus_pack.sh"
OUT="$work/o1" HONE_CORPUS_RUN_BACKEND=$b HONE_CORPUS_RUN_HONE="$hone" bash "$work/pack/corpus_run.sh" ||
  fail "corpus_run.sh"
cells() { "$root/bench/cuda_h200/corpus_cells.sh" "$@"; }
cells "$work/o1/corpus_result.tar.xz" "$work/o1/device.txt" c0ffee1 "$work/cells.json" > "$work/cells.log" ||
  { cat "$work/cells.log"; fail "corpus_cells.sh on a good run"; }
node -e 'const j = require(process.argv[1]), b = process.argv[2];
  for (const n of ["oww_alexa", "silero_vad_v5"]) {
    const c = j.cells[`models.corpus-${n}/${b}`];
    if (!c || c.status !== "passed" || !/rel L2 .*bound .*ORT spread/.test(c.reason)) throw new Error(`${n}: ${JSON.stringify(c)}`);
  }
  if (j.run.commit !== "c0ffee1" || !j.run.device.includes(b) || !j.run.time) throw new Error(JSON.stringify(j.run));' \
  "$work/cells.json" $b || fail "the good run's cells"
"$matrix" update "$root/tests/functional/feature_matrix.html" "$work/cells.json" --backend $b \
  -o "$work/page.html" > /dev/null || fail "hone-matrix update --backend $b"
grep -q "run on CPU dry run ($b), driver none, commit c0ffee1" "$work/page.html" ||
  fail "the merged page does not name the run"
# One output 1% off: its cell turns failed and says by how much.
mkdir -p "$work/bad" && tar -xJf "$work/o1/corpus_result.tar.xz" -C "$work/bad" || exit 1
node -e 'const { readNpy, writeNpy } = require(process.argv[1]); const p = process.argv[2];
  const a = readNpy(p); writeNpy(p, a.type, a.shape, a.data.map(v => v * 1.01));' \
  "$root/bench/peers/ort/npy.js" "$work/bad/out/oww_alexa/output_0.npy" || exit 1
tar -C "$work/bad" -cJf "$work/bad.tar.xz" . || exit 1
cells "$work/bad.tar.xz" "$work/o1/device.txt" c0ffee1 "$work/bad.json" > "$work/bad.log" || fail "corpus_cells.sh on a bad output"
node -e 'const c = require(process.argv[1]).cells[`models.corpus-oww_alexa/${process.argv[2]}`];
  if (c.status !== "failed" || !/rel L2 1\.00e-2/.test(c.reason)) throw new Error(JSON.stringify(c));' \
  "$work/bad.json" $b || fail "an output 1% off was not a failed cell"
# No time left for any model: no cells, exit 1.
OUT="$work/o2" HONE_CORPUS_RUN_BUDGET=0 HONE_CORPUS_RUN_BACKEND=$b HONE_CORPUS_RUN_HONE="$hone" \
  bash "$work/pack/corpus_run.sh" > /dev/null || fail "corpus_run.sh with no budget"
if cells "$work/o2/corpus_result.tar.xz" "$work/o2/device.txt" c0ffee1 "$work/none.json" > "$work/none.log"; then
  fail "models that were not run did not make corpus_cells.sh fail"
fi
grep -q "NOT RUN oww_alexa/$b" "$work/none.log" || fail "no NOT RUN line"
node -e 'if (Object.keys(require(process.argv[1]).cells).length) throw new Error("cells for models not run")' \
  "$work/none.json" || fail "models not run got cells"
echo "corpus cuda cells: packed, run on $b, compared and merged with provenance; 1% off failed; not run left untested"
