#!/usr/bin/env bash
# Installs the Debian packages hone builds and tests with. Idempotent; needs
# root (or sudo). Every package here has a line in the README saying why.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libdnnl-dev ocl-icd-opencl-dev opencl-headers libopenblas-dev
  nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev
  libsqlite3-dev libzip-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-pybind11 python3-numpy python3-pytest
  nodejs npm
  chromium
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  # NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
