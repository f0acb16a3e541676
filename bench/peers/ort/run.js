// Runs an ONNX model with ONNX Runtime (npm onnxruntime-node) on inputs
// DIR/input_<i>.npy and writes DIR_OUT/output_<i>.npy, so hone's outputs can
// be cross-checked against ORT's on the same inputs.
//
//   node run.js MODEL.onnx --inputs DIR --outputs DIR [--threads N]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { ort, openSession, readFeeds } = require('./session');
const { writeNpy } = require('./npy');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

(async () => {
  const model = process.argv[2];
  const inDir = arg('--inputs');
  const outDir = arg('--outputs');
  const threads = Number(arg('--threads', '1'));
  if (!model || !inDir || !outDir) {
    console.error('usage: node run.js MODEL.onnx --inputs DIR --outputs DIR [--threads N]');
    process.exit(2);
  }
  const session = await openSession(model, threads);
  const feeds = readFeeds(session, inDir);
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    writeNpy(path.join(outDir, `output_${i}.npy`), t.type, t.dims, t.data);
    console.log(`output ${i} '${name}': ${t.type}[${t.dims.join(',')}]`);
  });
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
