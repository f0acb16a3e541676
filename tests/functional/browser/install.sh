#!/usr/bin/env bash
# Installs playwright-core from npm for the feature-matrix browser test. It
# drives Debian's chromium (installed by scripts/install-deps.sh); it never
# downloads a browser of its own.
set -euo pipefail
cd "$(dirname "$0")"
[ -d node_modules/playwright-core ] && { echo "browser test: npm packages present"; exit 0; }
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --no-package-lock --ignore-scripts
