#!/usr/bin/env bash
# no_new_failures.sh REFERENCE.tsv BACKEND.tsv: exits 1 listing every test
# the reference passes and the backend fails (rows of `hone conformance --tsv`).
set -euo pipefail
ref=$1 got=$2
for f in "$ref" "$got"; do
  [ -s "$f" ] || { echo "no_new_failures: $f is missing or empty (did its conformance test run?)" >&2; exit 1; }
done
bad=$(awk -F'\t' 'NR == FNR { if ($3 == "PASS") pass[$1 "/" $2] = 1; next }
                  FNR > 1 && $3 == "FAIL" && (($1 "/" $2) in pass) { print "  " $1 "/" $2 ": " $4 }' "$ref" "$got")
if [ -n "$bad" ]; then
  echo "tests the reference passes but $(basename "$got" .tsv) fails:"
  echo "$bad"
  exit 1
fi
echo "no_new_failures: every test the reference passes also passes in $(basename "$got")"
