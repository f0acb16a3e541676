#!/usr/bin/env bash
# Part 1 of the corpus's cuda cells (models.corpus-NAME/cuda), run here: packs
# every corpus model (tests/corpus/manifest.json, installed by
# scripts/install-corpus.sh) with the manifest's inputs for it
# (`node tests/corpus/corpus.js inputs`) into OUT_DIR/corpus.tar.xz, and puts
# corpus_run.sh (part 2, run on the GPU machine) beside it.
#
#   bench/cuda_h200/corpus_pack.sh OUT_DIR [K/N]  e.g. .gpu (ignored by git, carried by the run)
#   HONE_CORPUS_MODELS="oww_alexa ppocr_cls_v2" bench/cuda_h200/corpus_pack.sh OUT_DIR   # a subset
#
# K/N packs the K-th of N parts (models K, K+N, K+2N, ... of the list, from 1): the whole corpus
# is about 37 MiB of xz and a bundle of bin/hone about 20 MiB, close to the 64 MiB a device
# call may carry with the repository, and one call has 10 minutes; 1/2 and 2/2 halve both.
#
# Archive layout: names.txt (one model a line), models/NAME.onnx, in/NAME/input_<i>.npy.
# The outputs' expectations are not packed: corpus_cells.sh (part 3) computes them here with
# ONNX Runtime, on the same deterministic inputs.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/cuda_h200/corpus_pack.sh OUT_DIR [K/N]" >&2; exit 2; }
out=$1 part=${2:-1/1}
[[ "$part" =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] &&
  [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
  { echo "corpus_pack: part '$part' is not K/N with 1 <= K <= N" >&2; exit 2; }
k=${BASH_REMATCH[1]} parts=${BASH_REMATCH[2]}
root="$(cd "$(dirname "$0")/../.." && pwd)"
corpus="$root/tests/corpus/corpus.js"
models_dir="${HONE_CORPUS_DIR:-$root/corpus}/models"
all=(${HONE_CORPUS_MODELS:-$(node "$corpus" list)})
names=()
for ((i = k - 1; i < ${#all[@]}; i += parts)); do names+=("${all[$i]}"); done
stage=$(mktemp -d -t hone_corpus_pack_XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/models" "$stage/in" "$out"
for n in "${names[@]}"; do
  m="$models_dir/$n.onnx"
  [ -f "$m" ] || { echo "corpus_pack: $m is not installed (run scripts/install-corpus.sh)" >&2; exit 1; }
  cp "$m" "$stage/models/"
  node "$corpus" inputs "$n" "$stage/in/$n" ||
    { echo "corpus_pack: could not make the inputs of '$n'" >&2; exit 1; }
  echo "$n" >> "$stage/names.txt"
done
tar -C "$stage" -cf - names.txt models in | xz -T2 -9 > "$out/corpus.tar.xz"
cp "$root/bench/cuda_h200/corpus_run.sh" "$out/corpus_run.sh"
echo "corpus_pack: part $part, ${#names[@]} models (${names[*]}), $out/corpus.tar.xz $(du -h "$out/corpus.tar.xz" | cut -f1)" \
  "(raw models $(du -ch "$stage/models" | tail -n1 | cut -f1), inputs $(du -sh "$stage/in" | cut -f1))"
