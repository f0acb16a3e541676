#!/usr/bin/env bash
# One device call for the cuDNN convolutions and the feature matrix's cuda column:
# the cuda unit tests, the functional suite's cuda cells (results with their provenance:
# device, driver, commit, date), then hone bench p50 of MODELS under several configs
# (check.py). Run from the repository root with .gpu carried, after bundling
#   hone, hone_unit_tests, hone_functional_tests and native-runner (../shared/gpu/bundle.sh)
# and copying this script, check.py, src.tar.xz (git archive of the commit), srcdir.txt (the
# checkout's path the tests were built in), onnxdata.tar.xz (test_if and test_loop11 of
# libonnx-testdata) and commit.txt into .gpu/:
#   bash .gpu/cudnn.sh MODELS CONFIGS CHECK_TIMEOUT
set -u
R=$PWD
mkdir -p /tmp/g && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
# cuDNN is found through HONE_CUDNN_PATH here, not LD_LIBRARY_PATH: the search list is under test.
export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
# The tests find their CLI, sources and runner under the paths they were built with.
S=$(cat .gpu/srcdir.txt)
mkdir -p $S/build/tools/native-runner && tar -xJf .gpu/src.tar.xz -C $S
cp /tmp/g/bin/hone $S/build/hone
# The two ONNX node tests of onnx.control-flow (Debian's libonnx-testdata, not on this image).
mkdir -p /usr/share/libonnx-testdata/data/node && tar -xJf .gpu/onnxdata.tar.xz -C /usr/share/libonnx-testdata/data/node
cp /tmp/g/bin/native-runner $S/build/tools/native-runner/
(cd $S && timeout 200 /tmp/g/bin/hone_unit_tests --gtest_filter='Cuda*:HostEval*' > $OUT/tests.txt 2>&1)
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" -A3 $OUT/tests.txt | head -30
(cd /tmp && HONE_COMMIT=$(cat $R/.gpu/commit.txt) HONE_MATRIX_RESULTS=/tmp/matrix_cuda.json \
  HONE_INSPECT_PAGE_DIR=/tmp/inspect timeout 200 /tmp/g/bin/hone_functional_tests \
  --gtest_filter='*/cuda' > $OUT/functional.txt 2>&1)
echo "functional rc $?"
grep -E "^\[  (PASSED|FAILED) |tests ran" $OUT/functional.txt | tail -8
python3 - "$(cat $OUT/device.txt)" <<'PY'
import json, sys
name, driver = [s.strip() for s in sys.argv[1].split(",")]
j = json.load(open("/tmp/matrix_cuda.json"))
j["run"].update({"device": name, "driver": driver})
json.dump(j, open(__import__("os").environ["OUT"] + "/h200.json", "w"), indent=1)
from collections import Counter
print(Counter(c["status"] for c in j["cells"].values()))
for k, c in sorted(j["cells"].items()):
    if c["status"] != "passed": print(k, c["status"], c.get("reason", "")[:160])
PY
cd /tmp && timeout $3 python3 $R/.gpu/check.py /tmp/g/bin/hone /tmp/w $1 "$2" > $OUT/check.log 2>&1
grep -v "^$" $OUT/check.log | tail -40
# Which candidate each conv geometry took, and whether the CUDA graph was captured.
for m in ${1//,/ }; do for b in 1 32; do
  /tmp/g/bin/hone --log-level debug bench /tmp/w/$m.onnx --backend cuda --batch $b --iters 5 \
    --warmup 3 > /tmp/dbg.log 2>&1
  grep -E "ms, |CUDA graph|rror" /tmp/dbg.log >> $OUT/choices.log
  echo "$m b$b: $(grep -c 'cudnn\[algo' /tmp/dbg.log) cudnn-timed, graph failures: $(grep -c 'without a CUDA graph' /tmp/dbg.log)"
done; done
