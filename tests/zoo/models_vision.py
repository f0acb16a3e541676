"""The zoo's own vision modules: small, seeded, nothing downloaded.

A UNet as segmentation tutorials write one (ConvTranspose2d and bilinear
upsampling, skip connections by concatenation), a MobileViT-style network
(MobileNetV2 blocks, then transformer blocks over patches unfolded and folded
back by reshape and transpose), an MLP-Mixer (token mixing by transpose and
Linear), and the raw outputs of a torchvision detector's backbone and head,
as deployments export them (the anchor decoding and NMS that follow depend on
the data and run outside the graph).
"""
import torch
from torch import nn
import torch.nn.functional as F


def conv_bn_relu(cin, cout, k=3, stride=1, groups=1, act=nn.ReLU):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), act())


class UNetBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(conv_bn_relu(cin, cout), conv_bn_relu(cout, cout))

    def forward(self, x):
        return self.body(x)


class UNet(nn.Module):
    """The UNet of segmentation tutorials at base width 16 over four levels:
    double 3x3 conv blocks, max pooling down, the two deeper up steps by
    ConvTranspose2d (stride 2) and the two shallower by bilinear upsampling
    (align_corners=True, as the milesial/Pytorch-UNet 'bilinear' variant) and
    a 1x1 conv, each concatenated with the skip of its level."""

    def __init__(self, channels=3, classes=2, base=16):
        super().__init__()
        w = [base, base * 2, base * 4, base * 8, base * 16]
        self.inc = UNetBlock(channels, w[0])
        self.down = nn.ModuleList([UNetBlock(w[i], w[i + 1]) for i in range(4)])
        self.up_t = nn.ModuleList([nn.ConvTranspose2d(w[4], w[3], 2, stride=2),
                                   nn.ConvTranspose2d(w[3], w[2], 2, stride=2)])
        self.up_b = nn.ModuleList([nn.Conv2d(w[2], w[1], 1), nn.Conv2d(w[1], w[0], 1)])
        self.dec = nn.ModuleList([UNetBlock(w[4 - i], w[3 - i]) for i in range(4)])
        self.head = nn.Conv2d(w[0], classes, 1)

    def forward(self, pixels):
        skips = [self.inc(pixels)]
        for d in self.down:
            skips.append(d(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for i in range(4):
            if i < 2:
                x = self.up_t[i](x)
            else:
                x = self.up_b[i - 2](F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=True))
            x = self.dec[i](torch.cat([skips.pop(), x], dim=1))
        return self.head(x)


class InvertedResidual(nn.Module):  # MobileNetV2's block with SiLU, as MobileViT uses it
    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.body = nn.Sequential(conv_bn_relu(cin, mid, 1, act=nn.SiLU),
                                  conv_bn_relu(mid, mid, 3, stride, groups=mid, act=nn.SiLU),
                                  nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.body(x)
        return x + y if self.use_res else y


class MobileVitBlock(nn.Module):
    """MobileViT's block: local 3x3 and 1x1 convs, the map unfolded into
    2x2 patches ([b, d, H, W] -> [b*4, H*W/4, d] by reshape and transpose, as
    Apple's and transformers' code does it), pre-LN transformer layers over
    the patches, folded back, a 1x1 conv, concatenated with the input and
    fused by a 3x3 conv."""

    def __init__(self, cin, dim, layers, heads=4, patch=2):
        super().__init__()
        self.patch = patch
        self.local = nn.Sequential(conv_bn_relu(cin, cin, 3, act=nn.SiLU), nn.Conv2d(cin, dim, 1, bias=False))
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.transformer = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.proj = conv_bn_relu(dim, cin, 1, act=nn.SiLU)
        self.fuse = conv_bn_relu(2 * cin, cin, 3, act=nn.SiLU)

    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.patch
        nh, nw = h // p, w // p
        # [b, d, nh, p, nw, p] -> [b, p, p, nh, nw, d] -> [b*p*p, nh*nw, d]
        t = y.reshape(b, d, nh, p, nw, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, nh * nw, d)
        t = self.norm(self.transformer(t))
        y = t.reshape(b, p, p, nh, nw, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.proj(y)], dim=1))


class MobileVit(nn.Module):
    """MobileViT-XXS's layout at reduced depth: a stride-2 stem, MobileNetV2
    blocks down to stride 8, two MobileViT blocks (at strides 8 and 16), a
    1x1 conv, global average pooling and a linear classifier."""

    def __init__(self, classes=1000):
        super().__init__()
        self.stem = conv_bn_relu(3, 16, 3, 2, act=nn.SiLU)
        self.mv2 = nn.Sequential(InvertedResidual(16, 16, 1), InvertedResidual(16, 24, 2),
                                 InvertedResidual(24, 24, 1), InvertedResidual(24, 48, 2))
        self.vit1 = MobileVitBlock(48, 64, 2)
        self.down = InvertedResidual(48, 64, 2)
        self.vit2 = MobileVitBlock(64, 80, 2)
        self.exp = conv_bn_relu(64, 256, 1, act=nn.SiLU)
        self.fc = nn.Linear(256, classes)

    def forward(self, pixels):
        x = self.vit1(self.mv2(self.stem(pixels)))
        x = self.exp(self.vit2(self.down(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class MixerLayer(nn.Module):
    def __init__(self, tokens, dim, token_hidden, channel_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, token_hidden), nn.GELU(), nn.Linear(token_hidden, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, channel_hidden), nn.GELU(), nn.Linear(channel_hidden, dim))

    def forward(self, x):  # [b, tokens, dim]
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class MlpMixer(nn.Module):
    """MLP-Mixer (timm's mixer_s16 layout at 4 layers of 256): 16x16 patches
    by a strided conv, token-mixing MLPs across the 196 patches (transpose,
    Linear, transpose back), channel-mixing MLPs, mean over tokens."""

    def __init__(self, image=224, patch=16, dim=256, layers=4, classes=1000):
        super().__init__()
        tokens = (image // patch) ** 2
        self.stem = nn.Conv2d(3, dim, patch, patch)
        self.layers = nn.Sequential(*[MixerLayer(tokens, dim, dim // 2, dim * 4) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, pixels):
        x = self.stem(pixels).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.layers(x)).mean(dim=1))


class DetectorHeads(nn.Module):
    """A torchvision detector's backbone and head, without its transform
    (resizing to a size the data decides) and postprocessing (anchor decoding,
    score thresholds and NMS, whose output sizes depend on the data): the raw
    per-anchor class logits and box regressions over every feature level, as
    deployments export a detector and decode outside the graph."""

    def __init__(self, builder, **kw):
        super().__init__()
        import torchvision
        det = getattr(torchvision.models.detection, builder)(weights=None, weights_backbone=None, **kw)
        self.backbone, self.head = det.backbone, det.head

    def forward(self, pixels):
        feats = self.backbone(pixels)
        feats = list(feats.values()) if isinstance(feats, dict) else [feats]
        out = self.head(feats)
        return tuple(out[k] for k in sorted(out))
