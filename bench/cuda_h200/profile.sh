#!/usr/bin/env bash
# Where the time goes, both sides, for one device call: exports MODELS (peer.py's exporter, random
# weights) to /tmp/w, then for each "MODEL:BATCH:PREC" job a PyTorch profile of the matching mode
# (fp32 strict eager, tf32 eager, bf16 autocast; kernels summed by name family) and hone's
# per-step profile (probe.sh) under precision=PREC plus EXTRA settings.
#   bash .gpu/profile.sh "vit_b_16:32:tf32 bert:32:fp32" ["--config k=v ..."]
set -u
. "$(dirname "$0")/device_env.sh"
provenance
(cd /tmp/w && timeout 300 python3 - "$R/.gpu" "$1" <<'PY'
import sys, os, collections, re, torch
sys.path.insert(0, sys.argv[1]); import peer
from torch.profiler import profile, ProfilerActivity
jobs = [j.split(":") for j in sys.argv[2].split()]
done = {}
for name, bs, prec in jobs:
    if name not in done:
        m, shape, _ = peer.make(name)
        if not os.path.exists(f"{name}.onnx"): peer.export(m, shape, f"{name}.onnx")
        done[name] = (m.cuda(), shape)
    m, shape = done[name]
    x = torch.randn(int(bs), *shape, device="cuda")
    tf = prec != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf; torch.backends.cudnn.allow_tf32 = tf
    ac = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    with torch.no_grad(), torch.autocast("cuda", dtype=ac or torch.float32, enabled=ac is not None):
        for _ in range(5): m(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(5): m(x)
            torch.cuda.synchronize()
    fam = collections.defaultdict(lambda: [0.0, 0])
    for e in p.events():
        if e.device_type != torch.autograd.DeviceType.CUDA: continue
        k = re.sub(r"<.*", "", e.name)[:90]
        fam[k][0] += e.device_time / 5 / 1000; fam[k][1] += 1
    tot = sum(v[0] for v in fam.values())
    print(f"== torch {name} b{bs} {prec}: {tot:.3f} ms of kernels per run")
    for k, (ms, c) in sorted(fam.items(), key=lambda x: -x[1][0])[:12]:
        print(f"  {ms:.3f} ms {c // 5:4d} x {k}")
PY
)
for j in $1; do
  IFS=: read -r m b p <<< "$j"
  bash $R/.gpu/probe.sh $m $b "--config precision=$p ${2:-}"
done
