#!/usr/bin/env bash
# corpus.js compare can fail: outputs 1% off (relative L2) on a model whose
# ORT spread is 0 are rejected, the same outputs pass, a wrong shape is
# rejected, and a manifest floor is honoured. Needs node only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node -e '
  const { writeNpy } = require(process.argv[1]);
  const fs = require("fs"), path = require("path"), w = process.argv[2];
  const a = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) + 2);
  const off = a.map(v => v * 1.01), short = a.slice(0, 32);
  const put = (dir, name, data, shape) => { fs.mkdirSync(path.join(w, dir), { recursive: true });
    writeNpy(path.join(w, dir, name), "float32", shape, data); };
  // Two outputs named as mlsd_320_tiny names them; its "scores" has a floor of 1e-3.
  put("expect/ort_disabled", "output_0.npy", a, [64]); put("expect/ort_disabled", "output_1.npy", a, [64]);
  put("same", "output_0.npy", a, [64]); put("same", "output_1.npy", a, [64]);
  put("off", "output_0.npy", off, [64]); put("off", "output_1.npy", a, [64]);
  put("shape", "output_0.npy", short, [32]); put("shape", "output_1.npy", a, [64]);
  put("floor", "output_0.npy", a, [64]); put("floor", "output_1.npy", a.map(v => v * 1.0005), [64]);
  fs.writeFileSync(path.join(w, "expect", "spread.json"), JSON.stringify({ model: "mlsd_320_tiny",
    outputs: [{ name: "offsets", shape: [64], rel_l2: 0 }, { name: "scores", shape: [64], rel_l2: 0 }] }));
' "$here/../../bench/peers/ort/npy.js" "$work"
c() { node "$here/corpus.js" compare "$work/expect" "$work/$1" > "$work/$1.out"; }
c same || { echo "FAIL: identical outputs were rejected"; cat "$work/same.out"; exit 1; }
if c off; then echo "FAIL: outputs 1% off were accepted"; cat "$work/off.out"; exit 1; fi
if c shape; then echo "FAIL: a wrong shape was accepted"; exit 1; fi
grep -q 'shape \[32\] vs ORT \[64\]' "$work/shape.out" || { echo "FAIL: no shape message"; cat "$work/shape.out"; exit 1; }
c floor || { echo "FAIL: 5e-4 off on an output with floor 1e-3 was rejected"; cat "$work/floor.out"; exit 1; }
echo "compare: 1% off rejected, identical and within-floor accepted, wrong shape rejected"
