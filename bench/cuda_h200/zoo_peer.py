#!/usr/bin/env python3
"""hone's cuda backend against PyTorch on the zoo (tests/zoo), per precision.

For each zoo model and point, builds the very module the zoo exports (registry.build_model:
seeded random weights) and feeds both sides the point's seeded inputs, WORK/NAME/POINT/in/
input_<i>.npy. PyTorch variants per precision:

  fp32  eager_fp32, cudagraph_fp32, compile_fp32                 (TF32 off)
  tf32  eager_tf32, cudagraph_tf32                               (TF32 on for matmul and cuDNN)
  bf16  eager_bf16_autocast, cudagraph_bf16_autocast,
        eager_bf16_weights, cudagraph_bf16_weights, compile_bf16_weights
        (autocast: fp32 weights under torch.autocast(bfloat16); bf16 weights: module and
        float inputs cast to bfloat16)
  fp16  the same five with float16

each timed as the median of --iters calls after --warmup calls (CUDA events around each call
on cuda; time.perf_counter on cpu). torch.compile's first call (the compile) is timed apart.
PyTorch strict fp32 eager is the reference output. hone: `hone bench MODEL --backend B --config
precision=P --inputs POINT/in --json` (p50, and the device's p50 where the backend reports one),
then `hone run` on the same inputs; relative L2 of its outputs against the reference (the
largest over the outputs). Any failure, on either side, is kept as text in its row.

  zoo_peer.py --hone BIN --work DIR --out FILE.json [--models a,b] [--points b1,b32]
      [--precisions fp32,tf32,bf16] [--compile 0|1] [--iters 50] [--budget-s 500]
      [--device cuda|cpu] [--hone-backend cuda|onednn] [--exporter torchscript|dynamo]

--out is a hone-bench/1 results file (bench/RESULTS.md, "Results as dated JSON"), one run of kind
zoo-pytorch-peer; rows already in it are skipped, so calls with a --budget-s resume into it.
--device cpu --hone-backend onednn checks the harness on a machine without a GPU: the variants
that need CUDA (CUDA graphs, TF32) are recorded as not applicable with that reason.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "tests" / "zoo"
sys.path.insert(0, str(ZOO))
import registry  # noqa: E402  (tests/zoo)
import zoo  # noqa: E402  (tests/zoo/zoo.py: point_skip)

KIND = "zoo-pytorch-peer"
HARNESS = "bench/cuda_h200/zoo_peer.py"
VARIANTS = {
    "fp32": ["eager_fp32", "cudagraph_fp32", "compile_fp32"],
    "tf32": ["eager_tf32", "cudagraph_tf32"],
    "bf16": ["eager_bf16_autocast", "cudagraph_bf16_autocast", "eager_bf16_weights", "cudagraph_bf16_weights",
             "compile_bf16_weights"],
    "fp16": ["eager_fp16_autocast", "cudagraph_fp16_autocast", "eager_fp16_weights", "cudagraph_fp16_weights",
             "compile_fp16_weights"],
}


def err_text(e):
    s = "%s: %s" % (type(e).__name__, str(e).strip())
    return s[:400]


class NotApplicable(Exception):
    pass


def flat(out):
    """A module's outputs as a list of tensors (zoo order: a dict's values, a tuple's items)."""
    if isinstance(out, dict):
        out = list(out.values())
    elif not isinstance(out, (tuple, list)):
        out = [out]
    return list(out)


def rel_l2(got, want):
    """The largest relative L2 error over the outputs (float64), or an error text."""
    import numpy as np
    if len(got) != len(want):
        raise ValueError("%d outputs, the reference has %d" % (len(got), len(want)))
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            raise ValueError("output shape %s, the reference's %s" % (list(g.shape), list(w.shape)))
        worst = max(worst, float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30)))
    return worst


class Timer:
    def __init__(self, torch, device, iters, warmup):
        self.torch, self.device, self.iters, self.warmup = torch, device, iters, warmup

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def median_ms(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        self.sync()
        ts = []
        for _ in range(self.iters):
            if self.device == "cuda":
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                torch.cuda.synchronize()
                ts.append(a.elapsed_time(b))
            else:
                t = time.perf_counter()
                fn()
                ts.append((time.perf_counter() - t) * 1e3)
        return float(statistics.median(ts))


def set_tf32(torch, on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def cuda_graph(torch, fn):
    """fn captured as a CUDA graph (after three warm-up calls on a side stream), and its static
    outputs after one replay (capture alone computes nothing)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = fn()
    except Exception:
        torch.cuda.synchronize()  # let the failed capture's stream settle before the next variant
        raise
    g.replay()
    torch.cuda.synchronize()
    return g, out


def torch_variants(a, torch, module, inputs, ref, precisions):
    """{variant: {ms, precision, rel_l2 | error | not_applicable}} for the precisions asked."""
    import copy
    dev = a.device
    timer = Timer(torch, dev, a.iters, a.warmup)
    res = {}

    def to_np(outs):
        return [o.detach().float().cpu().numpy() for o in flat(outs)]

    def measure(name, prec, fn, prepare=None):
        """fn: one call; prepare (optional): returns (call, outputs) after any one-off work it times."""
        r = {"precision": prec}
        try:
            if prepare is not None:
                fn, outs = prepare()
            else:
                outs = fn()
            timer.sync()
            r["rel_l2"] = rel_l2(to_np(outs), ref)
            r["ms"] = timer.median_ms(fn)
        except NotApplicable as e:
            r["not_applicable"] = str(e)
        except Exception as e:
            r["error"] = err_text(e)
        res[name] = r
        return r

    def graph_of(fn):
        def prepare():
            if dev != "cuda":
                raise NotApplicable("CUDA graphs need --device cuda")
            g, out = cuda_graph(torch, fn)
            return g.replay, out
        return prepare

    def compiled(mod, xs, name):
        def prepare():
            if not a.compile:
                raise NotApplicable("--compile 0")
            if not hasattr(torch, "compile"):
                raise NotApplicable("torch %s has no torch.compile" % torch.__version__)
            torch._dynamo.reset()
            cm = torch.compile(mod)
            t = time.perf_counter()
            out = cm(*xs)
            timer.sync()
            res.setdefault("_compile_s", {})[name] = round(time.perf_counter() - t, 2)
            return (lambda: cm(*xs)), out
        return prepare

    with torch.no_grad():
        if "fp32" in precisions:
            set_tf32(torch, False)
            measure("eager_fp32", "fp32", lambda: module(*inputs))
            measure("cudagraph_fp32", "fp32", None, graph_of(lambda: module(*inputs)))
            measure("compile_fp32", "fp32", None, compiled(module, inputs, "compile_fp32"))
        if "tf32" in precisions:
            if dev != "cuda":
                for v in VARIANTS["tf32"]:
                    res[v] = {"precision": "tf32", "not_applicable": "TF32 is a CUDA math mode (--device cuda)"}
            else:
                set_tf32(torch, True)
                measure("eager_tf32", "tf32", lambda: module(*inputs))
                measure("cudagraph_tf32", "tf32", None, graph_of(lambda: module(*inputs)))
                set_tf32(torch, False)
        for half in ("bf16", "fp16"):
            if half not in precisions:
                continue
            set_tf32(torch, False)
            dt = torch.bfloat16 if half == "bf16" else torch.float16

            def autocast_call(cache=True, dt=dt):
                with torch.autocast(dev, dtype=dt, cache_enabled=cache):
                    return module(*inputs)
            measure("eager_%s_autocast" % half, half, autocast_call)
            # Captured without autocast's weight cache, as PyTorch's CUDA-graph notes ask.
            measure("cudagraph_%s_autocast" % half, half, None, graph_of(lambda: autocast_call(False)))
            weights = ["%s_%s_weights" % (v, half) for v in ("eager", "cudagraph", "compile")]
            try:
                mb = copy.deepcopy(module).to(dt)
                xb = [x.to(dt) if x.is_floating_point() else x for x in inputs]
            except Exception as e:
                for v in weights:
                    res[v] = {"precision": half, "error": "casting to %s: %s" % (half, err_text(e))}
            else:
                measure(weights[0], half, lambda: mb(*xb))
                measure(weights[1], half, None, graph_of(lambda: mb(*xb)))
                measure(weights[2], half, None, compiled(mb, xb, weights[2]))
                del mb
    return res


def sh(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s" % timeout


def hone_side(a, model_path, in_dir, prec, ref, timeout):
    """{p50_ms, device_p50_ms?, rel_l2} or the failures as text; ref None: bench only."""
    import numpy as np
    r = {"backend": a.hone_backend}
    cfg = ["--config", "precision=%s" % prec]
    rc, out, err = sh([a.hone, *a.hone_threads, "bench", str(model_path), "--backend", a.hone_backend, *cfg, "--inputs", str(in_dir),
                       "--iters", str(a.hone_iters), "--json"], timeout)
    if rc == 0:
        try:
            j = json.loads(out[out.find("{"): out.rfind("}") + 1])
            r["p50_ms"] = j["p50_ms"]
            if isinstance(j.get("device"), dict) and "p50_ms" in j["device"]:
                r["device_p50_ms"] = j["device"]["p50_ms"]
            r["build_ms"] = j.get("build_ms")
        except Exception as e:
            r["bench_error"] = "unreadable `hone bench --json` output: " + err_text(e)
    else:
        r["bench_error"] = ("rc %d: " % rc) + (err.strip() or out.strip())[-400:]
    if ref is None:
        r["run_error"] = "not compared: no PyTorch reference (see the row's error)"
        return r
    with tempfile.TemporaryDirectory(prefix="zoo_peer_") as od:
        rc, out, err = sh([a.hone, *a.hone_threads, "run", str(model_path), "--backend", a.hone_backend, *cfg, "--inputs", str(in_dir),
                           "--outputs", od], timeout)
        if rc == 0:
            try:
                got = [np.load(os.path.join(od, "output_%d.npy" % i)) for i in range(len(ref))]
                r["rel_l2"] = rel_l2(got, ref)
            except Exception as e:
                r["run_error"] = err_text(e)
        else:
            r["run_error"] = ("rc %d: " % rc) + (err.strip() or out.strip())[-400:]
    return r


def best_torch(variants, prec):
    xs = [(v["ms"], k) for k, v in variants.items() if k in VARIANTS[prec] and isinstance(v.get("ms"), float)]
    return min(xs) if xs else None


def ensure_export(a, name, pts):
    """WORK/NAME exported by zoo.py (its own process, batches 1 and 32) when its model or one of the points'
    inputs is missing (zoo.py adds only what is missing); an error text or ""."""
    mdir = Path(a.work) / name
    meta = mdir / "export.json"
    if (mdir / "model.onnx").exists() and meta.exists():
        m = json.loads(meta.read_text())
        if all((mdir / t / "in").is_dir() or zoo.point_skip(m, d) for t, d in pts):
            return ""
    rc, out, err = sh([sys.executable, str(ZOO / "zoo.py"), "export", name, "--exporter", a.exporter, "--work", a.work,
                       "--batches", "1,32"], 1200)
    print(out.strip()[-300:], flush=True)
    if rc != 0 or not (mdir / "model.onnx").exists():
        return "zoo.py export (rc %d): %s" % (rc, (out + err).strip()[-400:])
    return ""


def machine_and_device(a, torch):
    if a.device == "cuda":
        name = torch.cuda.get_device_name(0)
        try:
            drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True).stdout.strip().splitlines()[0]
        except Exception:
            drv = "unknown"
        machine = "h200" if "H200" in name else "h100" if "H100" in name else name.lower().replace(" ", "-")
        dev = "one %s, driver %s, CUDA %s; PyTorch %s in the same run" % (name, drv, torch.version.cuda,
                                                                        torch.__version__)
    else:
        machine = "cpu%d" % os.cpu_count()
        dev = "%d-core %s CPU; PyTorch %s on the CPU (%d threads) in the same run" % (
            os.cpu_count(), platform.machine(), torch.__version__, torch.get_num_threads())
    return a.machine or machine, a.device_text or dev


def commit_of(a):
    if a.commit:
        return a.commit
    c = ROOT / ".gpu" / "commit.txt"  # the bundle's commit, on the device machine
    if a.device == "cuda" and c.exists():
        return c.read_text().strip()
    p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def method_text(a):
    t = "time.perf_counter" if a.device == "cpu" else "CUDA events recorded around it"
    return (
        "zoo models built by tests/zoo/registry.py build_model (seeded random weights), inputs the point's "
        "WORK/NAME/POINT/in/input_<i>.npy for both sides, %s. PyTorch on %s: each variant the median of %d calls "
        "after %d warm-up calls, one call timed by %s; fp32 = TF32 off; tf32 = "
        "allow_tf32 on for matmul and cuDNN; bf16 autocast = fp32 weights under torch.autocast(bfloat16), bf16 "
        "weights = module and float inputs cast to bfloat16 (fp16: the same with float16); cudagraph_* = "
        "torch.cuda.CUDAGraph replay of the "
        "captured call (inputs already on the device); compile_* = torch.compile (default mode), its first call "
        "timed apart (compile_s). Reference: PyTorch eager strict fp32 outputs; rel_l2 = the largest relative L2 "
        "error over the outputs against it. hone: `hone bench MODEL --backend %s --config precision=P --inputs "
        "POINT/in --iters %d --json` p50 (end to end, input and output copies included; device_p50_ms: the "
        "device's own time where reported), outputs from `hone run` with the same backend, config and inputs. "
        "best = the fastest PyTorch variant of that precision that ran; ratio = hone p50 / best. Iterations "
        "here are the first call's; each row's call (calls[]) says its own.") % (
        ("%d CPU threads on both sides" % a.threads) if a.threads > 0 else "each side's default CPU threads",
        a.device, a.iters, a.warmup, t, a.hone_backend, a.hone_iters)


def load_out(a, torch):
    if os.path.exists(a.out):
        with open(a.out) as f:
            doc = json.load(f)
        run = next(r for r in doc["runs"] if r["kind"] == KIND)
        return doc, run
    machine, device = machine_and_device(a, torch)
    now = datetime.datetime.now(datetime.timezone.utc)
    run = {"kind": KIND, "harness": HARNESS, "title": "The zoo against PyTorch (%s)" % a.hone_backend,
           "command": " ".join([os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:]),
           "method": method_text(a), "device_kind": a.device, "hone_backend": a.hone_backend,
           "exporter": a.exporter, "rows": []}
    doc = {"schema": "hone-bench/1", "date": now.date().isoformat(), "time": now.strftime("%H:%M:%SZ"),
           "machine": machine, "commit": commit_of(a), "device": device, "runs": [run]}
    return doc, run


def save(a, doc):
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, a.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hone", required=True)
    ap.add_argument("--work", required=True, help="the zoo's exports: WORK/NAME/model.onnx, WORK/NAME/POINT/in")
    ap.add_argument("--out", required=True, help="results JSON (hone-bench/1); rows already there are skipped")
    ap.add_argument("--models", default="", help="a,b (default: every zoo model)")
    ap.add_argument("--points", default="", help="point tags, e.g. b1,b32,b1_s128 (default: every batch-1 and "
                    "batch-32 point the zoo defines)")
    ap.add_argument("--precisions", default="fp32,tf32,bf16")
    ap.add_argument("--compile", type=int, default=1)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--hone-iters", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=0, help="stop before starting a row past this (0: none)")
    ap.add_argument("--row-timeout-s", type=int, default=300, help="each hone command's time limit")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads of both sides (torch.set_num_threads, "
                    "hone --threads); default: on cpu, every core; on cuda, each side's own default")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--hone-backend", default="cuda", choices=("cuda", "onednn"))
    ap.add_argument("--exporter", default="torchscript", choices=("torchscript", "dynamo"))
    ap.add_argument("--machine", default="", help="the machine's name in results files (default from the device)")
    ap.add_argument("--device-text", default="", help="a line saying what the machine is")
    ap.add_argument("--commit", default="", help="hone's commit (default .gpu/commit.txt, else git HEAD)")
    a = ap.parse_args()
    start = time.time()
    import numpy as np
    import torch
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch %s sees no CUDA device (use --device cpu --hone-backend onednn)"
                 % torch.__version__)
    a.hone = os.path.abspath(a.hone)
    if a.device == "cpu" and a.threads <= 0:
        a.threads = os.cpu_count()
    a.hone_threads = ["--threads", str(a.threads)] if a.threads > 0 else []
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    a.work = os.path.abspath(a.work)
    precisions = [p for p in a.precisions.split(",") if p]
    for p in precisions:
        if p not in VARIANTS:
            sys.exit("precision %s: one of %s" % (p, ",".join(VARIANTS)))
    names = [n for n in a.models.split(",") if n] or [m["name"] for m in registry.MODELS]
    for n in names:
        if n not in registry.BY_NAME:
            sys.exit("no model %s in the zoo (tests/zoo/zoo.py list)" % n)
    wanted_points = set(p for p in a.points.split(",") if p)
    doc, run = load_out(a, torch)
    done = {(r["model"], r["point"], r["precision"]) for r in run["rows"]}
    # Every call that added rows, with its command: a row's "call" indexes this list.
    calls = run.setdefault("calls", [])
    calls.append({"command": " ".join([os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:]),
                  "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "iters": a.iters, "warmup": a.warmup, "hone_iters": a.hone_iters, "compile": a.compile,
                  "threads": a.threads})
    call = len(calls) - 1
    longest = [0.0]  # the longest (model, point) so far, seconds: a point is started only if one as long fits

    def budget_left():
        return a.budget_s <= 0 or time.time() - start + longest[0] < a.budget_s
    stopped = ""
    for name in names:
        model = registry.BY_NAME[name]
        pts = [(t, d) for t, d in registry.points(model, [1, 32]) if not wanted_points or t in wanted_points]
        todo = [(t, d, p) for t, d in pts for p in precisions if (name, t, p) not in done]
        if not todo:
            continue
        if not budget_left():
            stopped = "before %s: %.0f s of the %.0f s budget spent, the longest point took %.0f s" % (
                name, time.time() - start, a.budget_s, longest[0])
            break
        def add(point, prec, row):
            row.update(model=name, point=point, precision=prec, exporter=a.exporter, call=call)
            run["rows"].append(row)
            done.add((name, point, prec))
            save(a, doc)
            print(json.dumps(row), flush=True)
        tx = time.time()
        err = ensure_export(a, name, pts)
        export_s = time.time() - tx  # counted into the model's first point, for the budget
        if err:
            for t, d, p in todo:
                add(t, p, {"error": "export: " + err})
            continue
        mdir = Path(a.work) / name
        meta = json.loads((mdir / "export.json").read_text())
        module = None
        for t, dims in pts:
            precs = [p for p in precisions if (name, t, p) not in done]
            if not precs:
                continue
            if not budget_left():
                stopped = "before %s %s: %.0f s of the %.0f s budget spent, the longest point took %.0f s" % (
                    name, t, time.time() - start, a.budget_s, longest[0])
                break
            skip = zoo.point_skip(meta, dims)
            in_dir = mdir / t / "in"
            if not skip and not in_dir.is_dir():
                skip = "no inputs %s (the export has no point %s)" % (in_dir, t)
            if skip:
                for p in precs:
                    add(t, p, {"skipped": skip})
                continue
            t0 = time.time()
            try:
                if module is None:
                    module = registry.build_model(model).to(a.device)
                files = sorted(in_dir.glob("input_*.npy"), key=lambda f: int(f.stem.split("_")[1]))
                arrays = [np.load(f) for f in files]
                inputs = [torch.from_numpy(x).to(a.device) for x in arrays]
                set_tf32(torch, False)
                with torch.no_grad():
                    ref = [o.detach().float().cpu().numpy() for o in flat(module(*inputs))]
                variants = torch_variants(a, torch, module, inputs, ref, precs)
            except Exception as e:  # hone is still timed; without a reference, no relative L2
                for p in precs:
                    add(t, p, {"dims": dims, "error": "PyTorch: " + err_text(e),
                               "hone": hone_side(a, mdir / "model.onnx", in_dir, p, None, a.row_timeout_s)})
                continue
            compile_s = variants.pop("_compile_s", {})
            if a.device == "cuda":
                torch.cuda.empty_cache()  # PyTorch's cached blocks are not hone's to compete with
            for p in precs:
                tv = {k: v for k, v in variants.items() if k in VARIANTS[p]}
                row = {"dims": dims, "torch": tv}
                cs = {k: v for k, v in compile_s.items() if k in VARIANTS[p]}
                if cs:
                    row["compile_s"] = cs
                b = best_torch(tv, p)
                if b:
                    row["best"] = {"variant": b[1], "ms": b[0]}
                row["hone"] = hone_side(a, mdir / "model.onnx", in_dir, p, ref, a.row_timeout_s)
                if b and isinstance(row["hone"].get("p50_ms"), (int, float)):
                    row["ratio"] = row["hone"]["p50_ms"] / b[0]
                add(t, p, row)
            longest[0] = max(longest[0], time.time() - t0 + export_s)
            export_s = 0.0
        if stopped:
            break
        del module
    if not any(r.get("call") == call for r in run["rows"]):
        calls.pop()  # nothing added: the file keeps only the calls its rows came from
    if stopped:
        run["stopped"] = stopped
    else:
        run.pop("stopped", None)
    save(a, doc)
    print("%s: %d rows%s (%.0f s)" % (a.out, len(run["rows"]), "; stopped: " + stopped if stopped else "",
                                      time.time() - start), flush=True)


if __name__ == "__main__":
    main()
