#!/usr/bin/env bash
# Installs the Debian packages hone builds with (scripts/setup.sh), and with
# --tests also those only the tests run with (scripts/test.sh): the ONNX test
# data, Node.js and npm for the peers, Chromium, pytest. Keeping those out of
# setup makes the first README command quicker on a fresh machine.
# Idempotent; needs root (or sudo). Every package here has a line in the
# README saying why. Another apt or dpkg holding the dpkg lock (a fresh
# machine's unattended-upgrades) is waited for, up to HONE_APT_LOCK_TIMEOUT
# seconds (600), instead of failing at once.
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
  libonnx-testdata python3-pytest python3-venv python3-pip clang-format-14
  nodejs npm
  chromium
  python3-torch python3-torchvision python3-onnx
)
case "${1:-}" in
  --tests) PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  "") ;;
  *) echo "install-deps: unknown argument '$1' (expected --tests or nothing)" >&2; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
lock_timeout="${HONE_APT_LOCK_TIMEOUT:-600}"

# "PID NAME" of each running apt, dpkg or unattended-upgrades (from /proc, so
# it needs neither root nor psmisc): what a wait for the lock waits on.
package_managers() {
  local p comm
  for p in /proc/[0-9]*; do
    comm=$(cat "$p/comm" 2>/dev/null) || continue
    case "$comm" in
      apt | apt-get | aptitude | dpkg | apt.systemd.dai* | unattended-upgr* | packagekitd) echo "${p#/proc/} $comm" ;;
    esac
  done
}
# apt-get as root, non-interactive (through sudo too, which drops the
# environment), waiting for the dpkg and apt lists locks rather than failing.
apt_get() {
  local busy
  busy=$(package_managers | paste -sd, -)
  if [ -n "$busy" ]; then
    echo "install-deps: another package manager is running ($busy); apt-get waits up to" \
      "${lock_timeout} s for the dpkg lock"
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$lock_timeout" "$@"
}

missing=()
for p in "${PACKAGES[@]}"; do
  # NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt_get update -qq
  apt_get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
