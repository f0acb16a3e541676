#!/usr/bin/env bash
# `mpirun -np 2 hone ...` end to end: two ranks on this machine agree on one
# decision and byte-identical packages, a failure on one rank ends both with
# that rank's error, a stuck rank ends the job at --dist-timeout instead of
# hanging, and the work-spreading modes split their work.
#
#   mpirun_test.sh CASE HONE_BIN WORK_DIR
#
# CASE: alone (no mpirun) | corpus | rank-fails | candidate-fails | stuck-rank | distribute-candidates | tune-many
# Each rank's output goes to WORK/CASE/log.<rank> and its exit code to
# WORK/CASE/rc.<rank> (the wrapper itself exits 0, so mpirun never kills a
# rank that is still printing its error). Exit 77 (ctest: skipped) when hone
# was built without MPI, mpirun is missing, or (corpus) the corpus is not installed.
set -uo pipefail
case_name=$1 hone=$2 work=$3
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [ "$case_name" = alone ]; then
  # No launcher, no MPI: tune-many tunes every model here, one report; two
  # models of one name are refused before anything is tuned.
  w="$work/alone" && rm -rf "$w" && mkdir -p "$w"
  export HONE_CACHE_DIR="$w/cache"
  "$hone" --threads 1 tune-many "$root/models/mlp.onnx" "$root/models/cnn.onnx" -o "$w/out" \
    --candidate-budget 0.3 --backends onednn > "$w/log" 2>&1 || { cat "$w/log"; echo "FAIL: tune-many"; exit 1; }
  n=$(python3 -c 'import json, sys; print(sum(1 for m in json.load(open(sys.argv[1]))["models"] if not m["error"] and m["rank"] == 0))' "$w/out/tune-many.json")
  [ "$n" = 2 ] || { echo "FAIL: the report lists $n tuned models, expected 2"; exit 1; }
  [ -f "$w/out/mlp.hone" ] && [ -f "$w/out/cnn.hone" ] || { echo "FAIL: packages missing"; exit 1; }
  mkdir -p "$w/b" && cp "$root/models/mlp.onnx" "$w/b/mlp.onnx"
  "$hone" tune-many "$root/models/mlp.onnx" "$w/b/mlp.onnx" -o "$w/dup" > "$w/dup.log" 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "would both be saved as mlp.hone" "$w/dup.log" || { cat "$w/dup.log"; echo "FAIL: duplicate names: exit $rc"; exit 1; }
  [ ! -e "$w/dup" ] || { echo "FAIL: the output folder was created"; exit 1; }
  echo "ok: 2 models tuned alone, one report; duplicate names refused"
  exit 0
fi
if ! "$hone" --version | grep -q 'distributed tuning (mpirun): [^u]'; then
  echo "SKIP: $("$hone" --version | tail -n1)"
  exit 77
fi
if ! command -v mpirun >/dev/null; then
  echo "SKIP: mpirun is not installed (openmpi-bin)"
  exit 77
fi
# CI runs as root; Open MPI refuses that unless told; 2 ranks may exceed the cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# In containers without ptrace rights the shared-memory transport's
# single-copy mode (CMA) fails on messages past the eager limit (reports).
export OMPI_MCA_btl_vader_single_copy_mechanism=none
w="$work/$case_name"
rm -rf "$w" && mkdir -p "$w"
export HONE_CACHE_DIR="$w/cache"
fail() { echo "FAIL $case_name: $*"; for f in "$w"/log.*; do echo "--- $f"; tail -n 30 "$f"; done; exit 1; }

# $rank CMD...: runs one rank's command, logging per rank.
rank="$w/rank.sh"
printf '#!/bin/sh\nr=${OMPI_COMM_WORLD_RANK:-0}\n"$@" >"%s/log.$r" 2>&1\necho $? >"%s/rc.$r"\n' "$w" "$w" > "$rank"
chmod +x "$rank"
rc_of() { cat "$w/rc.$1" 2>/dev/null || echo missing; }
run_mpi() {  # mpirun ARGS... with a hard limit; prints the seconds it took
  local t0=$(date +%s)
  timeout 600 mpirun --oversubscribe "$@" > "$w/mpirun.log" 2>&1
  local rc=$?
  [ $rc -eq 124 ] && fail "mpirun did not finish within 600 s"
  echo $(( $(date +%s) - t0 ))
}
# The "decision D, package sha256 P" line each rank prints after agreeing.
agreed() { grep -o 'decision [0-9a-f]*, package sha256 [0-9a-f]*' "$w/log.$1"; }
check_agreed() {  # PACKAGE: both ranks succeeded with the same decision and package bytes
  for r in 0 1; do [ "$(rc_of $r)" = 0 ] || fail "rank $r exited $(rc_of $r)"; done
  local a0 a1
  a0=$(agreed 0) a1=$(agreed 1)
  [ -n "$a0" ] || fail "rank 0 printed no decision line"
  [ "$a0" = "$a1" ] || fail "ranks differ: '$a0' vs '$a1'"
  local sum
  sum=$(sha256sum "$1" | cut -d' ' -f1)
  [ "${a0##* }" = "$sum" ] || fail "the package's sha256 $sum is not the agreed ${a0##* }"
  [ -f "$w/cache/rank0/tuning.db" ] && [ -f "$w/cache/rank1/tuning.db" ] || fail "no per-rank tuning caches"
  echo "ok: both ranks: $a0"
}
# Both ranks ended with exit 1 and an error line matching PATTERN.
check_both_failed() {
  for r in 0 1; do
    [ "$(rc_of $r)" = 1 ] || fail "rank $r exited $(rc_of $r), expected 1"
    grep -q "^error: .*$1" "$w/log.$r" || fail "rank $r's error does not match '$1'"
    echo "ok: rank $r: $(grep -m1 '^error:' "$w/log.$r")"
  done
}

case "$case_name" in
  corpus)
    # Two real models with their manifest's input shapes and ranges.
    command -v node >/dev/null || { echo "SKIP: node is not installed"; exit 77; }
    for name in oww_alexa ppocr_cls_v2; do
      model="${HONE_CORPUS_DIR:-$root/corpus}/models/$name.onnx"
      [ -f "$model" ] || { echo "SKIP: $model is not installed (scripts/install-corpus.sh)"; exit 77; }
      eval "args=($(node "$root/tests/corpus/corpus.js" args "$name"))" || fail "no manifest inputs for $name"
      rm -f "$w"/rc.* "$w"/log.*
      secs=$(run_mpi -np 2 "$rank" "$hone" --threads 1 tune "$model" -o "$w/$name.hone" --no-html \
        --batch-sizes 1 --candidate-budget 0.5 "${args[@]}")
      echo "$name: ${secs} s"
      check_agreed "$w/$name.hone"
      "$hone" describe "$w/$name.hone" > /dev/null || fail "hone describe rejects $name.hone"
    done
    ;;
  rank-fails)
    # Rank 1 is given a model that does not exist: rank 0, already tuning
    # towards its first agreement, fails with rank 1's error.
    secs=$(run_mpi -np 1 "$rank" "$hone" --threads 1 tune "$root/models/mlp.onnx" -o "$w/m.hone" --no-html \
      : -np 1 "$rank" "$hone" --threads 1 tune "$w/missing.onnx" -o "$w/m.hone" --no-html)
    check_both_failed "rank 1: file '.*missing.onnx' not found"
    [ ! -e "$w/m.hone" ] || fail "a package was written"
    [ "$secs" -lt 60 ] || fail "took $secs s"
    ;;
  candidate-fails)
    # Rank 1 has no working compiler: aot fails there, so it fails everywhere.
    common=(--threads 1 tune "$root/models/mlp.onnx" -o "$w/m.hone" --no-html --no-cache
            --strategy one-backend --backends aot)
    run_mpi -np 1 "$rank" "$hone" "${common[@]}" \
      : -np 1 -x HONE_CXX=/nonexistent/c++ "$rank" "$hone" "${common[@]}" > /dev/null
    check_both_failed "rank 1: backend 'aot' cannot run on this machine: no C++ compiler"
    ;;
  stuck-rank)
    # Rank 1's compiler takes 30 s; rank 0 waits at most 3 s for it at the
    # next agreement, then fails, and mpirun ends the job.
    printf '#!/bin/sh\nsleep 30\nexec c++ "$@"\n' > "$w/slow-c++" && chmod +x "$w/slow-c++"
    common=(--threads 1 tune "$root/models/mlp.onnx" -o "$w/m.hone" --no-html --no-cache
            --backends aot --dist-timeout 3)
    secs=$(run_mpi -np 1 "$rank" "$hone" "${common[@]}" \
      : -np 1 -x HONE_CXX="$w/slow-c++" "$rank" "$hone" "${common[@]}")
    [ "$(rc_of 0)" = 1 ] || fail "rank 0 exited $(rc_of 0)"
    grep -q "^error: .*not every rank reached this step within 3 s" "$w/log.0" || fail "no timeout error"
    [ "$(rc_of 1)" != 0 ] || fail "rank 1 succeeded"
    [ "$secs" -lt 25 ] || fail "took $secs s: the job waited for the stuck rank"
    echo "ok: ended after $secs s: $(grep -m1 '^error:' "$w/log.0")"
    ;;
  distribute-candidates)
    # onednn is rank 0's share, blas rank 1's: each measures only its own.
    # A group takes onednn only with its timed_choices given ('-': none; cnn
    # has no choice onednn times, so the ranks cannot differ).
    secs=$(run_mpi -np 2 "$rank" "$hone" --threads 1 tune "$root/models/cnn.onnx" -o "$w/cnn.hone" --no-html \
      --backends onednn,blas --candidate-budget 0.5 --distribute candidates --config onednn.timed_choices=-)
    check_agreed "$w/cnn.hone"
    grep -q 'onednn: profile' "$w/log.0" || fail "rank 0 did not measure onednn"
    grep -q 'blas: profile' "$w/log.1" || fail "rank 1 did not measure blas"
    ! grep -q 'blas: profile' "$w/log.0" || fail "rank 0 measured blas too"
    ! grep -q 'onednn: profile' "$w/log.1" || fail "rank 1 measured onednn too"
    echo "ok: each rank measured its share"
    ;;
  tune-many)
    # Three models over two ranks: 0 and 2 on rank 0, 1 on rank 1; one report.
    secs=$(run_mpi -np 2 "$rank" "$hone" --threads 1 tune-many "$root/models/mlp.onnx" "$root/models/cnn.onnx" \
      "$root/models/lstm.onnx" -o "$w/out" --candidate-budget 0.3 --backends onednn,blas --distribute models)
    for r in 0 1; do [ "$(rc_of $r)" = 0 ] || fail "rank $r exited $(rc_of $r)"; done
    report="$w/out/tune-many.json"
    [ -f "$report" ] || fail "no combined report"
    got=$(python3 -c 'import json, os, sys
ms = json.load(open(sys.argv[1]))["models"]
print(" ".join(os.path.basename(m["model"]) + "@" + str(m["rank"]) for m in ms if not m["error"]))' "$report")
    [ "$got" = "mlp.onnx@0 cnn.onnx@1 lstm.onnx@0" ] || fail "report lists '$got'"
    for m in mlp cnn lstm; do
      "$hone" describe "$w/out/$m.hone" > /dev/null || fail "hone describe rejects $m.hone"
    done
    grep -q 'tune-many: .*cnn.onnx' "$w/log.0" && fail "rank 0 tuned cnn"
    echo "ok: $got, one report, ${secs} s"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
