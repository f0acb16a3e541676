// Runs each case gen.py staged under WORKDIR/<case>/ (model.onnx,
// input_K.npy, meta.json naming the inputs and outputs) with ONNX Runtime's
// Node.js binding, and writes output_K.npy beside them.
//   node run_ort.js WORKDIR
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ortDir = path.join(__dirname, '../../../bench/peers/ort');
const ort = require(path.join(ortDir, 'node_modules/onnxruntime-node'));
const { readNpy, writeNpy } = require(path.join(ortDir, 'npy.js'));

async function runCase(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
    { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, logSeverityLevel: 3 });
  const feeds = {};
  meta.inputs.forEach((name, k) => {
    const a = readNpy(path.join(dir, `input_${k}.npy`));
    feeds[name] = new ort.Tensor(a.type, a.data, a.shape);
  });
  const out = await session.run(feeds);
  meta.outputs.forEach((name, k) => {
    const t = out[name];
    let data = t.data;
    let type = t.type;
    if (type === 'float16' && !(data instanceof Uint16Array)) data = new Uint16Array(data.buffer, data.byteOffset, data.length);
    if (type === 'bool') data = Uint8Array.from(data, v => (v ? 1 : 0));
    writeNpy(path.join(dir, `output_${k}.npy`), type, t.dims.map(Number), data);
  });
}

(async () => {
  const work = process.argv[2];
  let failed = 0;
  for (const name of fs.readdirSync(work).sort()) {
    const dir = path.join(work, name);
    if (!fs.existsSync(path.join(dir, 'meta.json'))) continue;
    try {
      await runCase(dir);
    } catch (e) {
      failed++;
      fs.writeFileSync(path.join(dir, 'error.txt'), String(e && e.message || e));
      console.error(`${name}: ${e && e.message || e}`);
    }
  }
  process.exit(0);
})();
