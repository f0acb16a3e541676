"""AITune's flow with hone, from Python: samples in, tune (every backend
checked against the reference and measured), save, load in a fresh process,
infer.

    PYTHONPATH=build/python python3 examples/python/tune_and_serve.py models/mlp.onnx /tmp/hone-example
"""
import os
import subprocess
import sys

import numpy as np

import hone


def main(model, work):
    os.makedirs(work, exist_ok=True)
    info = hone.inspect(model)
    x_info = info["inputs"][0]
    print(f"{info['name']}: input {x_info['name']} {x_info['dtype']}{x_info['shape']}")

    # Samples: what the model will really see, at two batch sizes so hone
    # learns which axis is the batch and its bounds.
    rng = np.random.default_rng(0)
    feature = x_info["shape"][1]
    samples = [{x_info["name"]: rng.standard_normal((b, feature)).astype(np.float32)} for b in (1, 8)]

    tuned = hone.tune(model, samples, strategy="max-throughput")
    print(f"chose {tuned.backend}: {tuned.report['decision']['reason']}")
    package = os.path.join(work, "model.hone")
    tuned.save(package)
    with open(os.path.join(work, "report.html"), "w") as f:
        f.write(tuned.report_html())

    # A fresh process loads the package and runs it without tuning again.
    x = rng.standard_normal((4, feature)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    serve = (
        "import sys, numpy as np, hone\n"
        "m = hone.load(sys.argv[1])\n"
        "y = m(np.load(sys.argv[2]))\n"
        "np.save(sys.argv[3], y)\n"
        "print(f'served on {m.backend}: output {y.shape}')\n"
    )
    out = os.path.join(work, "y.npy")
    subprocess.run([sys.executable, "-c", serve, package, os.path.join(work, "x.npy"), out], check=True)
    np.testing.assert_array_equal(np.load(out), tuned(x))
    print("the loaded model gives the tuned model's outputs")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: tune_and_serve.py MODEL.onnx WORK_DIR")
    main(sys.argv[1], sys.argv[2])
