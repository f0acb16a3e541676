#!/usr/bin/env bash
# One device call: the cuda unit tests, then where each model's time goes, step by step
# (HONE_CUDA_PROFILE=1: events around every step, no CUDA graph), summed per kernel family.
#   bash .gpu/profile.sh MODELS BATCH "CONFIG ARGS"      (bundle as for cudnn.sh)
set -u
R=$PWD
mkdir -p /tmp/g && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1
S=$(cat .gpu/srcdir.txt)
mkdir -p $S/build && tar -xJf .gpu/src.tar.xz -C $S && cp /tmp/g/bin/hone $S/build/hone
(cd $S && timeout 200 /tmp/g/bin/hone_unit_tests --gtest_filter='Cuda*:HostEval*' > $OUT/tests.txt 2>&1)
grep -E "^\[  (PASSED|FAILED) |Failure" -A3 $OUT/tests.txt | head -20
mkdir -p /tmp/w && cd /tmp/w
for m in ${1//,/ }; do
  python3 -c "import sys; sys.path.insert(0,'$R/.gpu'); import peer; mod,shape,_=peer.make('$m'); peer.export(mod,shape,'$m.onnx')" > /dev/null 2>&1
  HONE_CUDA_PROFILE=1 /tmp/g/bin/hone --log-level debug bench $m.onnx --backend cuda --batch $2 \
    --iters 2 --warmup 1 $3 > $OUT/prof_$m.log 2>&1
  python3 - $OUT/prof_$m.log $m <<'PY'
import re, sys, collections
runs = [[]]
for l in open(sys.argv[1]):
    m = re.search(r"cuda profile: ([\d.]+) ms (.*) \[(.*)\]$", l.strip())
    if m: runs[-1].append((float(m.group(1)), m.group(2), m.group(3)))
steps = runs[0][-len(runs[0]) // 4:] if False else runs[0]
n = len(steps)
# the log holds every profiled run; take the last run's steps
last = steps[-(n // max(1, sum(1 for s in steps if s[1] == steps[0][1]))):]
fam = collections.defaultdict(lambda: [0.0, 0])
for ms, label, k in last:
    f = re.sub(r"\[algo \d+(, tf32)?\]", "", k); f = re.sub(r"nvrtc\[.*\]", "nvrtc", f)
    fam[f][0] += ms; fam[f][1] += 1
print(sys.argv[2], "steps", len(last), "total %.3f ms" % sum(s[0] for s in last))
for f, (ms, c) in sorted(fam.items(), key=lambda x: -x[1][0])[:12]: print("  %.3f ms %3d x %s" % (ms, c, f))
for ms, label, k in sorted(last, reverse=True)[:6]: print("  top %.4f %s [%s]" % (ms, label[-50:], k))
PY
done
