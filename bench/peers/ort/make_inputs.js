// Writes seeded random inputs DIR/input_<i>.npy for a model, from its input
// types, with symbolic dims taken from --dim NAME=VALUE (else 1).
//
//   node make_inputs.js MODEL.onnx --outputs DIR --seed 7 [--dim batch=2 ...]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ort = require('onnxruntime-node');
const { writeNpy } = require('./npy');

function mulberry32(a) {
  return () => {
    a |= 0; a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

(async () => {
  const model = process.argv[2];
  const argv = process.argv.slice(3);
  let outDir, seed = 1; const dims = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--outputs') outDir = argv[i + 1];
    else if (argv[i] === '--seed') seed = Number(argv[i + 1]);
    else if (argv[i] === '--dim') { const [k, v] = argv[i + 1].split('='); dims[k] = Number(v); }
  }
  const session = await ort.InferenceSession.create(model);
  const rand = mulberry32(seed);
  fs.mkdirSync(outDir, { recursive: true });
  session.inputMetadata.forEach((meta, i) => {
    if (!meta.isTensor) throw new Error(`input ${meta.name} is not a tensor`);
    const shape = meta.shape.map(d => (typeof d === 'number' && d >= 0) ? d : (dims[d] ?? 1));
    const n = shape.reduce((a, b) => a * b, 1);
    if (meta.type !== 'float32') throw new Error(`input ${meta.name}: only float32 inputs are generated`);
    const data = new Float32Array(n);
    for (let k = 0; k < n; ++k) data[k] = rand() * 2 - 1;
    writeNpy(path.join(outDir, `input_${i}.npy`), 'float32', shape, data);
    console.log(`input ${i} '${meta.name}': float32[${shape.join(',')}]`);
  });
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
