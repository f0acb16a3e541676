#!/usr/bin/env python3
"""The ctest zoo_peer_cpu_harness: bench/cuda_h200/zoo_peer.py in its cpu mode (PyTorch on the CPU,
hone's onednn backend) on one small zoo model (espcn, batch 1, fp32 and bf16), then checks what it
wrote, not how fast anything was: every PyTorch variant is timed or says why not (CUDA graphs and
torch.compile are not applicable here), hone's fp32 outputs match PyTorch's within 1e-4, a second
call resumes (adds no row), and bench/summary.py tabulates the rows.

  zoo_peer_test.py HONE WORKDIR      # exit 77 (skipped) without Debian's torch, torchvision, onnx
"""
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    hone, work = sys.argv[1], Path(sys.argv[2])
    try:
        import numpy, onnx, torch, torchvision  # noqa: F401
    except ImportError as e:
        print("SKIP: %s lacks %s (scripts/install-deps.sh --tests)" % (sys.executable, e.name))
        return 77
    work.mkdir(parents=True, exist_ok=True)
    out = work / "rows.json"
    if out.exists():
        out.unlink()
    cmd = [sys.executable, str(HERE / "zoo_peer.py"), "--hone", hone, "--work", str(work / "exports"),
           "--out", str(out),
           "--models", "espcn", "--points", "b1", "--precisions", "fp32,bf16", "--device", "cpu",
           "--hone-backend", "onednn", "--iters", "3", "--warmup", "1", "--hone-iters", "5"]
    subprocess.run(cmd, check=True, timeout=300)
    doc = json.loads(out.read_text())
    assert doc["schema"] == "hone-bench/1" and len(doc["runs"]) == 1, doc.keys()
    rows = {r["precision"]: r for r in doc["runs"][0]["rows"]}
    assert sorted(rows) == ["bf16", "fp32"], sorted(rows)
    f = rows["fp32"]
    assert f["model"] == "espcn" and f["point"] == "b1", f
    assert isinstance(f["torch"]["eager_fp32"]["ms"], float), f["torch"]
    assert "not_applicable" in f["torch"]["cudagraph_fp32"], f["torch"]
    assert f["best"]["variant"] == "eager_fp32", f["best"]
    assert isinstance(f["hone"]["p50_ms"], float) and f["hone"]["rel_l2"] < 1e-4, f["hone"]
    assert abs(f["ratio"] - f["hone"]["p50_ms"] / f["best"]["ms"]) < 1e-12
    for name, v in rows["bf16"]["torch"].items():
        assert "ms" in v or "error" in v or "not_applicable" in v, (name, v)
    # Resumed: the rows already there are skipped.
    subprocess.run(cmd, check=True, timeout=120)
    assert len(json.loads(out.read_text())["runs"][0]["rows"]) == 2
    sys.path.insert(0, str(HERE.parent))
    import summary
    doc["_file"] = "results/test.json"
    table = summary.zoo_peer_table([doc])
    assert any(line.startswith("| espcn | b1 | fp32 | ") and "(eager_fp32)" in line for line in table), table
    print("zoo_peer cpu harness: %d rows, fp32 hone/PyTorch %.2f, rel L2 %.2e" % (
        len(rows), f["ratio"], f["hone"]["rel_l2"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
