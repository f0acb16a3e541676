"""The zoo's application families beyond classification and language models,
written here as their reference implementations write them (small widths,
seeded, nothing downloaded):

- ConformerEncoder: speech recognition's encoder (Conv2d subsampling over the
  time axis, macaron feed-forward halves, self-attention, a convolution module
  of GLU, depthwise Conv1d and BatchNorm).
- DiffusionUNet: a latent-diffusion denoiser (sinusoidal timestep embedding,
  GroupNorm + SiLU residual blocks with the embedding broadcast in, spatial
  self-attention and cross-attention to a text context, nearest upsampling).
- YoloDetector: a YOLOv8-style detector (Conv-BN-SiLU, C2f blocks that split
  channels with chunk, SPPF's repeated max pools, a top-down and bottom-up
  neck, per-level heads flattened and concatenated), raw outputs, no NMS.
- ClipTextEncoder: CLIP's text tower (causal mask made in forward by triu,
  pre-norm blocks with QuickGELU, the end-of-text token picked by argmax of
  the ids and gathered per row, a projection).
- Dlrm: a recommendation model (bottom MLP over dense features, one embedding
  table per sparse feature and a summed EmbeddingBag, pairwise dot
  interactions by bmm, their upper triangle taken by constant indices, top MLP
  with one probability per task).
- Dgcnn: a point-cloud classifier (k nearest neighbours by pairwise distance
  and topk, neighbour features gathered by computed flat indices, edge
  convolutions, max over neighbours, global max pooling). registry.py checks
  that the seeded points have no near-tie at the k-th neighbour, where two
  correct backends could pick different neighbours.
- Espcn: single-image super-resolution (tanh convolutions, PixelShuffle).
- DcganGenerator: an image generator from a latent vector (ConvTranspose2d,
  BatchNorm, ReLU, Tanh).
"""
import math

import torch
from torch import nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, d, mult=4):
        super().__init__()
        self.body = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d * mult), nn.SiLU(), nn.Linear(d * mult, d))

    def forward(self, x):
        return self.body(x)


class ConformerConv(nn.Module):
    def __init__(self, d, kernel=15):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)

    def forward(self, x):  # [batch, time, d]
        y = self.norm(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = self.pw2(F.silu(self.bn(self.dw(y))))
        return y.transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ff1, self.ff2 = FeedForward(d), FeedForward(d)
        self.attn_norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.conv = ConformerConv(d)
        self.out_norm = nn.LayerNorm(d)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        y = self.attn_norm(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.out_norm(x)


class ConformerEncoder(nn.Module):
    """Input features [batch, 80, seq] (log-mel frames); two stride-2 3x3
    convs subsample time by 4, as the Conformer paper and its open
    implementations do; width 144 (Conformer-S), 2 blocks, 4 heads."""

    def __init__(self, mels=80, d=144, layers=2, heads=4):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        freq = ((mels - 1) // 2 - 1) // 2
        self.proj = nn.Linear(d * freq, d)
        self.blocks = nn.ModuleList([ConformerBlock(d, heads) for _ in range(layers)])

    def forward(self, input_features):
        x = self.subsample(input_features.unsqueeze(1))  # [batch, d, mels', time']
        b, c, f, t = x.shape
        x = self.proj(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
        for blk in self.blocks:
            x = blk(x)
        return x


def timestep_embedding(t, dim, max_period=10000.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(temb, cout)
        self.norm2, self.conv2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class SpatialTransformer(nn.Module):
    """Self-attention over the h*w positions, then cross-attention to the
    context, as a latent-diffusion UNet's transformer block."""

    def __init__(self, c, context_dim, heads=4):
        super().__init__()
        self.norm = nn.GroupNorm(8, c)
        self.proj_in, self.proj_out = nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 1)
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.self_attn = nn.MultiheadAttention(c, heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(c, heads, kdim=context_dim, vdim=context_dim, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

    def forward(self, x, context):
        b, c, h, w = x.shape
        y = self.proj_in(self.norm(x)).flatten(2).transpose(1, 2)  # [b, hw, c]
        z = self.ln1(y)
        y = y + self.self_attn(z, z, z, need_weights=False)[0]
        y = y + self.cross_attn(self.ln2(y), context, context, need_weights=False)[0]
        y = y + self.ff(self.ln3(y))
        return x + self.proj_out(y.transpose(1, 2).reshape(b, c, h, w))


class DiffusionUNet(nn.Module):
    """latents [batch, 4, 32, 32], timestep [batch] (float), context
    [batch, 8, 64]; widths 32/64/64, attention at the two coarser levels."""

    def __init__(self, cin=4, widths=(32, 64, 64), context_dim=64):
        super().__init__()
        temb = widths[0] * 4
        self.temb = nn.Sequential(nn.Linear(widths[0], temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(cin, widths[0], 3, padding=1)
        self.down = nn.ModuleList()
        self.down_attn = nn.ModuleList()
        self.downsample = nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.down.append(ResBlock(c, w, temb))
            self.down_attn.append(SpatialTransformer(w, context_dim) if i > 0 else nn.Identity())
            self.downsample.append(nn.Conv2d(w, w, 3, stride=2, padding=1) if i < len(widths) - 1 else nn.Identity())
            c = w
        self.mid1, self.mid_attn, self.mid2 = ResBlock(c, c, temb), SpatialTransformer(c, context_dim), ResBlock(
            c, c, temb)
        self.up = nn.ModuleList()
        self.up_attn = nn.ModuleList()
        self.upsample = nn.ModuleList()
        for i, w in reversed(list(enumerate(widths))):
            self.up.append(ResBlock(c + w, w, temb))
            self.up_attn.append(SpatialTransformer(w, context_dim) if i > 0 else nn.Identity())
            self.upsample.append(nn.Conv2d(w, w, 3, padding=1) if i > 0 else nn.Identity())
            c = w
        self.norm_out, self.conv_out = nn.GroupNorm(8, c), nn.Conv2d(c, cin, 3, padding=1)

    def forward(self, latents, timestep, context):
        emb = self.temb(timestep_embedding(timestep, self.conv_in.out_channels))
        x = self.conv_in(latents)
        skips = []
        for res, attn, down in zip(self.down, self.down_attn, self.downsample):
            x = res(x, emb)
            x = attn(x, context) if isinstance(attn, SpatialTransformer) else x
            skips.append(x)
            x = down(x)
        x = self.mid2(self.mid_attn(self.mid1(x, emb), context), emb)
        for res, attn, up in zip(self.up, self.up_attn, self.upsample):
            x = res(torch.cat([x, skips.pop()], dim=1), emb)
            x = attn(x, context) if isinstance(attn, SpatialTransformer) else x
            if isinstance(up, nn.Conv2d):
                x = up(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        return self.conv_out(F.silu(self.norm_out(x)))


def cbs(cin, cout, k=1, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class C2f(nn.Module):
    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        self.c = cout // 2
        self.cv1, self.cv2 = cbs(cin, 2 * self.c), cbs((2 + n) * self.c, cout)
        self.m = nn.ModuleList([nn.Sequential(cbs(self.c, self.c, 3), cbs(self.c, self.c, 3)) for _ in range(n)])
        self.shortcut = shortcut

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]) if self.shortcut else m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class Sppf(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv1, self.cv2 = cbs(c, c // 2), cbs(c * 2, c)

    def forward(self, x):
        x = self.cv1(x)
        y1 = F.max_pool2d(x, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        return self.cv2(torch.cat([x, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))


class YoloDetector(nn.Module):
    """pixels [batch, 3, 256, 256] -> [batch, 4 * 16 + classes, anchors]:
    the distribution-focal box logits and class logits of the three levels
    (strides 8, 16, 32), concatenated as YOLOv8's export does before decoding."""

    def __init__(self, classes=20, w=(16, 32, 64, 128, 128)):
        super().__init__()
        self.stem = nn.Sequential(cbs(3, w[0], 3, 2), cbs(w[0], w[1], 3, 2), C2f(w[1], w[1]))
        self.p3 = nn.Sequential(cbs(w[1], w[2], 3, 2), C2f(w[2], w[2], 2))
        self.p4 = nn.Sequential(cbs(w[2], w[3], 3, 2), C2f(w[3], w[3], 2))
        self.p5 = nn.Sequential(cbs(w[3], w[4], 3, 2), C2f(w[4], w[4]), Sppf(w[4]))
        self.td4, self.td3 = C2f(w[4] + w[3], w[3], shortcut=False), C2f(w[3] + w[2], w[2], shortcut=False)
        self.down3, self.bu4 = cbs(w[2], w[2], 3, 2), C2f(w[2] + w[3], w[3], shortcut=False)
        self.down4, self.bu5 = cbs(w[3], w[3], 3, 2), C2f(w[3] + w[4], w[4], shortcut=False)
        self.no = 4 * 16 + classes
        self.box = nn.ModuleList([nn.Sequential(cbs(c, 32, 3), cbs(32, 32, 3), nn.Conv2d(32, 64, 1))
                                  for c in (w[2], w[3], w[4])])
        self.cls = nn.ModuleList([nn.Sequential(cbs(c, 32, 3), cbs(32, 32, 3), nn.Conv2d(32, classes, 1))
                                  for c in (w[2], w[3], w[4])])

    def forward(self, pixels):
        p3 = self.p3(self.stem(pixels))
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        t4 = self.td4(torch.cat([F.interpolate(p5, scale_factor=2.0, mode="nearest"), p4], 1))
        n3 = self.td3(torch.cat([F.interpolate(t4, scale_factor=2.0, mode="nearest"), p3], 1))
        n4 = self.bu4(torch.cat([self.down3(n3), t4], 1))
        n5 = self.bu5(torch.cat([self.down4(n4), p5], 1))
        outs = [torch.cat([self.box[i](x), self.cls[i](x)], 1) for i, x in enumerate((n3, n4, n5))]
        b = pixels.shape[0]
        return torch.cat([o.view(b, self.no, -1) for o in outs], 2)


class ClipLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) * (d // self.heads) ** -0.5 + mask
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.out(y)
        h = self.fc1(self.ln2(x))
        return x + self.fc2(h * torch.sigmoid(1.702 * h))  # QuickGELU


class ClipTextEncoder(nn.Module):
    """input_ids [batch, seq] -> last_hidden_state, text_embeds: width 256,
    4 heads, 4 layers, 77 positions; the pooled token is the one with the
    largest id in each row (CLIP's end-of-text token has the largest id)."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=4, positions=77, embed=128):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.layers = nn.ModuleList([ClipLayer(d, heads) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(d)
        self.projection = nn.Linear(d, embed, bias=False)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos(torch.arange(s, device=input_ids.device))[None]
        mask = torch.full((s, s), float("-inf"), device=x.device).triu(1)
        for layer in self.layers:
            x = layer(x, mask)
        x = self.ln_final(x)
        pooled = x[torch.arange(x.shape[0], device=x.device), input_ids.argmax(dim=-1)]
        return x, self.projection(pooled)


class Dlrm(nn.Module):
    """dense [batch, 13], sparse [batch, 8] ids (one per table), bag [batch, 4]
    ids summed by an EmbeddingBag -> the probabilities of 4 tasks [batch, 4]
    (click, like, share, follow: multi-task ranking)."""

    def __init__(self, dense=13, tables=8, vocab=1000, dim=16, tasks=4):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, 64), nn.ReLU(), nn.Linear(64, dim), nn.ReLU())
        self.emb = nn.ModuleList([nn.Embedding(vocab, dim) for _ in range(tables)])
        self.bag = nn.EmbeddingBag(vocab, dim, mode="sum")
        f = tables + 2
        li, lj = torch.triu_indices(f, f, 1)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)
        self.top = nn.Sequential(nn.Linear(dim + f * (f - 1) // 2, 64), nn.ReLU(), nn.Linear(64, tasks))

    def forward(self, dense, sparse, bag):
        x = self.bottom(dense)
        feats = [x] + [e(sparse[:, i]) for i, e in enumerate(self.emb)] + [self.bag(bag)]
        z = torch.stack(feats, 1)  # [batch, f, dim]
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.li, self.lj]
        return torch.sigmoid(self.top(torch.cat([x, inter], 1)))


def knn_indices(x, k):
    """[batch, c, n] -> [batch, n, k]: each point's k nearest neighbours
    (itself first) by squared distance, through one product and topk."""
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    sq = (x ** 2).sum(dim=1, keepdim=True)
    return (-sq - inner - sq.transpose(2, 1)).topk(k, dim=-1)[1]


def edge_features(x, idx):
    """[batch, c, n] and [batch, n, k] -> [batch, 2c, n, k]: each neighbour
    minus the point, beside the point, gathered by computed flat indices."""
    b, c, n = x.shape
    k = idx.shape[2]
    flat = (idx + torch.arange(b, device=x.device).view(-1, 1, 1) * n).view(-1)
    pts = x.transpose(2, 1).reshape(b * n, c)
    nb = pts[flat].view(b, n, k, c)
    center = x.transpose(2, 1).view(b, n, 1, c).expand(-1, -1, k, -1)
    return torch.cat([nb - center, center], 3).permute(0, 3, 1, 2)


class Dgcnn(nn.Module):
    """points [batch, 3, 256] -> logits [batch, 10]; the k = 8 nearest
    neighbours in space, found once (a fixed graph), two edge convolutions
    over it, global max pooling."""

    def __init__(self, k=8, classes=10):
        super().__init__()
        self.k = k
        self.ec1 = nn.Sequential(nn.Conv2d(6, 32, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.ec2 = nn.Sequential(nn.Conv2d(64, 32, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.fuse = nn.Sequential(nn.Conv1d(64, 128, 1, bias=False), nn.BatchNorm1d(128), nn.LeakyReLU(0.2))
        self.head = nn.Sequential(nn.Linear(128, 64), nn.LeakyReLU(0.2), nn.Linear(64, classes))

    def forward(self, points):
        idx = knn_indices(points, self.k)
        x1 = self.ec1(edge_features(points, idx)).max(dim=-1)[0]
        x2 = self.ec2(edge_features(x1, idx)).max(dim=-1)[0]
        x = self.fuse(torch.cat([x1, x2], 1)).max(dim=-1)[0]
        return self.head(x)


class Espcn(nn.Module):
    """luma [batch, 1, 64, 64] -> [batch, 1, 192, 192] (scale 3)."""

    def __init__(self, scale=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1),
                                  nn.Tanh(), nn.Conv2d(32, scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, luma):
        return self.body(luma)


class DcganGenerator(nn.Module):
    """latent [batch, 100, 1, 1] -> image [batch, 3, 64, 64]."""

    def __init__(self, nz=100, ngf=32):
        super().__init__()
        layers, c = [], nz
        for i, w in enumerate((ngf * 8, ngf * 4, ngf * 2, ngf)):
            layers += [nn.ConvTranspose2d(c, w, 4, 1 if i == 0 else 2, 0 if i == 0 else 1, bias=False),
                       nn.BatchNorm2d(w), nn.ReLU()]
            c = w
        layers += [nn.ConvTranspose2d(c, 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.body = nn.Sequential(*layers)

    def forward(self, latent):
        return self.body(latent)
