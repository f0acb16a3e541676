#!/usr/bin/env bash
# One measuring call: unit tests on the GPU, then peer.py over MODELS in fp32 (with
# torch.compile) and over TF32_MODELS with --config precision=tf32 (no torch.compile).
#   bash .gpu/final.sh MODELS TF32_MODELS FP32_TIMEOUT TF32_TIMEOUT [COMPILE=1]
set -u
R=$PWD
mkdir -p /tmp/g && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
export LD_LIBRARY_PATH=/tmp/g/lib:$C:$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
timeout 100 /tmp/g/bin/hone_unit_tests --gtest_filter='Cuda*:HostEval*' > $OUT/tests.txt 2>&1
grep -E "PASSED|FAILED|Failure" -A3 $OUT/tests.txt | head -30
cd /tmp
timeout $3 python3 $R/.gpu/peer.py --hone /tmp/g/bin/hone --work /tmp/w32 --models $1 \
  --batches 1,32 --tune 0 --compile ${5:-1} > $OUT/peer_fp32.log 2>&1
cp /tmp/w32/results.json $OUT/results_fp32.json
grep -A20 "^model batch" $OUT/peer_fp32.log
timeout $4 python3 $R/.gpu/peer.py --hone /tmp/g/bin/hone --work /tmp/wtf --models $2 \
  --batches 1,32 --tune 0 --compile 0 --hone-args "--config precision=tf32" > $OUT/peer_tf32.log 2>&1
cp /tmp/wtf/results.json $OUT/results_tf32.json
grep -A20 "^model batch" $OUT/peer_tf32.log
