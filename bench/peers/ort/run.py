#!/usr/bin/env python3
"""run.js for machines with Python's onnxruntime and no Node (the GPU machine):
runs an ONNX model with ONNX Runtime on DIR/input_<i>.npy and writes
DIR_OUT/output_<i>.npy, the session configured as run.js configures it.

    python3 run.py MODEL.onnx --inputs DIR --outputs DIR [--threads N]
"""
import argparse
import os
import sys

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--outputs", required=True)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    feeds = {x.name: np.load(os.path.join(a.inputs, f"input_{i}.npy"))
             for i, x in enumerate(s.get_inputs())}
    os.makedirs(a.outputs, exist_ok=True)
    for i, (o, v) in enumerate(zip(s.get_outputs(), s.run(None, feeds))):
        np.save(os.path.join(a.outputs, f"output_{i}.npy"), v)
        print(f"output {i} '{o.name}': {v.dtype}{list(v.shape)}")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line, as run.js reports
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
