"""Six more families, written as their reference implementations write them
(small widths, seeded, nothing downloaded), for op patterns the zoo lacked:

- SegFormer: a MiT encoder (overlapping strided patch embeddings, efficient
  self-attention whose keys and values come from a strided-conv spatial
  reduction, Mix-FFN with a depthwise 3x3 conv between its Linears) and the
  all-MLP decoder (per-stage Linears, bilinear upsampling to the first
  stage's size, concat, a 1x1 fuse with BatchNorm).
- ConvNeXtV2: ConvNeXt-V2 atto (depthwise 7x7, channels-last LayerNorm and
  MLP, GRN: the L2 norm over the spatial dims divided by its mean over the
  channels; channels-first LayerNorm written out in the stem and downsamplers).
- Dinov2: a DINOv2-style ViT (patch 14, four register tokens, LayerScale, the
  37x37 position table resized in the graph by bicubic interpolation to the
  input's patch grid, so any multiple of 14 runs).
- MambaLm: a Mamba-2 language model (input-dependent dt, B and C, a depthwise
  causal Conv1d, SiLU gating, the selective scan as SSD's masked decay
  matrix: exp of segment sums from a cumsum, gated RMSNorm).
- Gat: a graph attention network (PyTorch Geometric's GATConv: per-edge
  scores by LeakyReLU, a softmax over each node's incoming edges by
  scatter_add_, messages weighted and summed by scatter_add_, four heads).
- PatchTst: PatchTST for multivariate forecasting (RevIN normalisation,
  channel independence by reshape, end padding by repetition and unfold into
  patches, a BatchNorm transformer with residual attention scores, a
  flatten head, RevIN denormalisation).
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

from models import RmsNorm


# SegFormer (MiT-b0 widths at two blocks a stage)


class OverlapPatchEmbed(nn.Module):
    def __init__(self, cin, dim, kernel, stride):
        super().__init__()
        self.proj = nn.Conv2d(cin, dim, kernel, stride, kernel // 2)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.proj(x)
        _, _, h, w = x.shape
        return self.norm(x.flatten(2).transpose(1, 2)), h, w


class EfficientSelfAttention(nn.Module):
    """Keys and values from the tokens reduced by a strided conv (sr x sr)."""

    def __init__(self, dim, heads, sr):
        super().__init__()
        self.heads, self.sr_ratio = heads, sr
        self.scale = (dim // heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        if sr > 1:
            self.sr = nn.Conv2d(dim, dim, sr, sr)
            self.norm = nn.LayerNorm(dim)

    def forward(self, x, h, w):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, c // self.heads).permute(0, 2, 1, 3)
        if self.sr_ratio > 1:
            r = self.sr(x.permute(0, 2, 1).reshape(b, c, h, w)).reshape(b, c, -1).permute(0, 2, 1)
            x = self.norm(r)
        kv = self.kv(x).reshape(b, -1, 2, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


class MixFfn(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x, h, w):
        x = self.fc1(x)
        b, n, c = x.shape
        x = self.dwconv(x.transpose(1, 2).reshape(b, c, h, w)).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(x))


class MitBlock(nn.Module):
    def __init__(self, dim, heads, sr, mlp_ratio=4):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = EfficientSelfAttention(dim, heads, sr)
        self.mlp = MixFfn(dim, dim * mlp_ratio)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.mlp(self.norm2(x), h, w)


class SegFormer(nn.Module):
    def __init__(self, dims=(32, 64, 160, 256), heads=(1, 2, 5, 8), srs=(8, 4, 2, 1), depth=2, decoder=256,
                 classes=19):
        super().__init__()
        self.embeds, self.stages, self.norms = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        cin = 3
        for i, (d, hd, sr) in enumerate(zip(dims, heads, srs)):
            self.embeds.append(OverlapPatchEmbed(cin, d, 7 if i == 0 else 3, 4 if i == 0 else 2))
            self.stages.append(nn.ModuleList([MitBlock(d, hd, sr) for _ in range(depth)]))
            self.norms.append(nn.LayerNorm(d))
            cin = d
        self.linears = nn.ModuleList([nn.Linear(d, decoder) for d in dims])
        self.fuse = nn.Sequential(nn.Conv2d(4 * decoder, decoder, 1, bias=False), nn.BatchNorm2d(decoder), nn.ReLU())
        self.classifier = nn.Conv2d(decoder, classes, 1)

    def forward(self, pixels):
        x, feats = pixels, []
        for embed, blocks, norm in zip(self.embeds, self.stages, self.norms):
            x, h, w = embed(x)
            for block in blocks:
                x = block(x, h, w)
            x = norm(x).reshape(x.shape[0], h, w, -1).permute(0, 3, 1, 2)
            feats.append(x)
        size = feats[0].shape[2:]
        outs = []
        for f, linear in zip(feats, self.linears):
            b, _, h, w = f.shape
            y = linear(f.flatten(2).transpose(1, 2)).permute(0, 2, 1).reshape(b, -1, h, w)
            outs.append(F.interpolate(y, size=size, mode="bilinear", align_corners=False))
        return self.classifier(self.fuse(torch.cat(outs[::-1], dim=1)))


# ConvNeXt-V2


class LayerNorm2d(nn.Module):
    """ConvNeXt's channels-first LayerNorm, written out as its code does."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.zeros(dim)), eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Grn(nn.Module):
    """Global response normalization over channels-last x [b, h, w, c]. gamma
    and beta start at zero (build_model draws them, as training would move them)."""

    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.zeros(1, 1, 1, dim))
        self.beta = nn.Parameter(torch.zeros(1, 1, 1, dim))

    def forward(self, x):
        gx = torch.linalg.vector_norm(x, ord=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class ConvNeXtV2Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.grn = Grn(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        y = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        y = self.pwconv2(self.grn(F.gelu(self.pwconv1(y))))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtV2(nn.Module):
    """atto: widths 40 to 320, depths 2, 2, 6, 2."""

    def __init__(self, dims=(40, 80, 160, 320), depths=(2, 2, 6, 2), classes=1000):
        super().__init__()
        self.downsample = nn.ModuleList([nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0]))])
        for i in range(3):
            self.downsample.append(nn.Sequential(LayerNorm2d(dims[i]), nn.Conv2d(dims[i], dims[i + 1], 2, 2)))
        self.stages = nn.ModuleList([nn.Sequential(*[ConvNeXtV2Block(d) for _ in range(n)])
                                     for d, n in zip(dims, depths)])
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, pixels):
        x = pixels
        for down, stage in zip(self.downsample, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean([-2, -1])))


# DINOv2-style ViT


class LayerScale(nn.Module):
    def __init__(self, dim, init=0.1):
        super().__init__()
        self.gamma = nn.Parameter(init * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Dinov2Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ls1, self.ls2 = LayerScale(dim), LayerScale(dim)
        self.fc1, self.fc2 = nn.Linear(dim, mlp_ratio * dim), nn.Linear(mlp_ratio * dim, dim)

    def attention(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * (c // self.heads) ** -0.5, qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))

    def forward(self, x):
        x = x + self.ls1(self.attention(self.norm1(x)))
        return x + self.ls2(self.fc2(F.gelu(self.fc1(self.norm2(x)))))


class Dinov2(nn.Module):
    """ViT-S/14's layout at 192 wide, 4 layers: the position table is for a
    518x518 image (37x37 patches) and is resized bicubically to the input's
    grid in the graph; four register tokens without positions. Outputs the
    normalised class token and the mean of the patch tokens."""

    def __init__(self, dim=192, depth=4, heads=3, patch=14, grid=37, registers=4):
        super().__init__()
        self.patch, self.grid = patch, grid
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.register_tokens = nn.Parameter(torch.randn(1, registers, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + grid * grid, dim) * 0.02)
        self.blocks = nn.ModuleList([Dinov2Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def interpolate_pos_encoding(self, height, width):
        dim = self.pos_embed.shape[-1]
        cls_pos, patch_pos = self.pos_embed[:, :1], self.pos_embed[:, 1:]
        patch_pos = patch_pos.reshape(1, self.grid, self.grid, dim).permute(0, 3, 1, 2)
        patch_pos = F.interpolate(patch_pos, size=(height // self.patch, width // self.patch), mode="bicubic",
                                  align_corners=False)
        return torch.cat((cls_pos, patch_pos.permute(0, 2, 3, 1).reshape(1, -1, dim)), dim=1)

    def forward(self, pixels):
        b, _, height, width = pixels.shape
        x = self.patch_embed(pixels).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(b, -1, -1), x), dim=1) + self.interpolate_pos_encoding(height, width)
        x = torch.cat((x[:, :1], self.register_tokens.expand(b, -1, -1), x[:, 1:]), dim=1)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        return x[:, 0], x[:, 1 + self.register_tokens.shape[1]:].mean(dim=1)


# Mamba-2


def segsum(x):
    """[..., T] -> [..., T, T]: the sum of x over (s, t] at [t, s], -inf above
    the diagonal, so that exp of it is the decay from step s to step t."""
    t = x.size(-1)
    cs = torch.cumsum(x, dim=-1)
    diff = cs[..., :, None] - cs[..., None, :]
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
    return diff.masked_fill(~mask, float("-inf"))


class Mamba2Mixer(nn.Module):
    def __init__(self, dim, state=16, conv=4, expand=2, headdim=32):
        super().__init__()
        self.inner, self.state, self.headdim = expand * dim, state, headdim
        self.heads = self.inner // headdim
        conv_dim = self.inner + 2 * state
        self.in_proj = nn.Linear(dim, 2 * self.inner + 2 * state + self.heads, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, conv, groups=conv_dim, padding=conv - 1)
        self.dt_bias = nn.Parameter(torch.log(torch.expm1(torch.empty(self.heads).uniform_(1e-3, 1e-1))))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.heads).uniform_(1.0, 16.0)))
        self.D = nn.Parameter(torch.ones(self.heads))
        self.norm = RmsNorm(self.inner, eps=1e-5)
        self.out_proj = nn.Linear(self.inner, dim, bias=False)

    def forward(self, u):
        b, length, _ = u.shape
        z, xbc, dt = torch.split(self.in_proj(u), [self.inner, self.inner + 2 * self.state, self.heads], dim=-1)
        dt = F.softplus(dt + self.dt_bias)  # [b, L, heads]
        xbc = F.silu(self.conv1d(xbc.transpose(1, 2))[..., :length].transpose(1, 2))  # causal
        x, bmat, cmat = torch.split(xbc, [self.inner, self.state, self.state], dim=-1)
        x = x.reshape(b, length, self.heads, self.headdim)
        a = -torch.exp(self.A_log)
        decay = torch.exp(segsum((dt * a).transpose(1, 2)))  # [b, heads, L, L]
        scores = (cmat @ bmat.transpose(1, 2)).unsqueeze(1) * decay
        y = scores @ (x * dt.unsqueeze(-1)).transpose(1, 2)  # [b, heads, L, headdim]
        y = y.transpose(1, 2) + x * self.D[:, None]
        y = self.norm(y.reshape(b, length, self.inner) * F.silu(z))
        return self.out_proj(y)


class MambaLm(nn.Module):
    def __init__(self, vocab=1000, dim=64, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norms = nn.ModuleList([RmsNorm(dim, eps=1e-5) for _ in range(layers)])
        self.mixers = nn.ModuleList([Mamba2Mixer(dim) for _ in range(layers)])
        self.norm_f = RmsNorm(dim, eps=1e-5)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for norm, mixer in zip(self.norms, self.mixers):
            x = x + mixer(norm(x))
        return F.linear(self.norm_f(x), self.embed.weight)


# GAT


class GatConv(nn.Module):
    """PyTorch Geometric's GATConv over batched node features [b, n, f] (the
    same graph for each), self-loops added. The softmax over each node's
    incoming edges subtracts each head's maximum over all edges (PyG subtracts
    the node's own; the softmax is the same) and sums by scatter_add_, nodes
    first as in Gcn (models_more.py)."""

    def __init__(self, cin, cout, heads, concat=True):
        super().__init__()
        self.heads, self.cout, self.concat = heads, cout, concat
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, 1, heads, cout))
        self.att_dst = nn.Parameter(torch.empty(1, 1, heads, cout))
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)
        self.bias = nn.Parameter(torch.zeros(heads * cout if concat else cout))

    def forward(self, x, src, dst):
        b, n, _ = x.shape
        h = self.lin(x).view(b, n, self.heads, self.cout)
        a_src, a_dst = (h * self.att_src).sum(-1), (h * self.att_dst).sum(-1)  # [b, n, heads]
        e = F.leaky_relu(a_src[:, src] + a_dst[:, dst], 0.2)  # [b, edges, heads]
        w = torch.exp(e - e.amax(dim=1, keepdim=True)).transpose(0, 1).reshape(src.shape[0], -1)
        denom = torch.zeros(n, w.shape[1], dtype=w.dtype, device=w.device)
        denom = denom.scatter_add_(0, dst[:, None].expand_as(w), w)
        alpha = w / (denom[dst] + 1e-16)  # [edges, b * heads]
        msg = h[:, src].transpose(0, 1) * alpha.view(-1, b, self.heads, 1)
        msg = msg.reshape(src.shape[0], -1)
        out = torch.zeros(n, msg.shape[1], dtype=msg.dtype, device=msg.device)
        out = out.scatter_add_(0, dst[:, None].expand_as(msg), msg).view(n, b, self.heads, self.cout)
        out = out.transpose(0, 1)
        out = out.reshape(b, n, -1) if self.concat else out.mean(dim=2)
        return out + self.bias


class Gat(nn.Module):
    """Two GAT layers (4 heads of 16, concatenated; then 4 heads averaged),
    ELU between, mean over the nodes, 8 classes, over node features
    [b, nodes, 16] and a shared edge_index [2, edges]."""

    def __init__(self, features=16, hidden=16, heads=4, classes=8):
        super().__init__()
        self.conv1 = GatConv(features, hidden, heads)
        self.conv2 = GatConv(hidden * heads, hidden, heads, concat=False)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, node_features, edge_index):
        loops = torch.arange(node_features.shape[1], device=edge_index.device)
        src, dst = torch.cat([edge_index[0], loops]), torch.cat([edge_index[1], loops])
        x = F.elu(self.conv1(node_features, src, dst))
        x = self.conv2(x, src, dst)
        return self.classifier(x.mean(dim=1))


# PatchTST


class RevIn(nn.Module):
    """Reversible instance normalisation over time, per series and channel."""

    def __init__(self, channels, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight, self.bias = nn.Parameter(torch.ones(channels)), nn.Parameter(torch.zeros(channels))

    def normalize(self, x):  # x [b, time, channels]
        mean = x.mean(dim=1, keepdim=True)
        std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + self.eps)
        return (x - mean) / std * self.weight + self.bias, mean, std

    def denormalize(self, x, mean, std):
        return (x - self.bias) / (self.weight + self.eps * self.eps) * std + mean


class BatchNormTokens(nn.Module):
    """BatchNorm1d over the model dim of tokens [b, n, d], as PatchTST does."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.BatchNorm1d(dim)

    def forward(self, x):
        return self.norm(x.transpose(1, 2)).transpose(1, 2)


class TstLayer(nn.Module):
    """Post-norm encoder layer whose attention scores carry over from the
    layer before (PatchTST's residual attention)."""

    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.norm1, self.norm2 = BatchNormTokens(dim), BatchNormTokens(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff), nn.GELU(), nn.Linear(ff, dim))

    def forward(self, x, prev):
        b, n, d = x.shape
        q, k, v = (f(x).view(b, n, self.heads, -1).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5
        if prev is not None:
            scores = scores + prev
        out = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, n, d)
        x = self.norm1(x + self.o(out))
        return self.norm2(x + self.ff(x)), scores


class PatchTst(nn.Module):
    """336 steps of 7 series -> 96 steps ahead; patches of 16 at stride 8 (42
    with the end padding), 3 layers of 64, 4 heads."""

    def __init__(self, channels=7, context=336, horizon=96, patch=16, stride=8, dim=64, heads=4, ff=128, layers=3):
        super().__init__()
        self.patch, self.stride = patch, stride
        patches = (context - patch) // stride + 2
        self.revin = RevIn(channels)
        self.embed = nn.Linear(patch, dim)
        self.pos = nn.Parameter(torch.empty(patches, dim).uniform_(-0.02, 0.02))
        self.layers = nn.ModuleList([TstLayer(dim, heads, ff) for _ in range(layers)])
        self.head = nn.Linear(dim * patches, horizon)

    def forward(self, series):
        x, mean, std = self.revin.normalize(series)
        b, _, c = x.shape
        # The end padded by repeating the last step (ReplicationPad1d's values; torch 1.13 cannot
        # unfold a Pad's output, whose length its shape inference leaves unknown).
        x = x.permute(0, 2, 1)
        x = torch.cat([x, x[:, :, -1:].repeat(1, 1, self.stride)], dim=-1)
        # dimension=2, not PatchTST's -1: torch 1.13 exports unfold along -1 as a Concat
        # along the last axis ([b, c, 16, patches], which then fails to multiply).
        x = x.unfold(dimension=2, size=self.patch, step=self.stride)  # [b, c, patches, 16]
        x = self.embed(x)
        x = x.reshape(b * c, x.shape[2], x.shape[3]) + self.pos  # channel independence
        scores = None
        for layer in self.layers:
            x, scores = layer(x, scores)
        x = x.reshape(b, c, x.shape[1], x.shape[2]).permute(0, 1, 3, 2).flatten(start_dim=-2)
        y = self.head(x).permute(0, 2, 1)  # [b, horizon, c]
        return self.revin.denormalize(y, mean, std)
