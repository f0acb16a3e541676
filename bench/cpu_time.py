#!/usr/bin/env python3
"""CPU time per inference of hone and ONNX Runtime on one model, for a machine
whose cores other work shares.

When other processes hold the cores, wall-clock p50s (bench/zoo_speed.py) mostly
measure the scheduler: a run is preempted and the ratio follows the load. The
CPU time a process spends is far less sensitive to that. Each side runs twice
under `perf stat -e task-clock` (counting every thread), once with --lo and once
with --hi timed iterations; the difference over (hi - lo) is the CPU time of
one inference, without start-up, model load and warm-up. Sides alternate, in
--rounds rounds; the medians are printed with their ratio.

    bench/cpu_time.py MODEL.onnx INPUT_DIR [--hone build/hone] [--backend onednn]
        [--hone2 OTHER_HONE] [--rounds 3] [--lo 5] [--hi 25]

--hone2 adds a second hone build (before/after a change). Threads: 1 on both
sides. Needs `perf` (linux-perf) and node with bench/peers/ort installed. The
subtraction needs hi - lo iterations to outweigh the variation of start-up
(seconds of model load on large models): raise --hi there.
"""
import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def task_ms(cmd):
    out = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {out.stderr[-400:]}")
    for line in out.stderr.splitlines():
        if "task-clock" in line:
            return float(line.split(",")[0])
    raise RuntimeError(f"no task-clock in perf's output: {out.stderr[-400:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("inputs")
    ap.add_argument("--hone", default=str(ROOT / "build/hone"))
    ap.add_argument("--hone2", default="")
    ap.add_argument("--backend", default="onednn")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lo", type=int, default=5)
    ap.add_argument("--hi", type=int, default=25)
    a = ap.parse_args()

    def hone(binary):
        return lambda n: [binary, "--threads", "1", "bench", a.model, "--backend", a.backend,
                          "--inputs", a.inputs, "--iters", str(n)]

    def ort(n):
        return ["node", str(ROOT / "bench/peers/ort/bench.js"), a.model, "--inputs", a.inputs,
                "--threads", "1", "--iters", str(n)]

    sides = {"hone": hone(a.hone), "ort": ort}
    if a.hone2:
        sides["hone2"] = hone(a.hone2)
    got = {k: [] for k in sides}
    for r in range(a.rounds):
        for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
            got[k].append((task_ms(sides[k](a.hi)) - task_ms(sides[k](a.lo))) / (a.hi - a.lo))
    med = {k: statistics.median(v) for k, v in got.items()}
    line = "  ".join(f"{k} {v:.3f} ms" for k, v in med.items())
    ratios = "  ".join(f"{k}/ort {med[k] / med['ort']:.2f}" for k in med if k != "ort")
    print(f"{line}  {ratios}  (CPU time per inference, 1 thread, median of {a.rounds})")
    print("rounds:", {k: [round(x, 3) for x in v] for k, v in got.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
