#!/usr/bin/env python3
"""PyTorch (eager fp32 strict, eager TF32, eager bf16 autocast, fp16 autocast, each timed on a device
tensor with CUDA events; eager fp32/TF32/bf16 also end to end from host memory; with --graphs 1
CUDA graphs of eager fp32 and of bf16 autocast; torch.compile fp32 for the models --compile names)
against hone's cuda backend in several precision configs, per model and batch, in one run (no hone
tune: `hone bench MODEL --backend cuda --config precision=P`: its p50 with the input and output
copies, and its device p50 without them, as PyTorch's timings on device tensors). Relative L2 of each hone
output against PyTorch's strict fp32 output on the same input.
  python3 torch_peer.py --hone BIN --work DIR --models a,b --batches 1,32 --precisions fp32,tf32,bf16,fp16 \
      [--graphs 1] [--compile resnet50,vit_b_16]
A precision token may carry more hone settings after colons (fp32:attention_select=time:gemm_epilogue=true);
the token names its columns."""
import argparse, json, os, sys, time
import numpy as np, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer

ap = argparse.ArgumentParser()
ap.add_argument("--hone", required=True); ap.add_argument("--work", required=True)
ap.add_argument("--models", default="resnet50,mobilenet_v3,vit_b_16,bert")
ap.add_argument("--batches", default="1,32"); ap.add_argument("--iters", type=int, default=50)
ap.add_argument("--precisions", default="fp32,tf32,bf16,fp16")
ap.add_argument("--graphs", type=int, default=0, help="1: also CUDA graphs of eager fp32 and bf16 autocast")
ap.add_argument("--compile", default="", help="models to time under torch.compile fp32 too (comma list)")
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)
dev = torch.device("cuda")
results = []
for name in a.models.split(","):
    r = {"model": name}
    try:
        m, shape, kind = peer.make(name)
        path = os.path.join(a.work, f"{name}.onnx")
        r["exporter"] = peer.export(m, shape, path)
        md = m.to(dev)
        for bs in [int(b) for b in a.batches.split(",")]:
            row = {}
            x = torch.randn(bs, *shape, device=dev)
            with torch.no_grad():
                torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
                ref = md(x).float()
                row["eager_fp32"] = peer.median_ms(lambda: md(x), a.iters)
                torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True
                row["eager_tf32"] = peer.median_ms(lambda: md(x), a.iters)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    row["eager_bf16"] = peer.median_ms(lambda: md(x), a.iters)
                with torch.autocast("cuda", dtype=torch.float16):
                    row["eager_fp16"] = peer.median_ms(lambda: md(x), a.iters)
                # End to end from host memory, as hone's p50 measures: the input copied in,
                # the output copied back (pageable tensors, as a user's).
                # Also from page-locked memory (pin_memory()), as hone bench's inputs are by
                # default: the copy then runs at the link's DMA rate.
                xh = x.cpu(); xp = xh.pin_memory()
                def e2e(src):
                    ts = []
                    for i in range(a.iters + 10):
                        t0 = time.perf_counter(); md(src.to(dev, non_blocking=src.is_pinned())).float().cpu(); t1 = time.perf_counter()
                        if i >= 10: ts.append((t1 - t0) * 1e3)
                    return float(np.median(ts))
                for key, tf, ac in (("e2e_fp32", False, None), ("e2e_tf32", True, None), ("e2e_bf16", True, torch.bfloat16)):
                    torch.backends.cuda.matmul.allow_tf32 = tf; torch.backends.cudnn.allow_tf32 = tf
                    with torch.autocast("cuda", dtype=ac or torch.float32, enabled=ac is not None):
                        row[key] = e2e(xh)
                        row[key.replace("e2e", "e2e_pinned")] = e2e(xp)
                torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
                for key, ac in (("cudagraph_fp32", None), ("cudagraph_bf16", torch.bfloat16)) if a.graphs else ():
                    try:
                        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
                        with torch.cuda.stream(s), torch.autocast("cuda", dtype=ac or torch.float32, enabled=ac is not None):
                            for _ in range(3): md(x)
                        torch.cuda.current_stream().wait_stream(s)
                        g = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(g), torch.autocast("cuda", dtype=ac or torch.float32, enabled=ac is not None):
                            md(x)
                        row[key] = peer.median_ms(lambda: g.replay(), a.iters)
                    except Exception as ex:
                        row[key] = None; row[key + "_err"] = repr(ex)[:200]
                if name in a.compile.split(","):
                    try:
                        cm = torch.compile(md)
                        t0 = time.time(); cm(x); torch.cuda.synchronize(); row["compile_s"] = round(time.time() - t0, 1)
                        row["compile_fp32"] = peer.median_ms(lambda: cm(x), a.iters)
                    except Exception as ex:
                        row["compile_fp32"] = None; row["compile_err"] = repr(ex)[:200]
            d = os.path.join(a.work, f"{name}_b{bs}"); os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, "input_0.npy"), x.cpu().numpy())
            e = ref.cpu().double().numpy()
            for p in a.precisions.split(","):
                # A token is a precision, optionally with more settings: bf16:attention_select=time
                prec, *more = p.split(":")
                cfg = ["--config", f"precision={prec}"] + [x for kv in more for x in ("--config", kv)]
                rc, out, err, _ = peer.sh([a.hone, "--threads", "16", "bench", path, "--backend", "cuda",
                                           "--batch", str(bs), "--iters", str(a.iters * 2), "--json", *cfg])
                row[f"hone_{p}"] = peer.p50_of(out) if rc == 0 else None
                if rc == 0:  # the device's own time (copies excluded), as PyTorch's events measure
                    j = json.loads(out[out.find("{"): out.rfind("}") + 1])
                    row[f"hone_dev_{p}"] = j.get("device", {}).get("p50_ms")
                if rc != 0: row[f"hone_{p}_err"] = (out + err)[-400:]
                if rc == 0 and p == "fp32":  # the inputs in ordinary memory, as the e2e_fp32 row's
                    rc2, out2, _, _ = peer.sh([a.hone, "--threads", "16", "bench", path, "--backend", "cuda",
                                               "--batch", str(bs), "--iters", str(a.iters * 2), "--json",
                                               "--pageable-inputs", *cfg])
                    row["hone_pageable_fp32"] = peer.p50_of(out2) if rc2 == 0 else None
                o = f"{d}/out_{p}"
                rc, out, err, _ = peer.sh([a.hone, "run", path, "--backend", "cuda", "--inputs", d,
                                           "--outputs", o, *cfg])
                if rc == 0:
                    y = np.load(o + "/output_0.npy").astype(np.float64)
                    row[f"rel_l2_{p}"] = float(np.linalg.norm(y - e) / max(np.linalg.norm(e), 1e-30))
                else:
                    row[f"hone_{p}_run_err"] = (out + err)[-400:]
            r[f"b{bs}"] = row
            print(name, bs, json.dumps(row), flush=True)
    except Exception as ex:
        r["error"] = repr(ex)[:500]; print(name, "ERROR", r["error"], flush=True)
    results.append(r)
    json.dump(results, open(os.path.join(a.work, "results.json"), "w"), indent=1)
    torch.cuda.empty_cache()
ps = a.precisions.split(",")
print("\nmodel batch | torch fp32 tf32 bf16 fp16 graph32 graphbf16 compile32 e2e32 e2etf32 e2ebf16 pin32 pintf32 pinbf16 | " + " ".join("hone_" + p for p in ps) + " | " + " ".join("dev_" + p for p in ps) + " | " + " ".join("l2_" + p for p in ps))
f = lambda v: "-" if v is None else (f"{v:.3g}" if isinstance(v, float) and v < 0.01 else f"{v:.2f}")
for r in results:
    for k, row in r.items():
        if not k.startswith("b") or not isinstance(row, dict): continue
        print(r["model"], k[1:], "|", " ".join(f(row.get(t)) for t in ("eager_fp32", "eager_tf32", "eager_bf16", "eager_fp16", "cudagraph_fp32", "cudagraph_bf16", "compile_fp32", "e2e_fp32", "e2e_tf32", "e2e_bf16", "e2e_pinned_fp32", "e2e_pinned_tf32", "e2e_pinned_bf16")),
              "|", " ".join(f(row.get("hone_" + p)) for p in ps), "|", " ".join(f(row.get("hone_dev_" + p)) for p in ps),
              "|", " ".join(f(row.get("rel_l2_" + p)) for p in ps))
