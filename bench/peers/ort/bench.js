// Times an ONNX model with ONNX Runtime (npm onnxruntime-node) on inputs
// DIR/input_<i>.npy: warm-up, then timed session.run calls; prints p50/p90/p99
// in milliseconds as JSON. The peer for `hone bench` (bench/compare.sh).
//
//   node bench.js MODEL.onnx --inputs DIR [--threads N] [--iters K] [--warmup W]
'use strict';
const { ort, openSession, readFeeds } = require('./session');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

function percentile(sorted, q) {
  const rank = Math.min(Math.max(Math.ceil(q * sorted.length), 1), sorted.length);
  return sorted[rank - 1];
}

(async () => {
  const model = process.argv[2];
  const inDir = arg('--inputs');
  const threads = Number(arg('--threads', '1'));
  const iters = Number(arg('--iters', '100'));
  const warmup = Number(arg('--warmup', '10'));
  if (!model || !inDir || !(iters >= 1)) {
    console.error('usage: node bench.js MODEL.onnx --inputs DIR [--threads N] [--iters K] [--warmup W]');
    process.exit(2);
  }
  const session = await openSession(model, threads);
  const feeds = readFeeds(session, inDir);
  for (let i = 0; i < warmup; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < iters; ++i) {
    const a = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  ms.sort((x, y) => x - y);
  console.log(JSON.stringify({
    peer: 'onnxruntime-node', version: ort.env.versions ? ort.env.versions.common : undefined,
    threads, iters, warmup,
    p50_ms: percentile(ms, 0.5), p90_ms: percentile(ms, 0.9), p99_ms: percentile(ms, 0.99),
  }));
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
