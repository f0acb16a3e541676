#!/usr/bin/env bash
# Checks an inspection page the functional suite wrote (`hone inspect-run
# --pipeline` over a two-stage pipeline) in headless Chromium against its
# JSON. Exit 77 (ctest: skipped) without chromium or playwright-core.
#
#   inspection_page_test.sh PAGE.html
set -euo pipefail
page=$1
here="$(cd "$(dirname "$0")" && pwd)"
[ -x /usr/bin/chromium ] || { echo "SKIP: /usr/bin/chromium is not installed"; exit 77; }
[ -d "$here/node_modules/playwright-core" ] || { echo "SKIP: run tests/functional/browser/install.sh"; exit 77; }
[ -f "$page" ] || { echo "SKIP: no page at $page yet: the functional suite's JitPipeline report test writes it (and fails itself when it cannot)"; exit 77; }
node "$here/check_inspection.js" "$page" --screenshot "${page%.html}.png"
