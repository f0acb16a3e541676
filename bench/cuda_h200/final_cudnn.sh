#!/usr/bin/env bash
# The measuring call for the cuDNN convolutions: the cuda unit tests, the functional suite's
# cuda cells (saved with their provenance as $OUT/h200.json), then peer.py over MODELS at
# batch 1 and 32 with hone's extra arguments HONE_ARGS ("" for strict fp32).
#   bash .gpu/final_cudnn.sh MODELS COMPILE(0|1) PEER_TIMEOUT "HONE_ARGS" FUNCTIONAL(0|1)
# (bundle as for cudnn.sh; cuDNN is found through HONE_CUDNN_PATH)
set -u
R=$PWD
mkdir -p /tmp/g && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
S=$(cat .gpu/srcdir.txt)
mkdir -p $S/build/tools/native-runner && tar -xJf .gpu/src.tar.xz -C $S
cp /tmp/g/bin/hone $S/build/hone && cp /tmp/g/bin/native-runner $S/build/tools/native-runner/
mkdir -p /usr/share/libonnx-testdata/data/node
tar -xJf .gpu/onnxdata.tar.xz -C /usr/share/libonnx-testdata/data/node
(cd $S && timeout 200 /tmp/g/bin/hone_unit_tests --gtest_filter='Cuda*:HostEval*' > $OUT/tests.txt 2>&1)
grep -E "^\[  (PASSED|FAILED) |Failure" -A3 $OUT/tests.txt | head -12
if [ "$5" = 1 ]; then
  (cd /tmp && HONE_COMMIT=$(cat $R/.gpu/commit.txt) HONE_MATRIX_RESULTS=/tmp/matrix_cuda.json \
    HONE_INSPECT_PAGE_DIR=/tmp/inspect timeout 200 /tmp/g/bin/hone_functional_tests \
    --gtest_filter='*/cuda' > $OUT/functional.txt 2>&1)
  echo "functional rc $?"
  python3 - "$(cat $OUT/device.txt)" <<'PY'
import json, os, sys, collections
name, driver = [s.strip() for s in sys.argv[1].split(",")]
j = json.load(open("/tmp/matrix_cuda.json"))
j["run"].update({"device": name, "driver": driver})
json.dump(j, open(os.environ["OUT"] + "/h200.json", "w"), indent=1)
print(collections.Counter(c["status"] for c in j["cells"].values()))
PY
fi
cd /tmp && timeout $3 python3 $R/.gpu/peer.py --hone /tmp/g/bin/hone --work /tmp/wp --models $1 \
  --batches 1,32 --tune 0 --compile $2 --hone-args "$4" > $OUT/peer.log 2>&1
cp /tmp/wp/results.json $OUT/results.json
grep -A20 "^model batch" $OUT/peer.log
