# Sourced by the device scripts (run.sh, probe.sh, profile.sh, rows.sh, tune.sh) on the GPU
# machine, from the repository root where `.gpu/` holds the bundle (../shared/gpu/bundle.sh) and
# the scripts: unpacks the bundle into /tmp/g (hone's binaries and the Debian libraries they
# link), and points hone at CUDA 13's libraries and at PyTorch's cuDNN. Defines
#   provenance [FILE]       the device and driver (also into FILE) and the bundle's commit
#   export_models NAME...   peer.py's models (random weights) as /tmp/w/NAME.onnx, once each
R=$PWD
mkdir -p /tmp/g /tmp/w && tar -xJf .gpu/bundle.tar.xz -C /tmp/g
C=/usr/local/cuda-13.0/targets/x86_64-linux/lib
D=$(python3 -c "import nvidia.cudnn;print(nvidia.cudnn.__path__[0])")/lib
export LD_LIBRARY_PATH=/tmp/g/lib:$C HONE_CUDNN_PATH=$D HONE_CACHE_DIR=/tmp/hc PYTHONUNBUFFERED=1

provenance() {
  if [ -n "${1:-}" ]; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$1"
  else
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  fi
  echo "commit $(cat "$R/.gpu/commit.txt")"
}

export_models() {
  (cd /tmp/w && python3 - "$R/.gpu" "$@" <<'PY' 2>&1 | grep -v Warn
import sys, os
sys.path.insert(0, sys.argv[1]); import peer
for name in sys.argv[2:]:
    if not os.path.exists(f"{name}.onnx"):
        m, shape, _ = peer.make(name); peer.export(m, shape, f"{name}.onnx")
PY
  )
}
