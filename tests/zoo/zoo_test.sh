#!/usr/bin/env bash
# One zoo model (tests/zoo/zoo.py): export it from PyTorch (cached while the
# zoo's scripts and torch are unchanged), check the export's SHA-256 against
# manifest.json, then at each point (batch, sequence length) run it with
# `hone run` on every CPU backend and compare each output with PyTorch's own
# (the bound widens with ONNX Runtime's distance from PyTorch where the ORT
# peer is installed: zoo.py has the rule). Fallbacks (nodes a backend leaves
# to the reference) are counted with `hone inspect --backend B --json`, and
# blocks whose build the backend refused at run time (they run whole on the
# reference: the partition cannot show them) from the run's debug log; both
# are reported, not failed on.
#
#   zoo_test.sh HONE_BIN NAME WORK_DIR
#
# WORK_DIR/EXPORTER/NAME holds the export; WORK_DIR/results/EXPORTER/NAME.tsv
# one line per point and backend: model, exporter, point, backend, status,
# seconds, fallback nodes, detail (`zoo.py summary` tabulates them).
#
# Environment: HONE_ZOO_EXPORTER (torchscript; dynamo needs torch >= 2.5),
# HONE_ZOO_BATCHES (1; e.g. 1,32), HONE_ZOO_BACKENDS (reference blas onednn aot),
# HONE_ZOO_THREADS (1), HONE_ZOO_TIMEOUT (seconds a run, 300), HONE_ZOO_PYTHON
# (/usr/bin/python3: Debian's, the one python3-torch installs for),
# HONE_ZOO_STRICT_HASH=1 (an export whose bytes changed under the same
# scripts fails instead of warning), HONE_ZOO_USE_EXPORT=1 (WORK_DIR/EXPORTER/NAME
# already holds an export made elsewhere, e.g. the GPU machine's dynamo one:
# run it as it is, never export; only numpy is needed, a hash that differs
# from the pin warns, and a point without in/ and torch/ there is skipped).
#
# A backend failing or outside the bound fails the test unless manifest.json's
# "known_failures" names it for this model (with the reason); "XPASS" is
# printed when a known failure passes. An export failure listed in the
# manifest's "export_failures" for this exporter and torch skips the test.
# Exit 77 (ctest: skipped) without torch, torchvision, onnx or numpy.
set -uo pipefail
hone=$1 name=$2 work=$3
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py=${HONE_ZOO_PYTHON:-/usr/bin/python3}
exporter=${HONE_ZOO_EXPORTER:-torchscript}
batches=${HONE_ZOO_BATCHES:-1}
backends=(${HONE_ZOO_BACKENDS:-reference blas onednn aot})
threads=${HONE_ZOO_THREADS:-1}
per_run_timeout=${HONE_ZOO_TIMEOUT:-300}
use_export=${HONE_ZOO_USE_EXPORT:-0}
zoo() { "$py" "$here/zoo.py" "$@"; }

needs="torch torchvision onnx numpy"
[ "$use_export" = 1 ] && needs="numpy"  # no export here: only the comparison's numpy
if ! missing=$("$py" -c 'import importlib.util as u, sys
m = [x for x in sys.argv[1:] if u.find_spec(x) is None]
print(", ".join(m)); sys.exit(1 if m else 0)' $needs 2>&1); then
  echo "SKIP: $py lacks ${missing:-python} (scripts/install-deps.sh --tests installs python3-torch, python3-torchvision, python3-onnx)"
  exit 77
fi

if [ "$use_export" != 1 ] && [ "$exporter" = dynamo ] && ! "$py" "$here/zoo.py" has-dynamo; then
  echo "SKIP: the dynamo exporter needs torch >= 2.5 and onnxscript (this is torch $("$py" "$here/zoo.py" has-dynamo --version))"
  exit 77
fi

dir="$work/$exporter/$name"
results="$work/results/$exporter"
mkdir -p "$dir" "$results"
# Other zoo tests may export at the same time (ctest -j): one export per model folder.
exec 9> "$dir.lock"
flock 9
if [ "$use_export" = 1 ]; then
  # An export made elsewhere (another torch, another exporter): used as it is.
  if [ ! -f "$dir/model.onnx" ] || [ ! -f "$dir/export.json" ]; then
    echo "FAIL: HONE_ZOO_USE_EXPORT=1 but $dir has no model.onnx and export.json"
    exit 1
  fi
  echo "using the export in $dir as it is (HONE_ZOO_USE_EXPORT=1; $("$py" -c 'import json, sys
s = json.load(open(sys.argv[1])).get("stamp", {})
print("exported by %s on torch %s" % (s.get("exporter", "?"), s.get("torch", "?")))' "$dir/export.json"))"
  rc=0
else
  zoo export "$name" --exporter "$exporter" --work "$work/$exporter" --batches "$batches" 2>&1 |
    grep -v -e 'Warning' -e '^  ' >&2
  rc=${PIPESTATUS[0]}
fi
flock -u 9
manifest_field() {  # manifest.json models.NAME.FIELD[KEY], or nothing
  "$py" -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"].get(sys.argv[2], {}).get(sys.argv[3], {})
print(m.get(sys.argv[4], ""))' "$here/manifest.json" "$name" "$1" "$2"
}
if [ $rc -ne 0 ]; then
  error=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("error", ""))' "$dir/export.json" 2>/dev/null)
  torch_version=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)
  why=$(manifest_field export_failures "$exporter torch $torch_version")
  if [ -n "$why" ]; then
    echo "SKIP: $name does not export with $exporter on torch $torch_version (known: $why)"
    for b in "${backends[@]}"; do  # the page says why its cells are empty
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exporter" "-" "$b" skipped 0 0 \
        "does not export with $exporter on torch $torch_version: $why"
    done > "$results/$name.tsv"
    zoo cells "$results/$name.tsv" "$results/$name.json" > /dev/null 2>&1
    exit 77
  fi
  echo "FAIL: $name: the $exporter export failed: ${error:-see above}"
  exit 1
fi

# The pinned hash: see README.md for why only a change under the same scripts warns.
hash_line=$(zoo hash "$name" --exporter "$exporter" --work "$dir")
hrc=$?
echo "$hash_line"
if [ $hrc -eq 1 ] && [ "$use_export" = 1 ]; then
  echo "note: the export was made under other zoo scripts (HONE_ZOO_USE_EXPORT=1: checked against its own PyTorch outputs)"
elif [ $hrc -eq 1 ]; then
  echo "FAIL: the zoo's scripts changed and $name's export with them: re-pin (tests/zoo/README.md)"
  exit 1
elif [ $hrc -eq 3 ] && [ "${HONE_ZOO_STRICT_HASH:-0}" = 1 ]; then
  echo "FAIL: HONE_ZOO_STRICT_HASH=1 and the export changed under the same scripts"
  exit 1
elif [ $hrc -ne 0 ] && [ $hrc -ne 2 ] && [ $hrc -ne 3 ]; then
  echo "FAIL: zoo.py hash failed"
  exit 1
fi

# ONNX Runtime: Node's peer, or Python's onnxruntime where Node is missing (the GPU machine).
ort_run=()
if [ -d "$root/bench/peers/ort/node_modules/onnxruntime-node" ] && command -v node > /dev/null; then
  ort_run=(node "$root/bench/peers/ort/run.js")
elif "$py" -c 'import onnxruntime' 2> /dev/null; then
  ort_run=("$py" "$root/bench/peers/ort/run.py")
else
  echo "note: no ONNX Runtime peer (bench/peers/ort/install.sh, or Python's onnxruntime): bounds are the floor"
fi

# Fallbacks per backend: the partition does not depend on the point.
declare -A fallback
for b in "${backends[@]}"; do
  [ "$b" = reference ] && { fallback[$b]=0; continue; }
  f=$(timeout 120 "$hone" inspect "$dir/model.onnx" --backend "$b" --json 2>/dev/null |
    "$py" -c 'import json, sys
try:
    p = json.load(sys.stdin)["partition"]
except Exception:
    print("?"); sys.exit()
f = p.get("fallbacks") or []
ops = sorted({x["op"] for x in f})
print("%d%s" % (len(f), " (%s of %d nodes: %s)" % (len(f), p.get("planned_nodes", 0), ", ".join(ops)) if f else ""))')
  fallback[$b]=${f:-?}
done

unexpected=0
out="$results/$name.tsv"
: > "$out"
for point in $(zoo points "$name" --batches "$batches"); do
  pdir="$dir/$point"
  # A dim the exporter fixed (dynamo specializes an RNN's sequence length):
  # other values cannot run on this export; said, not failed.
  if why=$(zoo skip "$name" "$point" --work "$dir" --batches "$batches"); then
    echo "SKIP $name/$point: $why"
    for b in "${backends[@]}"; do
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exporter" "$point" "$b" skipped 0 0 "$why" >> "$out"
    done
    continue
  fi
  if [ "$use_export" = 1 ] && { [ ! -d "$pdir/in" ] || [ ! -d "$pdir/torch" ]; }; then
    why="not in the export used as it is (HONE_ZOO_USE_EXPORT=1): no $point/in or $point/torch"
    echo "SKIP $name/$point: $why"
    for b in "${backends[@]}"; do
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exporter" "$point" "$b" skipped 0 0 "$why" >> "$out"
    done
    continue
  fi
  ort_dir=""
  if [ ${#ort_run[@]} -gt 0 ]; then
    if timeout "$per_run_timeout" "${ort_run[@]}" "$dir/model.onnx" --inputs "$pdir/in" \
         --outputs "$pdir/ort" --threads "$threads" > "$pdir/ort.log" 2>&1; then
      ort_dir="$pdir/ort"
      echo "ORT $name/$point against PyTorch: $(zoo compare "$pdir/torch" "$pdir/ort" | sed 's/ (bound [^)]*)//g')"
    else
      echo "note: ONNX Runtime failed on $name/$point: $(tail -n1 "$pdir/ort.log")"
    fi
  fi
  for b in "${backends[@]}"; do
    rm -rf "$pdir/$b"
    t0=$(date +%s.%N)
    # Debug level: a block whose build the backend refused at run time says
    # so ("block 'NAME' ... runs on the reference: why"), which the partition
    # cannot show. Only such lines: a fallback's reason may say those words too
    # (aot's NonZero), and the debug log lists every fallback with its reason.
    timeout "$per_run_timeout" "$hone" --log-level debug --threads "$threads" run "$dir/model.onnx" \
      --backend "$b" --inputs "$pdir/in" --outputs "$pdir/$b" > "$pdir/$b.log" 2>&1
    rc=$?
    ref_re="block '[^']*'.* runs on the reference"
    ref_blocks=$(grep -c "$ref_re" "$pdir/$b.log")
    ref_why=$(grep -m1 "$ref_re" "$pdir/$b.log" | sed 's/.*runs on the reference[^:]*: //' | cut -c1-200)
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
    if [ $rc -eq 124 ]; then
      status=failed detail="timed out after ${per_run_timeout} s"
    elif [ $rc -ne 0 ]; then
      status=failed detail="$(grep -m1 'error:' "$pdir/$b.log" || tail -n1 "$pdir/$b.log")"
    elif detail=$(zoo compare "$pdir/torch" "$pdir/$b" ${ort_dir:+--ort "$ort_dir"}); then
      status=passed
    else
      status=failed
    fi
    fb=${fallback[$b]}
    [ "$ref_blocks" -gt 0 ] && detail="$detail; blocks run on the reference: $ref_blocks ($ref_why)"
    why=$(manifest_field known_failures "$b")
    if [ "$status" = failed ]; then
      if [ -n "$why" ]; then echo "KNOWN FAIL $name/$point/$b ($why): $detail"
      else echo "FAIL $name/$point/$b: $detail"; unexpected=1; fi
    else
      echo "ok $name/$point/$b (${secs} s, fallbacks ${fb}): $detail"
      [ -n "$why" ] && echo "XPASS $name/$point/$b: listed in known_failures ($why) but passes now; update the manifest"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exporter" "$point" "$b" "$status" "$secs" "${fb%% *}" \
      "$detail" >> "$out"
  done
done
# The feature matrix's Zoo tab (.ci/run merges WORK/results/*/*.json into the page).
zoo cells "$out" "$results/$name.json" || echo "note: could not write $results/$name.json"
exit $unexpected
