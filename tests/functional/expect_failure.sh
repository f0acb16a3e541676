#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits non-zero and
# its output matches REGEX (grep -E).
set -u
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "expected a failure, but the command succeeded:"
  echo "$out" | tail -20
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "the command failed (rc=$rc), but its output does not match /$regex/:"
  echo "$out" | tail -20
  exit 1
fi
echo "failed as expected (rc=$rc): $(grep -Em1 -- "$regex" <<<"$out")"
