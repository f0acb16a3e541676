#!/usr/bin/env python3
"""One device call's checks for the cuda backend: unit tests, partitions, reference fallbacks
and CUDA-graph failures in the debug log, then hone bench p50 under several configs."""
import json, os, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
hone, work, out = sys.argv[1], sys.argv[2], os.environ.get("OUT", "/tmp")
models = sys.argv[3].split(",")
configs = [c.split("+") if c else [] for c in sys.argv[4].split(";")] if len(sys.argv) > 4 else [[]]
os.makedirs(work, exist_ok=True)
def sh(cmd, t=600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=t)
    return p.returncode, p.stdout + p.stderr
import peer
rows = []
for m in models:
    path = os.path.join(work, m + ".onnx")
    if not os.path.exists(path):
        mod, shape, _ = peer.make(m); peer.export(mod, shape, path)
    rc, o = sh([hone, "inspect", path, "--backend", "cuda"])
    print(m, [l for l in o.splitlines() if l.startswith("partition") or l.startswith("fallbacks")], flush=True)
    rc, o = sh([hone, "--log-level", "debug", "run", path, "--backend", "cuda", "--random-inputs", "1",
                "--dim", "batch=2", "--outputs", os.path.join(work, m + "_out")])
    bad = [l[:300] for l in o.splitlines() if "reference" in l or "without a CUDA graph" in l or "rror" in l]
    print(m, "run rc", rc, "issues:", bad[:6], flush=True)
    open(os.path.join(out, m + "_run.log"), "w").write(o[-200000:])
    for b in (1, 32):
        for cfg in configs:
            args = sum((["--config", c] for c in cfg), [])
            rc, o = sh([hone, "bench", path, "--backend", "cuda", "--batch", str(b), "--iters", "60",
                        "--warmup", "10", "--json", *args])
            p50 = peer.p50_of(o) if rc == 0 else o[-300:]
            rows.append((m, b, "+".join(cfg) or "default", p50))
            print(m, b, "+".join(cfg) or "default", p50, flush=True)
print("\nmodel batch config p50_ms")
for r in rows: print(*r)
