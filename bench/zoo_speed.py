#!/usr/bin/env python3
"""hone against ONNX Runtime on the zoo's exports, on this machine's CPU.

For every model the zoo exported (tests/zoo: WORK/EXPORTER/NAME/model.onnx and
its points' inputs, WORK/EXPORTER/NAME/<point>/in/input_<i>.npy), times each
hone CPU backend with `hone bench --inputs` and ONNX Runtime (npm
onnxruntime-node, bench/peers/ort/bench.js) on the same inputs at the same
thread count, in ROUNDS rounds whose order alternates (hone first, then ORT
first, ...), and keeps the median of each side's p50s. hone's figure is its
best backend on that model (what `hone tune` keeps when every backend passes
the gate; the zoo test checks their outputs). Writes the rows as JSON and
prints a table with the ratio hone / ORT and its geometric mean.

    bench/zoo_speed.py [--work build/zoo] [--threads 1] [--rounds 5] [--iters 30]
        [--backends onednn,blas] [--models a,b] [--points b1_s128,b1]
        [--machine NAME] [--device TEXT] [--save]

The zoo's exports come from its tests (`ctest --test-dir build -L zoo`).
--save writes bench/results/<date>-<machine>-<commit>.json (schema
hone-bench/1); bench/summary.py then tabulates it in RESULTS.md.
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_json(cmd, timeout):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {(out.stderr or out.stdout).strip()[-400:]}")
    text = out.stdout.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.splitlines()[-1])


def hone_p50(hone, model, inputs, backend, threads, iters, timeout):
    return run_json([hone, "--threads", str(threads), "bench", model, "--backend", backend,
                     "--inputs", inputs, "--iters", str(iters), "--json"], timeout)["p50_ms"]


def ort_p50(model, inputs, threads, iters, timeout):
    return run_json(["node", str(ROOT / "bench/peers/ort/bench.js"), model, "--inputs", inputs,
                     "--threads", str(threads), "--iters", str(iters)], timeout)["p50_ms"]


def points(work, exporter, models, wanted):
    base = Path(work) / exporter
    for mdir in sorted(p for p in base.iterdir() if p.is_dir()):
        if models and mdir.name not in models:
            continue
        model = mdir / "model.onnx"
        if not model.is_file():
            continue
        for pdir in sorted(p for p in mdir.iterdir() if (p / "in").is_dir()):
            if wanted and pdir.name not in wanted:
                continue
            yield mdir.name, pdir.name, model, pdir / "in"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(ROOT / "build/zoo"))
    ap.add_argument("--exporter", default="torchscript")
    ap.add_argument("--hone", default=str(ROOT / "build/hone"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--backends", default="onednn,blas")
    ap.add_argument("--models", default="")
    ap.add_argument("--points", default="")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--machine", default=f"cpu{os.cpu_count()}",
                    help="the machine's name in the results file's name")
    ap.add_argument("--device", default="", help="a line saying what the machine is")
    ap.add_argument("--save", action="store_true", help="write bench/results/<date>-<machine>-<commit>.json")
    a = ap.parse_args()
    backends = [b for b in a.backends.split(",") if b]
    models = set(filter(None, a.models.split(",")))
    wanted = set(filter(None, a.points.split(",")))
    rows = []
    for name, point, model, inputs in points(a.work, a.exporter, models, wanted):
        samples = {b: [] for b in backends}
        samples["ort"] = []
        errors = {}
        for r in range(a.rounds):
            sides = ["hone", "ort"] if r % 2 == 0 else ["ort", "hone"]
            for side in sides:
                if side == "ort":
                    try:
                        samples["ort"].append(ort_p50(str(model), str(inputs), a.threads, a.iters, a.timeout))
                    except Exception as e:  # noqa: BLE001 - reported in the row
                        errors["ort"] = str(e)
                    continue
                for b in backends:
                    if b in errors:
                        continue
                    try:
                        samples[b].append(hone_p50(a.hone, str(model), str(inputs), b, a.threads, a.iters, a.timeout))
                    except Exception as e:  # noqa: BLE001
                        errors[b] = str(e)
        med = {k: statistics.median(v) for k, v in samples.items() if v}
        hone_best = min((med[b], b) for b in backends if b in med) if any(b in med for b in backends) else None
        row = {"model": name, "point": point, "exporter": a.exporter, "threads": a.threads,
               "p50_ms": med, "errors": errors}
        if hone_best and "ort" in med:
            row["hone_best"] = {"backend": hone_best[1], "p50_ms": hone_best[0]}
            row["ratio"] = hone_best[0] / med["ort"]
        rows.append(row)
        ratio = f"{row['ratio']:.2f}" if "ratio" in row else "-"
        best = f"{hone_best[1]} {hone_best[0]:.3f}" if hone_best else "-"
        print(f"{name:28s} {point:8s} hone {best:>18s}  ort {med.get('ort', float('nan')):9.3f}  ratio {ratio}"
              + (f"  errors: {', '.join(errors)}" if errors else ""), flush=True)
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    print(f"geometric mean hone / ORT over {len(ratios)} points: {geo:.3f}")
    if a.save:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "unknown"
        date = datetime.date.today().isoformat()
        device = a.device or f"{os.cpu_count()} cores ({platform.processor() or platform.machine()})"
        time = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%SZ")
        doc = {"schema": "hone-bench/1", "date": date, "time": time, "machine": a.machine, "commit": commit,
               "device": device,
               "runs": [{"kind": "zoo-cpu-vs-ort", "harness": "bench/zoo_speed.py",
                         "title": f"The zoo ({a.exporter} exports) against ONNX Runtime at {a.threads} thread(s)",
                         "method": (f"median of {a.rounds} alternated rounds of p50 over {a.iters} runs; "
                                    f"hone: the fastest of {', '.join(backends)}"),
                         "threads": a.threads, "geomean_ratio": geo, "rows": rows}]}
        out = ROOT / "bench" / "results" / f"{date}-{a.machine}-{commit}.json"
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
