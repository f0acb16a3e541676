#!/usr/bin/env bash
# One device call's quick check of hone alone on chosen rows (no PyTorch timing):
# exports the models (peer.py's exporter, random weights) to /tmp/w once, then
# `hone bench` p50 per "MODEL:BATCH:PREC[:k=v...]" job, plus probe.sh's
# per-step profile (copies included) for the PROFILE jobs.
#   bash .gpu/rows5.sh "vit_b_16:32:tf32 bert:32:fp32" ["vit_b_16:32:tf32"]
set -u
R=$PWD
mkdir -p /tmp/g /tmp/w && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1
models=$(for j in $1 ${2:-}; do echo "${j%%:*}"; done | sort -u | tr '\n' ' ')
(cd /tmp/w && python3 - "$R/.gpu" $models <<'PY' 2>&1 | grep -v Warn
import sys, os
sys.path.insert(0, sys.argv[1]); import peer
for name in sys.argv[2:]:
    if not os.path.exists(f"{name}.onnx"):
        m, shape, _ = peer.make(name); peer.export(m, shape, f"{name}.onnx")
PY
)
for j in $1; do
  IFS=: read -r m b p rest <<< "$j"
  cfg="--config precision=$p"
  [ -n "${rest:-}" ] && for kv in ${rest//:/ }; do cfg="$cfg --config $kv"; done
  printf "%-40s " "$j"
  timeout 120 /tmp/g/bin/hone bench /tmp/w/$m.onnx --backend cuda --batch $b --iters 300 $cfg 2>&1 | grep -E "p50|rror" | head -2
done
for j in ${2:-}; do
  IFS=: read -r m b p rest <<< "$j"
  bash $R/.gpu/probe.sh $m $b "--config precision=$p" 2>&1 | grep -v "\[debug\]"
done
