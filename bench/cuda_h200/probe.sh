#!/usr/bin/env bash
# Diagnostics for one device call, after run.sh in the same command (its bundle in /tmp/g and
# its exports in /tmp/w): what the timed selectors chose and a per-step profile of MODEL at
# BATCH under each CONFIG ("|"-separated lists of hone arguments), whether each block kept its
# CUDA graph, the partition after the graph passes, and small exports of vit_b_16 and bert
# (2 layers, narrow; same exporter as peer.py) for CPU-side analysis of their graphs.
#   bash .gpu/probe.sh MODEL BATCH "CONFIG|CONFIG..." [GRAPHS(0|1): the inspections and small exports]
set -u
. "$(dirname "$0")/device_env.sh"
m=$1 b=$2
IFS='|' read -ra configs <<< "$3"
for cfg in "${configs[@]}"; do
  echo "== $m b$b $cfg"
  timeout 90 /tmp/g/bin/hone --log-level debug bench /tmp/w/$m.onnx --backend cuda --batch $b \
    --iters 200 --warmup 20 $cfg > /tmp/probe.log 2>&1
  grep -E "chose|runs without a CUDA graph|warn|error|p50" /tmp/probe.log | sed 's/^\[[^]]*\] //' \
    | cut -c1-330 | sort | uniq -c | sort -rn | head -14
  HONE_CUDA_PROFILE=1 timeout 90 /tmp/g/bin/hone --log-level debug bench /tmp/w/$m.onnx --backend cuda \
    --batch $b --iters 2 --warmup 1 $cfg 2>&1 | grep "cuda profile" > /tmp/prof.txt; grep "profile io" /tmp/prof.txt | tail -2 | sed "s/^.*cuda profile io/  io/"
  python3 - /tmp/prof.txt <<'PY'
import re, sys, collections
rows = []
for l in open(sys.argv[1]):
    x = re.search(r"cuda profile: ([\d.]+) ms (.*) \[(.*)\]$", l.strip())
    if x: rows.append((float(x.group(1)), x.group(3)))
last = rows[-(len(rows) // 3):] if rows and len(rows) % 3 == 0 else rows
fam = collections.defaultdict(lambda: [0.0, 0])
for ms, k in last:
    f = re.sub(r"\[algo \d+(, tf32)?\]", "", k); f = re.sub(r"nvrtc\[.*\]", "nvrtc", f)
    if k: fam[f][0] += ms; fam[f][1] += 1
print("  steps with kernels %d, total %.3f ms" % (sum(c for _, c in fam.values()), sum(s for s, _ in fam.values())))
for f, (ms, c) in sorted(fam.items(), key=lambda x: -x[1][0])[:12]: print("  %.3f ms %3d x %s" % (ms, c, f))
PY
done
[ "${4:-0}" = 1 ] || exit 0
timeout 120 /tmp/g/bin/hone inspect /tmp/w/vit_b_16.onnx --passes --backend cuda > $OUT/inspect_vit.txt 2>&1
timeout 120 /tmp/g/bin/hone inspect /tmp/w/bert.onnx --passes --backend cuda > $OUT/inspect_bert.txt 2>&1
mkdir -p /tmp/tiny && (cd /tmp/tiny && python3 - "$R/.gpu" <<'PY'
import sys, torch
sys.path.insert(0, sys.argv[1]); import peer
from torchvision.models.vision_transformer import VisionTransformer
from transformers import BertConfig, BertModel
torch.manual_seed(0)
vit = VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=3, hidden_dim=192, mlp_dim=768).eval()
print("vit_tiny", peer.export(vit, (3, 64, 64), "vit_tiny.onnx"))
bm = BertModel(BertConfig(hidden_size=192, num_hidden_layers=2, num_attention_heads=3, intermediate_size=768,
                          attn_implementation="eager"))
class Enc(torch.nn.Module):
    def __init__(s, b): super().__init__(); s.b = b
    def forward(s, x): return s.b(inputs_embeds=x).last_hidden_state
print("bert_tiny", peer.export(Enc(bm).eval(), (32, 192), "bert_tiny.onnx"))
PY
) && tar -C /tmp/tiny -cJf $OUT/tiny.tar.xz . && ls -la /tmp/tiny
