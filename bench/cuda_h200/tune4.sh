#!/usr/bin/env bash
# The issue's tune-time check, one device call: exports MODELS (peer.py's exporter, random
# weights) and times `hone tune MODEL --backends cuda` on each at batch 1 and 32 under each
# precision (fresh tuning cache), then loads each package and runs it once; prints seconds,
# the choice and the report's chosen p50 per tune. Results under $OUT/tune_*.json.
#   bash .gpu/tune4.sh resnet50,mobilenet_v3,vit_b_16,bert fp32,tf32,bf16
set -u
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/t
provenance
export_models ${1//,/ }
for m in ${1//,/ }; do
  for p in ${2//,/ }; do
    s=$(date +%s%N)
    timeout 300 /tmp/g/bin/hone --threads 16 tune /tmp/w/$m.onnx -o /tmp/t/${m}_$p.hone --backends cuda \
      --batch-sizes 1,32 --no-cache --no-html --config cuda.precision=$p \
      --report $OUT/tune_${m}_$p.json > /tmp/t/${m}_$p.log 2>&1
    rc=$?
    e=$(date +%s%N)
    printf "%-14s %-5s rc %d  %6d ms  " $m $p $rc $(( (e - s) / 1000000 ))
    tail -1 /tmp/t/${m}_$p.log | cut -c1-160
    timeout 120 /tmp/g/bin/hone infer /tmp/t/${m}_$p.hone --random-inputs 1 --dim batch=4 2>&1 | tail -1 | cut -c1-160
  done
done
