// The real-model corpus's inputs, expected outputs and comparison
// (tests/corpus/manifest.json; scripts/install-corpus.sh installs the models).
//
//   node corpus.js list                                  # model names, one a line
//   node corpus.js inputs NAME DIR                       # DIR/input_<i>.npy from the manifest
//   node corpus.js expect NAME MODEL.onnx IN_DIR OUT_DIR  # ORT at 'disabled' and 'all', spread.json
//   node corpus.js compare EXPECT_DIR GOT_DIR            # one JSON line; exit 1 when outside the bound
//   node corpus.js verdict EXPECT_DIR GOT_DIR            # compare, as one line a cell's reason can hold
//   node corpus.js fallback < INSPECT.json               # "N of M nodes fall back ... (ops)", or nothing
//   node corpus.js cells FILE [RUN.json] < CELLS.tsv     # feature-matrix cells (lines: name backend status reason test)
//   node corpus.js args NAME                             # hone's --shape/--fill/--range for NAME
//
// Inputs are deterministic: a mulberry32 stream seeded by the FNV-1a hash of
// the model's name, drawn in input order; 'range' [lo, hi) is uniform
// (integers: [lo, hi]); 'fill' is a constant such as a sample rate.
//
// The bound (why): ORT's two optimization levels compute the same function with
// different kernels (fusions, layouts, approximate activations); the relative
// L2 distance between their outputs is the model's own numeric spread, which
// ranges from 1e-7 on a small dense head to percents on a deep net whose
// outputs pass through thresholds or large sums. A candidate's output is
// compared with ORT 'disabled' (no rewrites, the plainest semantics) and
// passes when its relative L2 error is at most max(4 x spread, 1e-4): the
// factor allows a third, different but correct, implementation to land on
// the far side of the spread; the floor is f32 rounding over a long
// reduction (spread can be exactly 0 where both levels run the same kernels).
// Integer and bool outputs must be equal; NaN must match NaN. A manifest
// entry's 'floors' {OUTPUT: {floor, why}} raises the floor of an output that
// is discontinuous by construction (a local-maximum mask), with the reason.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const manifest = JSON.parse(fs.readFileSync(path.join(here, 'manifest.json'), 'utf8'));
const peer = path.join(here, '..', '..', 'bench', 'peers', 'ort');
const { readNpy, writeNpy } = require(path.join(peer, 'npy.js'));

const kFactor = 4;
const kFloor = 1e-4;

function model(name) {
  const m = manifest.models.find(x => x.name === name);
  if (!m) throw new Error(`no model '${name}' in tests/corpus/manifest.json`);
  return m;
}

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(text, 'utf8')) { h ^= c; h = Math.imul(h, 0x01000193) >>> 0; }
  return h;
}

function mulberry32(a) {
  return () => {
    a |= 0; a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const kArrays = { float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array };

// A synthetic page for image models, so that detectors see something to
// detect (on uniform noise an OCR detector's or a line detector's output is
// all but zero, and a relative error of values near zero measures nothing):
// background at the range's top, rows of dark "glyphs" (short bars of random
// width) at its bottom, and 5% noise; 'lines' draws ten long strokes instead.
// layout 'NCHW' or 'NHWC'.
function page(spec, rand) {
  const [lo, hi] = spec.range;
  const nhwc = spec.layout === 'NHWC';
  const [n, c, h, w] = nhwc ? [spec.shape[0], spec.shape[3], spec.shape[1], spec.shape[2]] : spec.shape;
  const ink = new Uint8Array(h * w);
  if (spec.pattern === 'lines') {
    // Long straight strokes across the image: what a line detector looks for.
    for (let k = 0; k < 10; ++k) {
      const x0 = rand() * w, y0 = rand() * h, x1 = rand() * w, y1 = rand() * h;
      const steps = Math.ceil(Math.hypot(x1 - x0, y1 - y0)) * 2;
      for (let t = 0; t <= steps; ++t) {
        const cx = Math.round(x0 + (x1 - x0) * t / steps), cy = Math.round(y0 + (y1 - y0) * t / steps);
        for (let dy = -1; dy <= 1; ++dy)
          for (let dx = -1; dx <= 1; ++dx) {
            const yy = cy + dy, xx = cx + dx;
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) ink[yy * w + xx] = 1;
          }
      }
    }
  }
  for (let y = 2 + Math.floor(rand() * 6); spec.pattern === 'page' && y < h - 4;) {
    const rowH = 5 + Math.floor(rand() * 8);
    for (let x = 2 + Math.floor(rand() * 8); x < w - 2;) {
      const glyph = 2 + Math.floor(rand() * 7);
      for (let yy = y; yy < Math.min(y + rowH, h); ++yy)
        for (let xx = x; xx < Math.min(x + glyph, w); ++xx) ink[yy * w + xx] = 1;
      x += glyph + 2 + Math.floor(rand() * 4) + (rand() < 0.15 ? 10 : 0);
    }
    y += rowH + 4 + Math.floor(rand() * 10);
  }
  const data = new Float32Array(n * c * h * w);
  for (let b = 0; b < n; ++b)
    for (let ch = 0; ch < c; ++ch)
      for (let y = 0; y < h; ++y)
        for (let x = 0; x < w; ++x) {
          // An alpha channel (the 4th of an RGBA input) is opaque everywhere.
          const alpha = c === 4 && ch === 3;
          const base = ink[y * w + x] && !alpha ? lo + 0.1 * (hi - lo) : hi - 0.1 * (hi - lo);
          const v = base + (rand() - 0.5) * 0.1 * (hi - lo);
          data[nhwc ? ((b * h + y) * w + x) * c + ch : ((b * c + ch) * h + y) * w + x] = v;
        }
  return data;
}

function makeInputs(name, dir) {
  const m = model(name);
  const rand = mulberry32(fnv1a(m.name));
  fs.mkdirSync(dir, { recursive: true });
  m.inputs.forEach((spec, i) => {
    if (spec.pattern === 'page' || spec.pattern === 'lines') {
      writeNpy(path.join(dir, `input_${i}.npy`), 'float32', spec.shape, page(spec, rand));
      return;
    }
    const Ctor = kArrays[spec.dtype];
    if (!Ctor) throw new Error(`${name}: input '${spec.name}': dtype ${spec.dtype} is not generated`);
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Ctor(n);
    const integer = spec.dtype.startsWith('int');
    for (let k = 0; k < n; ++k) {
      let v;
      if (spec.fill !== undefined) v = spec.fill;
      else {
        const [lo, hi] = spec.range;
        v = integer ? lo + Math.floor(rand() * (hi - lo + 1)) : lo + rand() * (hi - lo);
      }
      data[k] = spec.dtype === 'int64' ? BigInt(v) : v;
    }
    writeNpy(path.join(dir, `input_${i}.npy`), spec.dtype, spec.shape, data);
  });
}

function relL2(a, b) {
  let num = 0, den = 0;
  for (let k = 0; k < b.length; ++k) {
    const x = Number(a[k]), y = Number(b[k]);
    num += (x - y) * (x - y);
    den += y * y;
  }
  if (num === 0) return 0;
  return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
}

function readOutputs(dir) {
  const outs = [];
  for (let i = 0; fs.existsSync(path.join(dir, `output_${i}.npy`)); ++i)
    outs.push(readNpy(path.join(dir, `output_${i}.npy`)));
  return outs;
}

async function expect(name, modelPath, inDir, outDir) {
  const ort = require(path.join(peer, 'node_modules', 'onnxruntime-node'));
  const m = model(name);
  const spread = [];
  const results = {};
  for (const level of ['disabled', 'all']) {
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3,
    });
    const names = m.inputs.map(x => x.name);
    if (session.inputNames.join('\n') !== names.join('\n'))
      throw new Error(`${name}: the manifest's inputs [${names}] are not the model's [${session.inputNames}]`);
    const feeds = {};
    names.forEach((n, i) => {
      const a = readNpy(path.join(inDir, `input_${i}.npy`));
      feeds[n] = new ort.Tensor(a.type, a.data, a.shape);
    });
    const r = await session.run(feeds);
    const dir = path.join(outDir, `ort_${level}`);
    fs.mkdirSync(dir, { recursive: true });
    results[level] = session.outputNames.map((n, i) => {
      const t = r[n];
      writeNpy(path.join(dir, `output_${i}.npy`), t.type, t.dims, t.data);
      return { name: n, data: t.data, shape: t.dims, type: t.type };
    });
  }
  results.disabled.forEach((o, i) => {
    spread.push({ name: o.name, shape: o.shape, rel_l2: relL2(results.all[i].data, o.data) });
  });
  fs.writeFileSync(path.join(outDir, 'spread.json'), JSON.stringify({ model: name, outputs: spread }, null, 1) + '\n');
}

// Per output the error, ORT's spread and the bound; pass is false when any
// output is outside its bound, missing or of the wrong shape.
// A model's 'floors' raise kFloor for named outputs whose values jump where a
// comparison of two nearly equal floats flips (each with its reason).
function comparison(expectDir, gotDir) {
  const spread = JSON.parse(fs.readFileSync(path.join(expectDir, 'spread.json'), 'utf8'));
  const floors = model(spread.model).floors || {};
  const want = readOutputs(path.join(expectDir, 'ort_disabled'));
  const got = readOutputs(gotDir);
  const rows = [];
  let ok = got.length === want.length;
  want.forEach((w, i) => {
    const row = { output: spread.outputs[i].name, spread: spread.outputs[i].rel_l2 };
    const floor = floors[row.output] ? floors[row.output].floor : kFloor;
    row.bound = Math.max(kFactor * row.spread, floor);
    const g = got[i];
    if (!g) { row.problem = 'missing'; ok = false; rows.push(row); return; }
    if (g.shape.join(',') !== w.shape.join(',')) {
      row.problem = `shape [${g.shape}] vs ORT [${w.shape}]`; ok = false; rows.push(row); return;
    }
    const floatType = w.type.startsWith('float');
    let nanMismatch = 0;
    for (let k = 0; k < w.data.length; ++k) {
      const a = Number(g.data[k]), b = Number(w.data[k]);
      if (Number.isNaN(a) !== Number.isNaN(b)) ++nanMismatch;
    }
    row.rel_l2 = relL2(g.data, w.data);
    const pass = nanMismatch === 0 && (floatType ? row.rel_l2 <= row.bound : row.rel_l2 === 0);
    if (nanMismatch) row.problem = `${nanMismatch} NaN where ORT has none (or the reverse)`;
    ok = ok && pass;
    rows.push(row);
  });
  return { pass: ok, outputs: rows };
}

// comparison() as one JSON line; exit 1 when it does not pass.
function compare(expectDir, gotDir) {
  const r = comparison(expectDir, gotDir);
  console.log(JSON.stringify(r));
  return r.pass;
}

// compare() as the one line a feature-matrix cell's reason holds: per output
// its relative L2 error, bound and ORT spread, or its problem. Exit 1 as compare.
function verdict(expectDir, gotDir) {
  const r = comparison(expectDir, gotDir);
  console.log(r.outputs.map(o => `${o.output.slice(0, 24)}: ` + (o.problem ? o.problem :
    `rel L2 ${o.rel_l2.toExponential(2)} (bound ${o.bound.toExponential(2)}, ORT spread ${o.spread.toExponential(2)})`)).join('; '));
  return r.pass;
}

// The nodes a backend leaves to the reference, from `hone inspect --json` on
// stdin: "N of M nodes fall back to the reference (ops)", or nothing (none,
// or no partition in the text: an inspect that failed says nothing here).
function fallback(text) {
  try {
    const p = JSON.parse(text).partition;
    if (!p || !p.fallbacks || !p.fallbacks.length) return;
    const ops = [...new Set(p.fallbacks.map(f => f.op))].join(', ');
    console.log(`${p.fallbacks.length} of ${p.planned_nodes} nodes fall back to the reference (${ops})`);
  } catch (e) { /* not JSON: no note */ }
}

// Feature-matrix cells models.corpus-NAME/BACKEND from tab-separated lines
// (name, backend, status, reason, test) into FILE as hone-matrix reads it. With
// RUN.json, its object is the file's "run" (provenance of a run made elsewhere,
// for `hone-matrix update --backend`); without, the page keeps its own run.
function cells(file, runFile, tsv) {
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const out = { cells: {} };
  if (runFile) out.run = JSON.parse(fs.readFileSync(runFile, 'utf8'));
  tsv.split('\n').filter(l => l.trim()).forEach((l, i) => {
    const [name, backend, status, reason, test] = l.split('\t');
    if (!name || !backend || !['passed', 'failed', 'skipped'].includes(status) || !test)
      throw new Error(`cells: line ${i + 1} is not 'name<TAB>backend<TAB>passed|failed|skipped<TAB>reason<TAB>test': ${l}`);
    model(name);
    out.cells[`models.corpus-${name}/${backend}`] = { status, reason, tests: [test], updated: out.run ? out.run.time : when };
  });
  fs.writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
}

function stdin() { return fs.readFileSync(0, 'utf8'); }

// hone's input options that reproduce the manifest's inputs' shapes and
// values (for `hone tune`/`hone bench` random samples): --shape, --fill, --range.
function honeArgs(name) {
  const m = model(name);
  const args = [];
  for (const x of m.inputs) {
    args.push('--shape', `${x.name}=${x.shape.length ? x.shape.join('x') : 'scalar'}`);
    if (x.fill !== undefined) args.push('--fill', `${x.name}=${x.fill}`);
    else args.push('--range', `${x.name}=${x.range[0]}:${x.range[1]}`);
  }
  console.log(args.map(a => `'${a.replace(/'/g, "'\\''")}'`).join(' '));
}

(async () => {
  const [cmd, ...a] = process.argv.slice(2);
  if (cmd === 'list') manifest.models.forEach(m => console.log(m.name));
  else if (cmd === 'inputs' && a.length === 2) makeInputs(a[0], a[1]);
  else if (cmd === 'expect' && a.length === 4) await expect(a[0], a[1], a[2], a[3]);
  else if (cmd === 'compare' && a.length === 2) process.exit(compare(a[0], a[1]) ? 0 : 1);
  else if (cmd === 'verdict' && a.length === 2) process.exit(verdict(a[0], a[1]) ? 0 : 1);
  else if (cmd === 'fallback' && a.length === 0) fallback(stdin());
  else if (cmd === 'cells' && (a.length === 1 || a.length === 2)) cells(a[0], a[1], stdin());
  else if (cmd === 'args' && a.length === 1) honeArgs(a[0]);
  else {
    console.error('usage: node corpus.js list | inputs NAME DIR | expect NAME MODEL IN OUT | compare EXPECT GOT |' +
                  ' verdict EXPECT GOT | fallback < INSPECT.json | cells FILE [RUN.json] < CELLS.tsv | args NAME');
    process.exit(2);
  }
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
