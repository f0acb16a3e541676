#!/usr/bin/env bash
# Here, before a GPU call of python_gpu.sh: adds what building hone's Python module on the GPU
# machine needs beside the bundle (../shared/gpu/bundle.sh) to OUT_DIR (.gpu): pyext.tar.xz with
# lib/libhone.a (the library the extension links statically, as here) and include/nlohmann
# (nlohmann-json's headers, which python/model.cpp includes; the GPU machine has no Debian
# packages). The extension itself is compiled there, for its Python 3.12 and its pybind11.
#   bench/cuda_h200/python_pack.sh OUT_DIR BUILD_DIR     e.g. .gpu build-py
set -euo pipefail
out=$1 build=$2
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/include" "$out"
cp "$build/libhone.a" "$stage/lib/"
cp -r /usr/include/nlohmann "$stage/include/"
tar -C "$stage" -cf - lib include | xz -T2 -6 > "$out/pyext.tar.xz"
du -h "$out/pyext.tar.xz"
