"""More of the families a user base brings, written as their reference
implementations write them (small widths, seeded, nothing downloaded):

- SentenceEmbedder: a sentence-transformers encoder (a BERT body, mean
  pooling over the real tokens: sum(h * mask) / clamp(sum(mask)), then
  F.normalize to unit L2 length).
- DebertaEncoder: DeBERTa-v2's disentangled attention (content-to-position
  and position-to-content scores taken from relative-position embeddings by
  torch.gather of clamped log-bucketed relative indices).
- DetrDetector: DETR (a ResNet-18 backbone, a 2-D sine position encoding from
  the cumsum of a mask, a transformer encoder and a decoder whose learned
  object queries cross-attend the image tokens, class and box heads).
- StyleTransfer: Johnson's fast style-transfer net (ReflectionPad2d,
  InstanceNorm2d with affine parameters, residual blocks, nearest Upsample).
- QuartzNet: a QuartzNet/TCN speech model (depthwise-separable Conv1d, some
  dilated, BatchNorm1d, residual 1x1 projections, CTC log-probabilities).
- Gcn: a graph convolutional network over a graph given as edge_index
  (self-loops added, degrees and messages summed by scatter_add_ as
  PyTorch Geometric's GCNConv does, mean readout).
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

from models import BertLayer


class SentenceEmbedder(nn.Module):
    """all-MiniLM's shape at 2 layers of 128: BERT embeddings and post-LN
    blocks, then masked mean pooling and L2 normalisation."""

    def __init__(self, vocab=1000, hidden=128, layers=2, heads=4, inter=512, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, inter) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.position(pos))
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask_bias)
        m = attention_mask.unsqueeze(-1).expand(x.size()).float()
        pooled = torch.sum(x * m, 1) / torch.clamp(m.sum(1), min=1e-9)
        return F.normalize(pooled, p=2, dim=1)


def log_bucket_position(relative_pos, bucket_size, max_position):
    """DeBERTa-v2's make_log_bucket_position: exact within bucket_size / 2,
    log-spaced beyond, signed."""
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid), torch.tensor(mid - 1).type_as(relative_pos),
                          torch.abs(relative_pos))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid))
                         * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


class DebertaAttention(nn.Module):
    def __init__(self, hidden, heads, span):
        super().__init__()
        self.heads, self.head_dim, self.span = heads, hidden // heads, span
        self.query_proj, self.key_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.value_proj = nn.Linear(hidden, hidden)

    def split(self, x):  # [b, s, h] -> [b * heads, s, d]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3).reshape(-1, s, self.head_dim)

    def forward(self, x, mask, rel_pos, rel_emb):
        b, s, _ = x.shape
        q, k, v = self.split(self.query_proj(x)), self.split(self.key_proj(x)), self.split(self.value_proj(x))
        scale = math.sqrt(self.head_dim * 3)  # content, c2p and p2c
        scores = torch.bmm(q, k.transpose(-1, -2)) / scale
        # Shared projections of the relative embeddings (share_att_key), [b * heads, 2 span, d].
        pos_k = self.split(self.key_proj(rel_emb)).repeat(b, 1, 1)
        pos_q = self.split(self.query_proj(rel_emb)).repeat(b, 1, 1)
        c2p = torch.bmm(q, pos_k.transpose(-1, -2))
        c2p_pos = torch.clamp(rel_pos + self.span, 0, self.span * 2 - 1)
        c2p = torch.gather(c2p, dim=-1, index=c2p_pos.squeeze(0).expand([q.size(0), s, s]))
        p2c = torch.bmm(k, pos_q.transpose(-1, -2))
        p2c_pos = torch.clamp(-rel_pos + self.span, 0, self.span * 2 - 1)
        p2c = torch.gather(p2c, dim=-1, index=p2c_pos.squeeze(0).expand([k.size(0), s, s])).transpose(-1, -2)
        scores = (scores + c2p / scale + p2c / scale).view(b, self.heads, s, s)
        scores = scores.masked_fill(~mask, torch.finfo(x.dtype).min)  # XSoftmax
        probs = torch.softmax(scores, -1).masked_fill(~mask, 0.0)
        ctx = torch.matmul(probs.view(-1, s, s), v).view(b, self.heads, s, self.head_dim)
        return ctx.permute(0, 2, 1, 3).reshape(b, s, -1)


class DebertaLayer(nn.Module):
    def __init__(self, hidden, heads, inter, span):
        super().__init__()
        self.attention = DebertaAttention(hidden, heads, span)
        self.attn_out, self.attn_norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-7)
        self.intermediate, self.output = nn.Linear(hidden, inter), nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-7)

    def forward(self, x, mask, rel_pos, rel_emb):
        x = self.attn_norm(x + self.attn_out(self.attention(x, mask, rel_pos, rel_emb)))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class DebertaEncoder(nn.Module):
    """DeBERTa-v3's attention at 2 layers of 128 (4 heads): no absolute
    positions, relative positions log-bucketed into 2 x 16 embeddings
    (position_buckets 16, max_relative_positions 64), shared key/query
    projections for them, the padding mask as a boolean [b, 1, s, s]."""

    def __init__(self, vocab=1000, hidden=128, layers=2, heads=4, inter=512, buckets=16, max_rel=64):
        super().__init__()
        self.buckets, self.max_rel = buckets, max_rel
        self.word = nn.Embedding(vocab, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-7)
        self.rel_embeddings = nn.Embedding(buckets * 2, hidden)
        self.rel_norm = nn.LayerNorm(hidden, eps=1e-7)
        self.layers = nn.ModuleList([DebertaLayer(hidden, heads, inter, buckets) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        s = input_ids.size(1)
        x = self.norm(self.word(input_ids)) * attention_mask.unsqueeze(-1).float()
        ext = attention_mask[:, None, None, :].float()
        mask = (ext * ext.transpose(-1, -2)).bool()  # get_attention_mask
        ids = torch.arange(s, dtype=torch.long, device=x.device)
        rel_pos = log_bucket_position(ids[:, None] - ids[None, :], self.buckets, self.max_rel)
        rel_pos = rel_pos.to(torch.long)[None]
        rel_emb = self.rel_norm(self.rel_embeddings.weight)[None]
        for layer in self.layers:
            x = layer(x, mask, rel_pos, rel_emb)
        return x


class DetrDetector(nn.Module):
    """DETR at width 64: ResNet-18 to stride 32, a 1x1 projection, sine
    position encoding (normalised cumsum of a not-mask), 2 encoder and 2
    decoder layers (post-norm, the position added to queries and keys), 20
    learned object queries, 10 classes plus no-object, boxes by a 3-layer MLP
    and sigmoid."""

    def __init__(self, d=64, heads=4, layers=2, queries=20, classes=10):
        super().__init__()
        import torchvision
        r = torchvision.models.resnet18(weights=None)
        self.backbone = nn.Sequential(*list(r.children())[:-2])
        self.input_proj = nn.Conv2d(512, d, 1)
        self.query_embed = nn.Embedding(queries, d)
        self.enc = nn.ModuleList([DetrLayer(d, heads, cross=False) for _ in range(layers)])
        self.dec = nn.ModuleList([DetrLayer(d, heads, cross=True) for _ in range(layers)])
        self.dec_norm = nn.LayerNorm(d)
        self.class_embed = nn.Linear(d, classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))
        self.d = d

    def position(self, feat):  # PositionEmbeddingSine(normalize=True) over an all-valid mask
        b, _, h, w = feat.shape
        not_mask = torch.ones(b, h, w, device=feat.device)
        y = not_mask.cumsum(1, dtype=torch.float32)
        x = not_mask.cumsum(2, dtype=torch.float32)
        eps, scale = 1e-6, 2 * math.pi
        y = y / (y[:, -1:, :] + eps) * scale
        x = x / (x[:, :, -1:] + eps) * scale
        n = self.d // 2
        dim_t = torch.arange(n, dtype=torch.float32, device=feat.device)
        dim_t = 10000 ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / n)
        px, py = x[:, :, :, None] / dim_t, y[:, :, :, None] / dim_t
        px = torch.stack((px[:, :, :, 0::2].sin(), px[:, :, :, 1::2].cos()), dim=4).flatten(3)
        py = torch.stack((py[:, :, :, 0::2].sin(), py[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((py, px), dim=3).permute(0, 3, 1, 2)

    def forward(self, pixels):
        feat = self.input_proj(self.backbone(pixels))
        b = feat.shape[0]
        pos = self.position(feat).flatten(2).permute(2, 0, 1)  # [hw, b, d]
        mem = feat.flatten(2).permute(2, 0, 1)
        for layer in self.enc:
            mem = layer(mem, pos)
        query_pos = self.query_embed.weight.unsqueeze(1).repeat(1, b, 1)
        tgt = torch.zeros_like(query_pos)
        for layer in self.dec:
            tgt = layer(tgt, query_pos, mem, pos)
        hs = self.dec_norm(tgt).transpose(0, 1)  # [b, queries, d]
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


class DetrLayer(nn.Module):
    def __init__(self, d, heads, cross):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads)
        self.cross_attn = nn.MultiheadAttention(d, heads) if cross else None
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))

    def forward(self, x, pos, mem=None, mem_pos=None):  # sequence-first, as DETR's transformer
        q = x + pos
        x = self.norm1(x + self.self_attn(q, q, x, need_weights=False)[0])
        if self.cross_attn is not None:
            x = self.norm2(x + self.cross_attn(x + pos, mem + mem_pos, mem, need_weights=False)[0])
        return self.norm3(x + self.ffn(x))


class ConvLayer(nn.Module):  # ReflectionPad2d then a conv, as the fast-neural-style example
    def __init__(self, cin, cout, k, stride=1):
        super().__init__()
        self.pad = nn.ReflectionPad2d(k // 2)
        self.conv = nn.Conv2d(cin, cout, k, stride)

    def forward(self, x):
        return self.conv(self.pad(x))


class StyleResidual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.in1 = ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)
        self.conv2, self.in2 = ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)

    def forward(self, x):
        return x + self.in2(self.conv2(F.relu(self.in1(self.conv1(x)))))


class StyleTransfer(nn.Module):
    """pytorch/examples' TransformerNet at half width (16, 32, 64), 3
    residual blocks: 9x9 and strided 3x3 reflection-padded convs down,
    nearest upsampling then convs up."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(
            ConvLayer(3, 16, 9), nn.InstanceNorm2d(16, affine=True), nn.ReLU(),
            ConvLayer(16, 32, 3, 2), nn.InstanceNorm2d(32, affine=True), nn.ReLU(),
            ConvLayer(32, 64, 3, 2), nn.InstanceNorm2d(64, affine=True), nn.ReLU())
        self.res = nn.Sequential(*[StyleResidual(64) for _ in range(3)])
        self.up = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="nearest"), ConvLayer(64, 32, 3), nn.InstanceNorm2d(32, affine=True),
            nn.ReLU(), nn.Upsample(scale_factor=2, mode="nearest"), ConvLayer(32, 16, 3),
            nn.InstanceNorm2d(16, affine=True), nn.ReLU(), ConvLayer(16, 3, 9))

    def forward(self, pixels):
        return self.up(self.res(self.down(pixels)))


class SeparableConv(nn.Module):
    """QuartzNet's sub-block: depthwise Conv1d (dilated where asked), pointwise
    Conv1d, BatchNorm1d."""

    def __init__(self, cin, cout, k, dilation=1, stride=1):
        super().__init__()
        self.dw = nn.Conv1d(cin, cin, k, stride=stride, dilation=dilation, padding=dilation * (k // 2),
                            groups=cin, bias=False)
        self.pw = nn.Conv1d(cin, cout, 1, bias=False)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        return self.bn(self.pw(self.dw(x)))


class QuartzBlock(nn.Module):
    def __init__(self, cin, cout, k, repeat, dilation):
        super().__init__()
        self.subs = nn.ModuleList([SeparableConv(cin if i == 0 else cout, cout, k, dilation) for i in range(repeat)])
        self.residual = nn.Sequential(nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout))

    def forward(self, x):
        y = x
        for i, sub in enumerate(self.subs):
            y = sub(y)
            if i < len(self.subs) - 1:
                y = F.relu(y)
        return F.relu(y + self.residual(x))


class QuartzNet(nn.Module):
    """QuartzNet 5x1 at width 64..128: a strided separable conv (time / 2),
    five residual blocks of 2 sub-blocks with kernels 13 to 25 (the last two
    dilated by 2), a dilated epilogue conv, CTC log-probabilities over 29
    symbols, [batch, time / 2, 29]."""

    def __init__(self, mels=64, classes=29):
        super().__init__()
        self.prologue = nn.Sequential(SeparableConv(mels, 64, 11, stride=2), nn.ReLU())
        spec = [(64, 64, 13, 1), (64, 96, 15, 1), (96, 96, 17, 1), (96, 128, 21, 2), (128, 128, 25, 2)]
        self.blocks = nn.Sequential(*[QuartzBlock(cin, cout, k, 2, dil) for cin, cout, k, dil in spec])
        self.epilogue = nn.Sequential(SeparableConv(128, 128, 29, dilation=2), nn.ReLU(),
                                      nn.Conv1d(128, 128, 1), nn.ReLU())
        self.head = nn.Conv1d(128, classes, 1)

    def forward(self, input_features):
        x = self.epilogue(self.blocks(self.prologue(input_features)))
        return F.log_softmax(self.head(x).transpose(1, 2), dim=-1)


class GcnConv(nn.Module):
    """PyTorch Geometric's GCNConv over batched node features [b, n, f]:
    symmetric normalisation D^-1/2 (A + I) D^-1/2, summed by scatter_add_."""

    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, edge_index):
        b, n, _ = x.shape
        loops = torch.arange(n, device=x.device)
        src = torch.cat([edge_index[0], loops])
        dst = torch.cat([edge_index[1], loops])
        deg = torch.zeros(n, dtype=x.dtype, device=x.device).scatter_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        inv_sqrt = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
        norm = inv_sqrt[src] * inv_sqrt[dst]
        h = self.lin(x)
        f = h.shape[2]
        # [edges, b * f]: nodes first, as PyG's x [nodes, f], summed into the nodes by
        # scatter_add_ of the index broadcast over the features (ScatterElements, reduction
        # add). torch 1.13 exports index_add_ as a ScatterElements without reduction (the
        # last message to a node wins: ORT and hone 24% off PyTorch), and refuses
        # scatter_add_ when it cannot see that the index's dims are the source's.
        msg = (h[:, src] * norm[None, :, None]).transpose(0, 1).reshape(src.shape[0], -1)
        out = torch.zeros(n, msg.shape[1], dtype=h.dtype, device=h.device)
        out = out.scatter_add_(0, dst[:, None].expand_as(msg), msg)
        return out.view(n, b, f).transpose(0, 1) + self.bias


class Gcn(nn.Module):
    """Three GCN layers of 64 over node features [b, nodes, 16] and a shared
    graph edge_index [2, edges], ReLU between, mean over the nodes, a
    classifier of 8 classes."""

    def __init__(self, features=16, hidden=64, classes=8):
        super().__init__()
        self.convs = nn.ModuleList([GcnConv(features, hidden), GcnConv(hidden, hidden), GcnConv(hidden, hidden)])
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, node_features, edge_index):
        x = node_features
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return self.classifier(x.mean(dim=1))
