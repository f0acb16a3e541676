#!/usr/bin/env bash
# One device call: the zoo (tests/zoo) exported on the GPU machine by PyTorch's exporters, run by
# hone's backends there, compared with PyTorch. Optionally the cuda unit tests first, while the
# exports run on the CPUs.
#   bash bench/cuda_h200/zoo.sh EXPORTER "BACKENDS" BUDGET_S [UNIT(0|1)] [MODELS]
# e.g. bash bench/cuda_h200/zoo.sh dynamo "cuda onednn" 520 1
# Writes to $OUT (at most 8 files come back: keep it so): summary.txt (zoo.py summary), results.tar.xz (the per-model .tsv rows with each
# backend's fallbacks by op type), export.txt (export failures), tests.txt (unit tests, UNIT_FILTER
# picks them; the op-case table's cuda rows included), op_claims.txt (rewritten by that run),
# functional.txt (FUNCTIONAL=0 skips it), device.txt and small.tar.xz (the small models' exports with their inputs and PyTorch's outputs, so that the
# CPU backends can be worked on elsewhere against the same files).
set -u
start=$(date +%s)
exporter=$1 backends=$2 budget=$3 unit=${4:-0}
. "$(dirname "$0")/device_env.sh"
provenance $OUT/device.txt
models=$(echo ${5:-$(python3 tests/zoo/zoo.py list | cut -f1)} | tr " " "\n")
W=/tmp/zoo
mkdir -p $W/$exporter
export HONE_ZOO_PYTHON=python3 HONE_ZOO_EXPORTER=$exporter HONE_ZOO_BACKENDS="$backends" \
  HONE_ZOO_TIMEOUT=120 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2
python3 -c "import torch, onnx; print('torch', torch.__version__, 'onnx', onnx.__version__)"
python3 -c "import onnxruntime; print('onnxruntime', onnxruntime.__version__)" 2>&1 | tail -1
# Exports: six at a time, each a process of its own (a failure is recorded in export.json).
(echo "$models" | xargs -P 6 -I{} sh -c \
  "python3 tests/zoo/zoo.py export {} --exporter $exporter --work $W/$exporter > $W/{}.export.log 2>&1 \
   || echo '{}: export failed'" > $OUT/export.txt) &
exports=$!
if [ "$unit" = 1 ]; then
  # The tests find their data under the source folder they were built in.
  S=$(cat .gpu/srcdir.txt); [ -e "$S" ] || { mkdir -p "$(dirname "$S")"; ln -s "$R" "$S"; }
  # The op-case table on cuda too, rewriting cuda's lines of op_claims.txt (brought back).
  HONE_UPDATE_OP_CLAIMS=1 timeout 330 /tmp/g/bin/hone_unit_tests \
    --gtest_filter="${UNIT_FILTER:-Cuda*:HostEval*:HostBlocks*:cuda/*}" > $OUT/tests.txt 2>&1
  echo "unit rc $?"
  cp tests/unit/ops/op_claims.txt $OUT/op_claims.txt
  grep -E "^\[  (PASSED|FAILED) |Failure|^\[  FAILED" -A3 $OUT/tests.txt | head -30
  if [ -x /tmp/g/bin/hone_unit_tests_lead ]; then  # a second build's tests, when bundled
    timeout 60 /tmp/g/bin/hone_unit_tests_lead --gtest_filter="${LEAD_FILTER:-Cuda*}" > $OUT/tests_lead.txt 2>&1
    echo "lead unit rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure|^\[  FAILED" -A3 $OUT/tests_lead.txt | head -30
  fi
  [ "${FUNCTIONAL:-1}" = 1 ] && (cd /tmp && timeout 150 /tmp/g/bin/hone_functional_tests --gtest_filter='*/cuda' > $OUT/functional.txt 2>&1)
  echo "functional rc $?"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $OUT/functional.txt | head -20
fi
wait $exports
echo "exports done at $(( $(date +%s) - start )) s"
for m in $models; do
  [ -f $W/$exporter/$m/model.onnx ] || { echo "== $m: no export"; tail -3 $W/$m.export.log; }
done
# The models, four at a time, until the budget is spent (each run bounded by HONE_ZOO_TIMEOUT).
left=$(( budget - ($(date +%s) - start) - 40 ))
echo "$models" | timeout $left xargs -P 4 -I{} sh -c \
  "bash tests/zoo/zoo_test.sh /tmp/g/bin/hone {} $W > $W/{}.test.log 2>&1; echo \"{} rc \$?\""
python3 tests/zoo/zoo.py summary $W/results > $OUT/summary.txt 2>&1
cat $OUT/summary.txt | cut -c1-300
tar -C $W -cJf $OUT/results.tar.xz results $(cd $W && ls *.test.log *.export.log 2>/dev/null)
# Opt-in (SMALL=1): exports with their inputs and PyTorch's outputs, smallest first, as many as
# fit in the 15 MB a returned file may have (SMALL_MODELS names them; default: the text models).
if [ "${SMALL:-0}" = 1 ]; then
  have="" total=0
  for d in $(for m in ${SMALL_MODELS:-bert_encoder t5_encoder gpt2_decoder llama_decoder whisper_encoder lstm_tagger gru_kws}; do
               [ -f $W/$exporter/$m/model.onnx ] && echo "$(du -sk $W/$exporter/$m | cut -f1) $m"; done | sort -n | awk '{print $2}'); do
    k=$(du -sk $W/$exporter/$d | cut -f1)
    [ $(( total + k )) -gt 15000 ] && { echo "small: $d left out (${k} KB)"; continue; }
    total=$(( total + k )); have="$have $exporter/$d"
  done
  [ -n "$have" ] && tar -C $W -cJf $OUT/small.tar.xz $have && echo "small:$have"
fi
ls -la $OUT
echo "total $(( $(date +%s) - start )) s"
