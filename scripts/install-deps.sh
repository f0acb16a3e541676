#!/usr/bin/env bash
# Installs the Debian packages hone builds with (scripts/setup.sh), and with
# --tests also those only the tests run with (scripts/test.sh): the ONNX test
# data, Node.js and npm for the peers, Chromium, pytest. Keeping those out of
# setup makes the first README command quicker on a fresh machine.
# Idempotent; needs root (or sudo). Every package here has a line in the
# README saying why.
#
#   scripts/install-deps.sh            # build
#   scripts/install-deps.sh --tests    # build and tests
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev ocl-icd-opencl-dev opencl-headers libopenblas-dev
  nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev
  libsqlite3-dev libzip-dev libssl-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-pybind11 python3-numpy
)
TEST_PACKAGES=(
  libonnx-testdata python3-pytest
  nodejs npm
  chromium
)
case "${1:-}" in
  --tests) PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  "") ;;
  *) echo "install-deps: unknown argument '$1' (expected --tests or nothing)" >&2; exit 2 ;;
esac

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
