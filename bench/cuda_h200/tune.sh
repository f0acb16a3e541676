#!/usr/bin/env bash
# The issue's tune-time check, one device call: exports MODELS (peer.py's exporter, random
# weights) and times `hone tune MODEL --backends cuda` on each at batch 1 and 32 under each
# precision ('auto': `--precision auto`, every precision cuda declares, each judged by its
# own bound; fresh tuning cache), then loads each package and runs it once; prints seconds,
# the choice and the report's chosen p50 per tune. Results under $OUT/tune_*.json, and each
# tune's log (lines stamped with ms since it began, the reference's per-op profile) as
# $OUT/MODEL_PRECISION.log.
#   bash .gpu/tune.sh resnet50,mobilenet_v3,vit_b_16,bert fp32,tf32,bf16
set -u
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/t
provenance
export_models ${1//,/ }
for m in ${1//,/ }; do
  for p in ${2//,/ }; do
    s=$(date +%s%N)
    # Each line stamped with the milliseconds since the tune began; the reference's
    # time per op type logged for each of its runs (HONE_EVAL_PROFILE).
    HONE_EVAL_PROFILE=1 timeout ${TUNE_TIMEOUT:-300} /tmp/g/bin/hone --threads 16 --log-level info tune /tmp/w/$m.onnx \
      -o /tmp/t/${m}_$p.hone --backends cuda --batch-sizes 1,32 --no-cache --no-html \
      $( [ "$p" = auto ] && echo --precision auto || echo --config cuda.precision=$p ) \
      --report $OUT/tune_${m}_$p.json 2>&1 \
      | while IFS= read -r l; do echo "$(( ($(date +%s%N) - s) / 1000000 )) ms $l"; done \
      > /tmp/t/${m}_$p.log
    rc=${PIPESTATUS[0]}
    cp /tmp/t/${m}_$p.log $OUT/ 2>/dev/null
    e=$(date +%s%N)
    printf "%-14s %-5s rc %d  %6d ms  " $m $p $rc $(( (e - s) / 1000000 ))
    tail -1 /tmp/t/${m}_$p.log | cut -c1-160
    timeout 120 /tmp/g/bin/hone infer /tmp/t/${m}_$p.hone --random-inputs 1 --dim batch=4 2>&1 | tail -1 | cut -c1-160
  done
done
