#!/usr/bin/env bash
# Merges the functional suite's results into a copy of the base page and
# checks the rendered page in headless Chromium (tabs clicked, cells compared
# with the JSON). Exit 77 (ctest: skipped) without chromium or playwright-core.
#
#   page_test.sh HONE_MATRIX_BIN BASE.html RESULTS.json OUT.html [MORE_RESULTS_DIR]
# MORE_RESULTS_DIR: every *.json in it is merged too (the corpus tests' cells).
set -euo pipefail
tool=$1 base=$2 results=$3 out=$4 more=${5:-}
here="$(cd "$(dirname "$0")" && pwd)"
[ -x /usr/bin/chromium ] || { echo "SKIP: /usr/bin/chromium is not installed"; exit 77; }
[ -d "$here/node_modules/playwright-core" ] || { echo "SKIP: run tests/functional/browser/install.sh"; exit 77; }
if [ -f "$results" ]; then
  "$tool" update "$base" "$results" -o "$out"
else
  echo '{"cells": {}}' > "$out.empty.json"
  "$tool" update "$base" "$out.empty.json" -o "$out"
fi
if [ -n "$more" ] && [ -d "$more" ]; then
  for f in "$more"/*.json; do
    [ -f "$f" ] && "$tool" update "$out" "$f" -o "$out"
  done
fi
node "$here/check_page.js" "$out" --screenshots "$(dirname "$out")/feature_matrix_screenshots"
