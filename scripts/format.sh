#!/usr/bin/env bash
# Formats hone's C and C++ sources with the pinned clang-format (14, Debian 12's)
# and the repository's .clang-format, or checks that they are formatted.
#
#   scripts/format.sh           # rewrite every tracked source in place
#   scripts/format.sh --check   # list the files that differ; exit 1 if any do
#   scripts/format.sh FILE...   # rewrite just these
#
# The check runs in the test suite (ctest format_check), so CI fails on
# unformatted code. A machine without clang-format-14 skips the check (exit 77)
# and says so; scripts/install-deps.sh --tests installs it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tool="${HONE_CLANG_FORMAT:-clang-format-14}"
if ! command -v "$tool" >/dev/null; then
  echo "format: $tool not found (apt-get install clang-format-14, or set HONE_CLANG_FORMAT)" >&2
  exit 77
fi
sources() {
  if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cc' '*.cu' '*.cuh'
  else
    find src include tools python tests bench examples -type f \
      \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null
  fi
}
case "${1:-}" in
  --check)
    # In batches over both cores; clang-format names each file that differs.
    mapfile -t bad < <(sources | xargs -r -n 64 -P "$(nproc)" "$tool" --dry-run -Werror 2>&1 |
      sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
    if [ ${#bad[@]} -gt 0 ]; then
      echo "format: ${#bad[@]} file(s) differ from .clang-format ($("$tool" --version | head -1)):" >&2
      printf '  %s\n' "${bad[@]}" >&2
      echo "format: run scripts/format.sh to rewrite them" >&2
      exit 1
    fi
    echo "format: every source matches .clang-format"
    ;;
  "") sources | xargs -r "$tool" -i ;;
  *) "$tool" -i "$@" ;;
esac
