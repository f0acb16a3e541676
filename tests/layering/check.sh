#!/usr/bin/env bash
# The build holds hone's layers: compiles one source with a layer's include
# folder (build/layers/<layer>, what that layer's own sources get) and checks
# the outcome. Expect "ok" (it compiles) or "missing:HEADER" (the compiler
# stops because HEADER is not visible from that layer).
#
#   check.sh CXX LAYER_ROOT PUBLIC_INCLUDE GENERATED_INCLUDE SOURCE EXPECT
#
# LAYER_ROOT may list several folders separated by ';' (a target's whole
# INCLUDE_DIRECTORIES, as for the CLI).
set -uo pipefail
cxx=$1 root=$2 inc=$3 gen=$4 src=$5 expect=$6
flags=()
IFS=';' read -r -a roots <<<"$root"
for r in "${roots[@]}"; do
  [ -d "$r" ] || { echo "layering: no include folder $r"; exit 1; }
  flags+=("-I$r")
done
out=$("$cxx" -std=c++23 -fsyntax-only -DSPDLOG_FMT_EXTERNAL "${flags[@]}" -I"$inc" -I"$gen" "$src" 2>&1)
rc=$?
case "$expect" in
  ok)
    if [ $rc -ne 0 ]; then echo "layering: $src should compile with $root:"; echo "$out"; exit 1; fi
    echo "layering: $src compiles with $(basename "$root")'s include folder, as it should" ;;
  missing:*)
    header=${expect#missing:}
    if [ $rc -eq 0 ]; then echo "layering: $src compiled with $root, but must not"; exit 1; fi
    if ! grep -q "$header: No such file or directory" <<<"$out"; then
      echo "layering: $src failed for another reason than $header being invisible:"; echo "$out"; exit 1
    fi
    echo "layering: $src does not compile with $(basename "$root")'s include folder: $header is not visible" ;;
  *) echo "layering: unknown expectation $expect"; exit 2 ;;
esac
