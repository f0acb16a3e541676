// Compares DIR_A/output_<i>.npy with DIR_B/output_<i>.npy element by element:
// each must satisfy |a-b| <= atol + rtol*|b|. Prints the max relative error
// |a-b| / max(|b|, floor) and the worst element. The default atol 1e-6 covers
// ONNX Runtime's approximate Sigmoid/Tanh kernels near 0 (e.g. 2.4e-7 where
// the exact value is 1.3e-7); it is far below what a wrong kernel produces.
//
//   node compare.js HONE_DIR ORT_DIR [--rtol 1e-4] [--atol 1e-6] [--floor 1e-3]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { readNpy } = require('./npy');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const [a, b] = [process.argv[2], process.argv[3]];
const rtol = arg('--rtol', 1e-4);
const floor = arg('--floor', 1e-3);
const atol = arg('--atol', 1e-6);
let ok = true;
for (let i = 0; fs.existsSync(path.join(b, `output_${i}.npy`)); ++i) {
  const x = readNpy(path.join(a, `output_${i}.npy`));
  const y = readNpy(path.join(b, `output_${i}.npy`));
  if (x.shape.join(',') !== y.shape.join(',')) {
    console.log(`output ${i}: shape [${x.shape}] vs [${y.shape}]`);
    ok = false;
    continue;
  }
  let worst = 0, at = -1, bad = 0;
  for (let k = 0; k < y.data.length; ++k) {
    const xv = Number(x.data[k]), yv = Number(y.data[k]);
    const diff = Math.abs(xv - yv);
    const err = diff / Math.max(Math.abs(yv), floor);
    if (!(err <= worst)) { worst = err; at = k; }
    if (!(diff <= atol + rtol * Math.abs(yv))) ++bad;
  }
  const pass = bad === 0;
  ok = ok && pass;
  console.log(`output ${i} [${y.shape}]: max relative error ${worst.toExponential(3)}` +
              (at >= 0 ? ` at ${at} (${Number(x.data[at])} vs ${Number(y.data[at])})` : '') +
              (pass ? ' ok' : `; ${bad} elements outside atol ${atol} + rtol ${rtol} FAIL`));
}
process.exit(ok ? 0 : 1);
