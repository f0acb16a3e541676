#!/usr/bin/env bash
# Part 2 of the corpus's cuda cells, run on the GPU machine from the repository root with the
# folder corpus_pack.sh wrote (holding this script, corpus.tar.xz and ../shared/gpu/bundle.sh's
# bundle.tar.xz with bin/hone) carried along:
#
#   bash .gpu/corpus_run.sh
#
# For every packed model: `hone --threads 1 run MODEL --backend cuda --inputs IN --outputs OUT`
# (HONE_CORPUS_RUN_TIMEOUT seconds each, default 120), its exit status, seconds and log, and
# `hone inspect MODEL --backend cuda --json` (its partition's fallbacks). Everything goes into
# one file, $OUT/corpus_result.tar.xz (status.tsv: name, exit status, seconds; out/NAME/,
# log/NAME.log, inspect/NAME.json, device.txt, time.txt, backend.txt, timeout.txt,
# inputs.sha256); device.txt is also copied to $OUT.
# Models not started before HONE_CORPUS_RUN_BUDGET seconds (default 470, the call's limit
# being 600) are listed as "not run", so the archive is always written.
#
# A dry run here, on a CPU backend and a built hone (nothing unpacked, no nvidia-smi):
#   OUT=/tmp/o HONE_CORPUS_RUN_BACKEND=onednn HONE_CORPUS_RUN_HONE=build/hone bash .gpu/corpus_run.sh
set -u
G="$(cd "$(dirname "$0")" && pwd)"
: "${OUT:?corpus_run.sh writes its result under \$OUT}"
backend=${HONE_CORPUS_RUN_BACKEND:-cuda}
per_model=${HONE_CORPUS_RUN_TIMEOUT:-120}
budget=${HONE_CORPUS_RUN_BUDGET:-470}
start=$(date +%s)
W=$(mktemp -d -t hone_corpus_run_XXXXXX)
I=$(mktemp -d -t hone_corpus_in_XXXXXX)
mkdir -p "$W/out" "$W/log" "$W/inspect"
date -u +%FT%TZ > "$W/time.txt"
echo "$backend" > "$W/backend.txt"
echo "$per_model" > "$W/timeout.txt"
if [ -n "${HONE_CORPUS_RUN_HONE:-}" ]; then
  hone=$(realpath "$HONE_CORPUS_RUN_HONE")
  echo "CPU dry run ($backend), none" > "$W/device.txt"
else
  # As bench/cuda_h200/run.sh: the bundle's binaries and libraries, CUDA 13 and the cuDNN
  # of PyTorch's Python packages.
  mkdir -p /tmp/g && tar -xJf "$G/bundle.tar.xz" -C /tmp/g || { echo "corpus_run: no bundle"; exit 1; }
  C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
  D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
  export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc
  hone=/tmp/g/bin/hone
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1 > "$W/device.txt"
fi
cat "$W/device.txt"
tar -xJf "$G/corpus.tar.xz" -C "$I" || { echo "corpus_run: cannot unpack corpus.tar.xz"; exit 1; }
# The inputs' checksums, so that corpus_cells.sh can check it remade the very same inputs.
(cd "$I" && sha256sum in/*/*.npy) > "$W/inputs.sha256"
: > "$W/status.tsv"
while read -r n; do
  [ -n "$n" ] || continue
  if [ $(( $(date +%s) - start )) -ge "$budget" ]; then
    printf '%s\tnot run\t0\n' "$n" >> "$W/status.tsv"
    echo "$n: not run (the call's budget of $budget s is spent)"
    continue
  fi
  m=$I/models/$n.onnx
  t0=$(date +%s.%N)
  timeout "$per_model" "$hone" --threads 1 run "$m" --backend "$backend" --inputs "$I/in/$n" \
    --outputs "$W/out/$n" > "$W/log/$n.log" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
  timeout 60 "$hone" inspect "$m" --backend "$backend" --json > "$W/inspect/$n.json" 2> "$W/log/$n.inspect.log"
  printf '%s\t%s\t%s\n' "$n" "$rc" "$secs" >> "$W/status.tsv"
  echo "$n: rc $rc, $secs s $( [ $rc -eq 0 ] || grep -m1 '^error:' "$W/log/$n.log" | cut -c1-200)"
done < "$I/names.txt"
cp "$W/device.txt" "$OUT/device.txt"
tar -C "$W" -cf - . | xz -T0 -6 > "$OUT/corpus_result.tar.xz"
echo "corpus_run: $(wc -l < "$W/status.tsv") models, $OUT/corpus_result.tar.xz $(du -h "$OUT/corpus_result.tar.xz" | cut -f1)"
rm -rf "$W" "$I"
