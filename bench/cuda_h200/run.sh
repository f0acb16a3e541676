#!/usr/bin/env bash
# helper gpu4's one device call: the cuda unit tests, optionally the functional suite's cuda
# cells ($OUT/h200.json with provenance), then torch_peer.py (PyTorch eager fp32/tf32/bf16/fp16
# autocast and CUDA graphs of fp32 and bf16 autocast, torch.compile fp32 for COMPILE_MODELS,
# against hone bench in each precision), then optionally a per-step profile at batch 32 with
# the attention selector's timings (each candidate's ms, the one chosen).
#   bash .gpu/run.sh MODELS PRECISIONS PEER_TIMEOUT FUNCTIONAL(0|1) "PROFILE_MODELS" "PROFILE_ARGS" "COMPILE_MODELS"
# A PRECISIONS token may carry more settings after colons (bf16:attention_select=time:gemm_epilogue=true).
set -u
. "$(dirname "$0")/device_env.sh"
provenance $OUT/device.txt
S=$(cat .gpu/srcdir.txt)
mkdir -p $S/build/tools/native-runner && tar -xJf .gpu/src.tar.xz -C $S
cp /tmp/g/bin/hone $S/build/hone && cp /tmp/g/bin/native-runner $S/build/tools/native-runner/
mkdir -p /usr/share/libonnx-testdata/data/node
tar -xJf .gpu/onnxdata.tar.xz -C /usr/share/libonnx-testdata/data/node
# SKIP_UNIT=1: the unit tests already ran on these binaries (another call of the same commit).
if [ "${SKIP_UNIT:-0}" != 1 ]; then
  (cd $S && timeout 200 /tmp/g/bin/hone_unit_tests --gtest_filter='Cuda*:HostEval*:HostBlocks*' > $OUT/tests.txt 2>&1)
  echo "unit rc $?"
  grep -E "^\[  (PASSED|FAILED) |Failure|^\[  FAILED" -A3 $OUT/tests.txt | head -30
fi
if [ "$4" = 1 ]; then
  (cd /tmp && HONE_COMMIT=$(cat $R/.gpu/commit.txt) HONE_MATRIX_RESULTS=/tmp/matrix_cuda.json \
    HONE_INSPECT_PAGE_DIR=/tmp/inspect timeout 240 /tmp/g/bin/hone_functional_tests \
    --gtest_filter='*/cuda' > $OUT/functional.txt 2>&1)
  echo "functional rc $?"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $OUT/functional.txt | head -20
  python3 - "$(cat $OUT/device.txt)" <<'PY'
import json, os, sys, collections
name, driver = [s.strip() for s in sys.argv[1].split(",")]
j = json.load(open("/tmp/matrix_cuda.json"))
j["run"].update({"device": name, "driver": driver})
json.dump(j, open(os.environ["OUT"] + "/h200.json", "w"), indent=1)
print(collections.Counter(c["status"] for c in j["cells"].values()))
for k, c in sorted(j["cells"].items()):
    if c["status"] != "passed": print(k, c["status"], c.get("reason", "")[:160])
PY
fi
if [ -n "$1" ]; then
  (cd /tmp && timeout $3 python3 $R/.gpu/torch_peer.py --hone /tmp/g/bin/hone --work /tmp/w --models $1 \
    --batches 1,32 --precisions $2 --graphs 1 --compile "${7:-}" > $OUT/torch_peer.log 2>&1)
  cp /tmp/w/results.json $OUT/results.json
  grep -A20 "^model batch" $OUT/torch_peer.log || tail -20 $OUT/torch_peer.log
fi
# What the timed selectors chose at batch 32 (attention units, MatMul+bias units), per precision.
for m in ${5//,/ }; do
  [ -f /tmp/w/$m.onnx ] || continue
  for p in ${2//,/ }; do
    cfg=$(echo "$p" | awk -F: '{printf "--config precision=%s", $1; for (i = 2; i <= NF; i++) printf " --config %s", $i}')
    timeout 60 /tmp/g/bin/hone --log-level debug bench /tmp/w/$m.onnx --backend cuda --batch 32 \
      --iters 3 --warmup 1 $cfg 2>&1 | grep -E "chose|unfused \(" \
      | sed -e 's/^\[[^]]*\] //' -e "s/^/$m $p: /" | sort | uniq -c | sort -rn | head -6
  done
done > $OUT/choices.txt 2>&1
cut -c1-400 $OUT/choices.txt | head -40
for m in ${5//,/ }; do
  [ -f /tmp/w/$m.onnx ] || continue
  HONE_CUDA_PROFILE=1 timeout 120 /tmp/g/bin/hone --log-level debug bench /tmp/w/$m.onnx --backend cuda \
    --batch 32 --iters 2 --warmup 1 $6 > /tmp/prof_$m.log 2>&1
  grep "cuda profile" /tmp/prof_$m.log | tail -n +1 > $OUT/prof_$m.txt
  python3 - $OUT/prof_$m.txt $m <<'PY'
import re, sys, collections
steps = [l for l in open(sys.argv[1])]
rows = []
for l in steps:
    m = re.search(r"cuda profile: ([\d.]+) ms (.*) \[(.*)\]$", l.strip())
    if m: rows.append((float(m.group(1)), m.group(2), m.group(3)))
n = len(rows) // 3 if len(rows) % 3 == 0 else len(rows)  # warm-up + 2 runs profiled
last = rows[-n:]
fam = collections.defaultdict(lambda: [0.0, 0])
for ms, label, k in last:
    f = re.sub(r"\[algo \d+(, tf32)?\]", "", k); f = re.sub(r"nvrtc\[.*\]", "nvrtc", f)
    fam[f][0] += ms; fam[f][1] += 1
print(sys.argv[2], "steps", len(last), "total %.3f ms" % sum(s[0] for s in last))
for f, (ms, c) in sorted(fam.items(), key=lambda x: -x[1][0])[:10]: print("  %.3f ms %3d x %s" % (ms, c, f))
PY
done
