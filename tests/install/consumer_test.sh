#!/usr/bin/env bash
# Installs hone from BUILD into a fresh PREFIX (inside the build tree), builds
# examples/consumer and the C API test against PREFIX alone (CMake package,
# then pkg-config's hone.pc) and runs them on MODEL.
#
#   consumer_test.sh BUILD WORK CONSUMER_SRC CAPI_TEST_C MODEL CC CXX
set -euo pipefail
build=$1 work=$2 consumer=$3 capi=$4 model=$5 cc=$6 cxx=$7
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
export HONE_CACHE_DIR=$work/cache

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/hone lib/libhone.a include/hone/hone.h include/hone/tune.h \
         lib/cmake/hone/hone-config.cmake lib/cmake/hone/hone-config-version.cmake \
         lib/cmake/hone/hone-targets.cmake lib/pkgconfig/hone.pc; do
  [ -e "$prefix/$f" ] || { echo "install: $prefix/$f missing" >&2; exit 1; }
done
"$prefix/bin/hone" --version

# The consumer sees hone only through the prefix: no source or build tree paths.
cmake -S "$consumer" -B "$work/consumer-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DHONE_CAPI_TEST_SOURCE="$capi" >"$work/configure.log"
if grep -q -e "-I$build" -e "-I$(dirname "$consumer")/../include" "$work/consumer-build/build.ninja"; then
  echo "consumer: compiles against hone's source or build tree" >&2
  exit 1
fi
cmake --build "$work/consumer-build" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
"$work/consumer-build/consumer" "$model" "$work/consumer.hone"
mkdir -p "$work/capi-cmake"
"$work/consumer-build/capi_test" "$model" "$work/capi-cmake"

# pkg-config: compile as C with hone.pc's flags, link statically with the C++ driver.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
"$cc" -std=c99 $(pkg-config --cflags hone) -c "$capi" -o "$work/capi_test.o"
"$cxx" "$work/capi_test.o" -o "$work/capi_test_pc" $(pkg-config --static --libs hone)
mkdir -p "$work/capi-pc"
"$work/capi_test_pc" "$model" "$work/capi-pc"
echo "install_consumer: the consumer and the C test built against $prefix and ran"
