#!/usr/bin/env bash
# One device call's quick check of hone alone on chosen rows (no PyTorch timing):
# exports the models (peer.py's exporter, random weights) to /tmp/w once, then
# `hone bench` p50 per "MODEL:BATCH:PREC[:k=v...]" job, plus probe.sh's
# per-step profile (copies included) for the PROFILE jobs.
#   bash .gpu/rows.sh "vit_b_16:32:tf32 bert:32:fp32" ["vit_b_16:32:tf32"]
set -u
. "$(dirname "$0")/device_env.sh"
provenance
models=$(for j in $1 ${2:-}; do echo "${j%%:*}"; done | sort -u | tr '\n' ' ')
export_models $models
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
