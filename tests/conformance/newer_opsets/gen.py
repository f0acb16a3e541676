#!/usr/bin/python3
"""Generates conformance cases for ai.onnx op versions 18-26 in ONNX's
backend-test layout (<case>/model.onnx, <case>/test_data_set_0/input_K.pb,
output_K.pb) under data/. Models are single nodes built with onnx.helper
(Debian's python3-onnx 1.12, whose checker stops at opset 17, so it is not
run); inputs are seeded; the expected outputs are what ONNX Runtime 1.30
computes (its Node.js binding, run_ort.js), not what hone computes.

    /usr/bin/python3 tests/conformance/newer_opsets/gen.py [NAME_FILTER]

Cases live in cases_*.py, one module per op family; each calls `case(...)`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CASES, build  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")

def main():
    import cases_attention  # noqa: F401  (each module registers its cases)
    import cases_misc  # noqa: F401
    import cases_changed  # noqa: F401
    import cases_models  # noqa: F401

    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    todo = [c for c in CASES if pattern in c["name"]]
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    work = tempfile.mkdtemp(prefix="hone-newer-opsets-")
    try:
        for c in todo:
            d = os.path.join(work, c["name"])
            os.makedirs(d)
            with open(os.path.join(d, "model.onnx"), "wb") as f:
                f.write(build(c).SerializeToString())
            fed = [(n, a) for n, a in c["inputs"] if n and n not in c["initializers"]]
            for k, (_, a) in enumerate(fed):  # noqa: B007
                np.save(os.path.join(d, f"input_{k}.npy"), a)
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump({"inputs": [n for n, _ in fed],
                           "outputs": [n for n, _ in c["outputs"] if n]}, f)
        subprocess.run(["node", os.path.join(HERE, "run_ort.js"), work], check=True)
        written = failed = 0
        for c in todo:
            d = os.path.join(work, c["name"])
            out = os.path.join(DATA, c["name"])
            shutil.rmtree(out, ignore_errors=True)
            if os.path.exists(os.path.join(d, "error.txt")):
                failed += 1
                continue
            ts = os.path.join(out, "test_data_set_0")
            os.makedirs(ts)
            shutil.copy(os.path.join(d, "model.onnx"), out)
            fed = [a for n, a in c["inputs"] if n and n not in c["initializers"]]
            for k, a in enumerate(fed):
                with open(os.path.join(ts, f"input_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())
            for k in range(len([n for n, _ in c["outputs"] if n])):
                a = np.load(os.path.join(d, f"output_{k}.npy"))
                with open(os.path.join(ts, f"output_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())
            written += 1
        print(f"{written} cases written to {DATA}, {failed} refused by ONNX Runtime")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
