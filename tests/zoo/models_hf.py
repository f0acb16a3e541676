"""Hugging Face architectures the zoo lacked, written in plain PyTorch with the
op patterns of transformers' own modeling files (small widths, seeded,
nothing downloaded):

- FalconDecoder: Falcon-7B's layout: one LayerNorm feeding attention and MLP
  in parallel, multi-query attention (a fused query_key_value viewed as
  heads + 2, K and V picked by index [-2] and [-1], one K/V head broadcast
  over the query heads by MatMul), rotary, exact GELU, tied LM head.
- Gemma2Decoder: Gemma-2's: embeddings scaled by sqrt(dim), RMSNorm times
  (1 + weight) computed in float, pre and post norms around attention and
  MLP, GQA with a head_dim of its own and query_pre_attn_scalar, attention
  logits soft-capped by tanh, sliding-window layers alternating with global
  ones, GeGLU with GELU-tanh, tied LM head, final logit soft-capping.
- NeoxDecoder: GPT-NeoX/Pythia's: fused query_key_value viewed [b, s, heads,
  3 * head_dim] and sliced, partial rotary (the first quarter of each head
  rotated, the rest concatenated back), parallel residual from two
  LayerNorms, causal mask by a bool tril and torch.where.
- T5Seq2Seq: T5 v1.1's encoder-decoder: bidirectional relative buckets in
  the encoder, unidirectional ones (-min(rel, 0)) in the decoder, each
  computed in the graph, the causal mask, cross-attention over the encoder
  output, gated-GELU (tanh) MLP, untied LM head.
- XlnetEncoder: XLNet's relative attention in [seq, batch] layout: sinusoid
  embeddings of arange(klen, -qlen, -1), content and position scores by
  einsum with the r_w/r_r biases, the relative shift rel_shift_bnij
  (reshape, drop a row, reshape, index_select by arange), post-LN blocks.
- RwkvLm: RWKV-4's: token shift by ZeroPad2d((0, 0, 1, -1)) (a Pad with a
  negative pad), time-mix interpolations, the WKV recurrence written in its
  parallel form (decay (t - 1 - i) * -exp(time_decay) over an arange grid,
  time_first on the diagonal, max-stabilised exp sums), channel mixing with
  squared ReLU, sigmoid receptance.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

from models import rotate_half


def rope(s, dim, theta=10000.0):
    """cos, sin [1, 1, s, dim] for positions arange(s), as transformers' rotary embedding."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    freqs = torch.arange(s, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[None, None], emb.sin()[None, None]


class FalconBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.input_layernorm = nn.LayerNorm(dim)
        self.query_key_value = nn.Linear(dim, dim + 2 * self.head_dim, bias=False)
        self.dense = nn.Linear(dim, dim, bias=False)
        self.dense_h_to_4h = nn.Linear(dim, 4 * dim, bias=False)
        self.dense_4h_to_h = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        fused = self.query_key_value(h).view(b, s, self.heads + 2, self.head_dim)
        q, k, v = fused[..., :-2, :], fused[..., [-2], :], fused[..., [-1], :]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # k, v [b, 1, s, d]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask, dim=-1, dtype=torch.float32)
        ctx = (probs @ v).transpose(1, 2).reshape(b, s, -1)
        return x + self.dense(ctx) + self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(h)))


class FalconDecoder(nn.Module):
    """Falcon-7B's structure at 2 layers of 128, 8 query heads and one K/V head."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=8):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.h = nn.ModuleList([FalconBlock(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids):
        s = input_ids.size(1)
        x = self.word_embeddings(input_ids)
        cos, sin = rope(s, self.h[0].head_dim)
        causal = torch.ones(s, s, dtype=torch.bool).triu(1)
        mask = torch.zeros(s, s).masked_fill(causal, torch.finfo(x.dtype).min)[None, None]
        for block in self.h:
            x = block(x, cos, sin, mask)
        return F.linear(self.ln_f(x), self.word_embeddings.weight)


class GemmaRmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim) * 0.1)  # Gemma starts at zeros: scale is 1 + weight

    def forward(self, x):
        out = x.float()
        out = out * torch.rsqrt(out.pow(2).mean(-1, keepdim=True) + self.eps)
        return (out * (1.0 + self.weight.float())).type_as(x)


class Gemma2Layer(nn.Module):
    def __init__(self, dim, heads, kv_heads, head_dim, inter, softcap, pre_attn_scalar):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.softcap = heads, kv_heads, head_dim, softcap
        self.scaling = pre_attn_scalar ** -0.5
        self.q_proj = nn.Linear(dim, heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(heads * head_dim, dim, bias=False)
        self.gate_proj = nn.Linear(dim, inter, bias=False)
        self.up_proj = nn.Linear(dim, inter, bias=False)
        self.down_proj = nn.Linear(inter, dim, bias=False)
        self.input_layernorm = GemmaRmsNorm(dim)
        self.post_attention_layernorm = GemmaRmsNorm(dim)
        self.pre_feedforward_layernorm = GemmaRmsNorm(dim)
        self.post_feedforward_layernorm = GemmaRmsNorm(dim)

    def attention(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, n, s, self.head_dim).reshape(b, self.heads, s, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, n, s, self.head_dim).reshape(b, self.heads, s, self.head_dim)
        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        w = torch.tanh(w / self.softcap) * self.softcap
        w = F.softmax(w + mask, dim=-1, dtype=torch.float32).to(q.dtype)
        return self.o_proj(torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1))

    def forward(self, x, cos, sin, mask):
        x = x + self.post_attention_layernorm(self.attention(self.input_layernorm(x), cos, sin, mask))
        h = self.pre_feedforward_layernorm(x)
        h = self.down_proj(F.gelu(self.gate_proj(h), approximate="tanh") * self.up_proj(h))
        return x + self.post_feedforward_layernorm(h)


class Gemma2Decoder(nn.Module):
    """Gemma-2 at 2 layers of 128 (4 query heads over 2 K/V heads of 48,
    query_pre_attn_scalar 48), layer 0 a sliding window of 8 tokens, layer 1
    global; attention soft cap 50, final logit soft cap 30."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=4, kv_heads=2, head_dim=48, inter=256, window=8,
                 attn_softcap=50.0, final_softcap=30.0):
        super().__init__()
        self.window, self.final_softcap = window, final_softcap
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([Gemma2Layer(dim, heads, kv_heads, head_dim, inter, attn_softcap, head_dim)
                                     for _ in range(layers)])
        self.norm = GemmaRmsNorm(dim)

    def forward(self, input_ids):
        s = input_ids.size(1)
        x = self.embed_tokens(input_ids)
        x = x * torch.tensor(x.size(-1) ** 0.5, dtype=x.dtype)
        cos, sin = rope(s, self.layers[0].head_dim)
        min_value = torch.finfo(x.dtype).min
        causal = torch.full((s, s), min_value).triu(1)
        # Gemma-2's sliding window: keys more than `window` tokens back are masked too.
        window = torch.where(torch.tril(torch.ones(s, s, dtype=torch.bool), diagonal=-self.window),
                             torch.full((s, s), min_value), causal)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, (window if i % 2 == 0 else causal)[None, None])
        logits = F.linear(self.norm(x), self.embed_tokens.weight)
        return torch.tanh(logits / self.final_softcap) * self.final_softcap


class NeoxLayer(nn.Module):
    def __init__(self, dim, heads, rotary_pct):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.rotary_ndims = int(self.head_dim * rotary_pct)
        self.input_layernorm = nn.LayerNorm(dim)
        self.post_attention_layernorm = nn.LayerNorm(dim)
        self.query_key_value = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)
        self.dense_h_to_4h = nn.Linear(dim, 4 * dim)
        self.dense_4h_to_h = nn.Linear(4 * dim, dim)

    def attention(self, x, cos, sin, causal):
        b, s, _ = x.shape
        qkv = self.query_key_value(x).view(b, s, self.heads, 3 * self.head_dim)
        d, r = self.head_dim, self.rotary_ndims
        q = qkv[..., :d].permute(0, 2, 1, 3)
        k = qkv[..., d:2 * d].permute(0, 2, 1, 3)
        v = qkv[..., 2 * d:].permute(0, 2, 1, 3)
        q_rot, q_pass = q[..., :r], q[..., r:]
        k_rot, k_pass = k[..., :r], k[..., r:]
        q = torch.cat((q_rot * cos + rotate_half(q_rot) * sin, q_pass), dim=-1)
        k = torch.cat((k_rot * cos + rotate_half(k_rot) * sin, k_pass), dim=-1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype))
        probs = F.softmax(scores, dim=-1)
        return self.dense(torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, s, -1))

    def forward(self, x, cos, sin, causal):
        attn = self.attention(self.input_layernorm(x), cos, sin, causal)
        mlp = self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(self.post_attention_layernorm(x))))
        return mlp + attn + x


class NeoxDecoder(nn.Module):
    """Pythia's structure at 2 layers of 128, 4 heads of 32, rotary on 8 of them."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=4, rotary_pct=0.25):
        super().__init__()
        self.embed_in = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([NeoxLayer(dim, heads, rotary_pct) for _ in range(layers)])
        self.final_layer_norm = nn.LayerNorm(dim)
        self.embed_out = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        s = input_ids.size(1)
        x = self.embed_in(input_ids)
        cos, sin = rope(s, self.layers[0].rotary_ndims)
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool))[None, None]
        for layer in self.layers:
            x = layer(x, cos, sin, causal)
        return self.embed_out(self.final_layer_norm(x))


class T5Norm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.to(torch.float32).pow(2).mean(-1, keepdim=True) + self.eps))


def t5_bucket(rel, bidirectional, buckets, max_distance):
    """transformers' T5Attention._relative_position_bucket."""
    ret = 0
    if bidirectional:
        buckets //= 2
        ret = (rel > 0).to(torch.long) * buckets
        rel = torch.abs(rel)
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    exact = buckets // 2
    is_small = rel < exact
    large = exact + (torch.log(rel.float() / exact) / math.log(max_distance / exact)
                     * (buckets - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return ret + torch.where(is_small, rel, large)


class T5Attention(nn.Module):
    def __init__(self, dim, heads, buckets=0, bidirectional=True):
        super().__init__()
        self.heads, self.head_dim, self.buckets, self.bidirectional = heads, dim // heads, buckets, bidirectional
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        if buckets:
            self.relative_attention_bias = nn.Embedding(buckets, heads)

    def position_bias(self, qlen, klen):
        ctx = torch.arange(qlen, dtype=torch.long)[:, None]
        mem = torch.arange(klen, dtype=torch.long)[None, :]
        bucket = t5_bucket(mem - ctx, self.bidirectional, self.buckets, 128)
        return self.relative_attention_bias(bucket).permute(2, 0, 1)[None]

    def forward(self, x, kv, bias):
        b, s, _ = x.shape

        def shape(t):
            return t.view(b, -1, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = shape(self.q(x)), shape(self.k(kv)), shape(self.v(kv))
        w = torch.softmax((torch.matmul(q, k.transpose(3, 2)) + bias).float(), dim=-1).type_as(q)
        return self.o(torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1))


class T5GatedFf(nn.Module):
    def __init__(self, dim, ff):
        super().__init__()
        self.wi_0 = nn.Linear(dim, ff, bias=False)
        self.wi_1 = nn.Linear(dim, ff, bias=False)
        self.wo = nn.Linear(ff, dim, bias=False)

    def forward(self, x):
        return self.wo(F.gelu(self.wi_0(x), approximate="tanh") * self.wi_1(x))


class T5Seq2Seq(nn.Module):
    """T5 v1.1 (flan-t5) at 2 encoder and 2 decoder layers of 128, 4 heads,
    32 buckets; the bias tables live in the first layer of each stack."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=4, ff=256, buckets=32):
        super().__init__()
        self.shared = nn.Embedding(vocab, dim)
        self.enc_attn = nn.ModuleList([T5Attention(dim, heads, buckets if i == 0 else 0) for i in range(layers)])
        self.enc_ff = nn.ModuleList([T5GatedFf(dim, ff) for _ in range(layers)])
        self.enc_norms = nn.ModuleList([T5Norm(dim) for _ in range(2 * layers + 1)])
        self.dec_self = nn.ModuleList([T5Attention(dim, heads, buckets if i == 0 else 0, bidirectional=False)
                                       for i in range(layers)])
        self.dec_cross = nn.ModuleList([T5Attention(dim, heads) for _ in range(layers)])
        self.dec_ff = nn.ModuleList([T5GatedFf(dim, ff) for _ in range(layers)])
        self.dec_norms = nn.ModuleList([T5Norm(dim) for _ in range(3 * layers + 1)])
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        s, t = input_ids.size(1), decoder_input_ids.size(1)
        x = self.shared(input_ids)
        min_value = torch.finfo(x.dtype).min
        pad = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * min_value
        bias = self.enc_attn[0].position_bias(s, s) + pad
        n = self.enc_norms
        for i, (attn, ff) in enumerate(zip(self.enc_attn, self.enc_ff)):
            h = n[2 * i](x)
            x = x + attn(h, h, bias)
            x = x + ff(n[2 * i + 1](x))
        enc = n[-1](x)

        y = self.shared(decoder_input_ids)
        causal = torch.arange(t)[None, :] <= torch.arange(t)[:, None]
        causal = (1.0 - causal[None, None].to(y.dtype)) * min_value
        self_bias = self.dec_self[0].position_bias(t, t) + causal
        n = self.dec_norms
        for i, (attn, cross, ff) in enumerate(zip(self.dec_self, self.dec_cross, self.dec_ff)):
            h = n[3 * i](y)
            y = y + attn(h, h, self_bias)
            y = y + cross(n[3 * i + 1](y), enc, pad)
            y = y + ff(n[3 * i + 2](y))
        return self.lm_head(n[-1](y))


def rel_shift_bnij(x, klen):
    """XLNet's relative shift: [b, n, i, j] scores re-indexed so that column j
    holds relative distance i - j (reshape, drop the first row, reshape back)."""
    size = x.shape
    x = x.reshape(size[0], size[1], size[3], size[2])
    x = x[:, :, 1:, :]
    x = x.reshape(size[0], size[1], size[2], size[3] - 1)
    return torch.index_select(x, 3, torch.arange(klen, device=x.device, dtype=torch.long))


class XlnetLayer(nn.Module):
    def __init__(self, dim, heads, inner):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = 1 / (self.head_dim ** 0.5)
        for name in ("q", "k", "v", "o", "r"):
            setattr(self, name, nn.Parameter(torch.randn(dim, heads, self.head_dim) * 0.02))
        self.r_w_bias = nn.Parameter(torch.randn(heads, self.head_dim) * 0.02)
        self.r_r_bias = nn.Parameter(torch.randn(heads, self.head_dim) * 0.02)
        self.layer_norm = nn.LayerNorm(dim, eps=1e-12)
        self.layer_1 = nn.Linear(dim, inner)
        self.layer_2 = nn.Linear(inner, dim)
        self.ff_norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, h, pos_emb, mask):  # h [i, b, dim], pos_emb [2i, b, dim], mask [i, j, b, 1] (1: masked)
        q = torch.einsum("ibh,hnd->ibnd", h, self.q)
        k = torch.einsum("ibh,hnd->ibnd", h, self.k)
        v = torch.einsum("ibh,hnd->ibnd", h, self.v)
        r = torch.einsum("ibh,hnd->ibnd", pos_emb, self.r)
        ac = torch.einsum("ibnd,jbnd->bnij", q + self.r_w_bias, k)
        bd = torch.einsum("ibnd,jbnd->bnij", q + self.r_r_bias, r)
        bd = rel_shift_bnij(bd, klen=ac.shape[3])
        score = (ac + bd) * self.scale
        score = score - 1e30 * torch.einsum("ijbn->bnij", mask)
        prob = F.softmax(score, dim=3)
        vec = torch.einsum("bnij,jbnd->ibnd", prob, v)
        out = torch.einsum("ibnd,hnd->ibh", vec, self.o)
        h = self.layer_norm(out + h)
        return self.ff_norm(h + self.layer_2(F.gelu(self.layer_1(h))))


class XlnetEncoder(nn.Module):
    """XLNet at 2 layers of 128, 4 heads, bidirectional attention ("bi"), no
    memory, the padding mask as input; returns [b, s, dim]."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=4, inner=512):
        super().__init__()
        self.dim = dim
        self.word_embedding = nn.Embedding(vocab, dim)
        self.layer = nn.ModuleList([XlnetLayer(dim, heads, inner) for _ in range(layers)])

    def relative_positional_encoding(self, qlen, klen, bsz):
        freq_seq = torch.arange(0, self.dim, 2.0, dtype=torch.float)
        inv_freq = 1 / torch.pow(10000, (freq_seq / self.dim))
        pos_seq = torch.arange(klen, -qlen, -1.0)
        sinusoid = torch.einsum("i,d->id", pos_seq, inv_freq)
        pos_emb = torch.cat([torch.sin(sinusoid), torch.cos(sinusoid)], dim=-1)[:, None, :]
        return pos_emb.expand(-1, bsz, -1)

    def forward(self, input_ids, attention_mask):
        ids = input_ids.transpose(0, 1).contiguous()
        qlen, bsz = ids.shape
        input_mask = 1.0 - attention_mask.transpose(0, 1).contiguous().float()  # [j, b]
        data_mask = input_mask[None]  # [1, j, b]
        attn_mask = (data_mask[:, :, :, None] > 0).float()  # [1, j, b, 1]
        non_tgt_mask = -torch.eye(qlen, dtype=attn_mask.dtype)
        non_tgt_mask = ((attn_mask + non_tgt_mask[:, :, None, None]) > 0).to(attn_mask)  # [i, j, b, 1]
        h = self.word_embedding(ids)
        pos_emb = self.relative_positional_encoding(qlen, qlen, bsz)
        for layer in self.layer:
            h = layer(h, pos_emb, non_tgt_mask)
        return h.permute(1, 0, 2).contiguous()


class RwkvBlock(nn.Module):
    def __init__(self, dim, ffn, layer_id, layers):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        ratio = 1.0 - layer_id / layers
        ramp = torch.arange(dim, dtype=torch.float32) / dim
        self.time_decay = nn.Parameter(-5 + 8 * (torch.arange(dim) / (dim - 1)) ** (0.7 + 1.3 * ratio))
        self.time_first = nn.Parameter(torch.ones(dim) * math.log(0.3) + 0.5 * torch.randn(dim))
        self.time_mix_key = nn.Parameter(ramp ** ratio)
        self.time_mix_value = nn.Parameter(ramp ** ratio + 0.3 * ratio)
        self.time_mix_receptance = nn.Parameter(ramp ** (0.5 * ratio))
        self.key = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(dim, dim, bias=False)
        self.receptance = nn.Linear(dim, dim, bias=False)
        self.output = nn.Linear(dim, dim, bias=False)
        self.ffn_mix_key = nn.Parameter(ramp ** ratio)
        self.ffn_mix_receptance = nn.Parameter(ramp ** ratio)
        self.ffn_key = nn.Linear(dim, ffn, bias=False)
        self.ffn_receptance = nn.Linear(dim, dim, bias=False)
        self.ffn_value = nn.Linear(ffn, dim, bias=False)

    def wkv(self, k, v):
        """out[t] = (sum_{i<t} e^{(t-1-i) w + k_i} v_i + e^{u + k_t} v_t) / (the same without v),
        w = -exp(time_decay), u = time_first: the recurrence of
        rwkv_linear_attention_cpu, summed over a [t, i] grid, max-stabilised as it is."""
        s = k.size(1)
        t = torch.arange(s, dtype=torch.float32)
        dist = (t[:, None] - 1 - t[None, :])[:, :, None]  # [t, i, 1]
        w = -torch.exp(self.time_decay.float())
        expo = dist * w  # [t, i, c]
        expo = torch.where(dist < 0, torch.full_like(expo, -1e38), expo)
        expo = torch.where(dist == -1, self.time_first.float().expand_as(expo), expo)  # i == t
        e = expo[None] + k[:, None, :, :]  # [b, t, i, c]
        e = torch.exp(e - e.max(dim=2, keepdim=True)[0])
        return (e * v[:, None]).sum(2) / e.sum(2)

    def forward(self, x):
        h = self.ln1(x)
        shifted = self.time_shift(h)
        key = h * self.time_mix_key + shifted * (1 - self.time_mix_key)
        value = h * self.time_mix_value + shifted * (1 - self.time_mix_value)
        receptance = h * self.time_mix_receptance + shifted * (1 - self.time_mix_receptance)
        r = torch.sigmoid(self.receptance(receptance))
        x = x + self.output(r * self.wkv(self.key(key).float(), self.value(value).float()))
        h = self.ln2(x)
        shifted = self.time_shift(h)
        key = h * self.ffn_mix_key + shifted * (1 - self.ffn_mix_key)
        receptance = h * self.ffn_mix_receptance + shifted * (1 - self.ffn_mix_receptance)
        k = torch.square(torch.relu(self.ffn_key(key)))
        return x + torch.sigmoid(self.ffn_receptance(receptance)) * self.ffn_value(k)


class RwkvLm(nn.Module):
    """RWKV-4 at 2 layers of 64 (ffn 256): embeddings, pre_ln, blocks, ln_out, head."""

    def __init__(self, vocab=1000, dim=64, layers=2, ffn=256):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.pre_ln = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList([RwkvBlock(dim, ffn, i, layers) for i in range(layers)])
        self.ln_out = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        x = self.pre_ln(self.embeddings(input_ids))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_out(x))
