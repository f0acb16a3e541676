// Shared by run.js and bench.js: an ORT session configured as hone's peer
// (graph optimization 'all', intra-op threads as given, one inter-op thread),
// and its feeds read from DIR/input_<i>.npy in input order.
'use strict';
const path = require('node:path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./npy');

async function openSession(model, threads) {
  return ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
}

function readFeeds(session, dir) {
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const a = readNpy(path.join(dir, `input_${i}.npy`));
    feeds[name] = new ort.Tensor(a.type, a.data, a.shape);
  });
  return feeds;
}

module.exports = { ort, openSession, readFeeds };
