#!/usr/bin/env bash
# One device call: hone's Python module built on the GPU machine against the bundled libhone,
# then CUDA tensors through it (tests/python/test_cuda_device.py: no host copy, output equal to
# PyTorch's, out=, the caller's stream, and resnet50 at batch 1 against `hone bench --io device`).
#   bash bench/cuda_h200/python_gpu.sh
# From the repository root, with .gpu/ holding the bundle (../shared/gpu/bundle.sh with build/hone
# at least), commit.txt, and pyext.tar.xz (bench/cuda_h200/python_pack.sh .gpu BUILD_DIR, from
# the same build as the bundle). Uses PyTorch's interpreter (/opt/torch/.venv, Python 3.12; its
# pybind11 and Python headers) and the system C++ compiler. Writes $OUT/python_gpu.txt, and
# with UNIT_FILTER set (e.g. 'CudaDeviceIo*') runs those of the bundled hone_unit_tests first
# ($OUT/tests.txt). Then `hone bench --io host` and `--io device` on the resnet50 package.
set -u
start=$(date +%s)
. "$(dirname "$0")/device_env.sh"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log=$OUT/python_gpu.txt
exec > >(tee "$log") 2>&1
provenance
if [ -n "${UNIT_FILTER:-}" ]; then  # the cuda unit tests first, when the bundle has them
  timeout 200 /tmp/g/bin/hone_unit_tests --gtest_filter="$UNIT_FILTER" > $OUT/tests.txt 2>&1
  echo "unit rc $?"
  grep -E "^\[  (PASSED|FAILED) |Failure|^\[  FAILED|SKIPPED" -A3 $OUT/tests.txt | head -40
fi
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
CXX=${CXX:-$(command -v g++ || command -v c++ || command -v clang++)}
echo "python $($PY -c 'import sys;print(sys.version.split()[0])'), compiler $($CXX --version | head -1)"
mkdir -p /tmp/pyext && tar -xJf .gpu/pyext.tar.xz -C /tmp/pyext
P=/tmp/pyhone/hone
rm -rf /tmp/pyhone && mkdir -p $P/bin /tmp/pyobj
cp python/hone/*.py python/hone/*.pyi python/hone/py.typed $P/
ln -sf /tmp/g/bin/hone $P/bin/hone
INC=$($PY -m pybind11 --includes) || { echo "no pybind11 for $PY"; exit 1; }
EXT=$($PY -c "import sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'))")
VERSION=$(sed -n 's/^project(hone VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
read -ra INCS <<< "$INC"
FLAGS=(-O2 -std=c++23 -fPIC -fvisibility=hidden "${INCS[@]}" -Iinclude -Ipython -I/tmp/pyext/include
       "-DHONE_VERSION_STRING=\"$VERSION\"")
t0=$(date +%s)
pids=()
for f in python/*.cpp; do
  "$CXX" "${FLAGS[@]}" -c "$f" -o "/tmp/pyobj/$(basename "$f" .cpp).o" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "compile failed"; exit 1; }; done
# python/exports.map: the module shows PyInit__hone only (as python/CMakeLists.txt links it).
$CXX -shared -o $P/_hone$EXT /tmp/pyobj/*.o /tmp/pyext/lib/libhone.a \
  -Wl,--version-script=python/exports.map -Wl,--exclude-libs,ALL \
  -Wl,--start-group $(ls /tmp/g/lib/*.so*) -Wl,--end-group -lgomp -ldl -lpthread \
  || { echo "link failed"; exit 1; }
echo "extension built in $(( $(date +%s) - t0 )) s: $P/_hone$EXT"
# The first import on this fresh machine, and IMPORTS more, under glibc's heap checks
# (MALLOC_CHECK_) and Python's fault handler: while _hone.so exported its own libstdc++, torch
# (which `import hone` imports) freed a locale through it and every such import aborted with
# "free(): invalid pointer" (python/exports.map); without the checks it did so only at times.
first() { cd /tmp && PYTHONPATH=/tmp/pyhone MALLOC_CHECK_=3 $PY -X faulthandler -c \
  "import hone; print('hone', hone.__version__, [b['name'] for b in hone.backends() if b['available']])"; }
first; echo "first import rc $?"
bad=0; for i in $(seq 1 ${IMPORTS:-2}); do first > /tmp/import.$i.log 2>&1 || { bad=$((bad+1)); cat /tmp/import.$i.log; }; done
echo "imports after the first: ${IMPORTS:-2}, failed $bad"
mkdir -p /tmp/pywork
export PYTHONPATH=/tmp/pyhone HONE_BIN=/tmp/g/bin/hone HONE_GPU_RESNET50=1 HONE_GPU_WORK=/tmp/pywork
if $PY -c "import pytest" 2>/dev/null; then
  timeout ${PY_TIMEOUT:-400} $PY -m pytest -q -s -p no:cacheprovider "$R/tests/python/test_cuda_device.py"
else
  timeout ${PY_TIMEOUT:-400} $PY "$R/tests/python/test_cuda_device.py"
fi
echo "pytest rc $?"
if [ -f /tmp/pywork/resnet50.hone ]; then  # the CLI's own two modes on the package the test made
  for io in host device; do /tmp/g/bin/hone bench /tmp/pywork/resnet50.hone --io $io --batch 1 --iters 300; done
fi
echo "total $(( $(date +%s) - start )) s"
