"""The zoo's decoder-only language models beyond GPT-2 and Llama, written as
transformers writes them (small widths, seeded, nothing downloaded):

- MistralDecoder: Mistral/Qwen2's structure (grouped-query attention with
  repeat_kv, rotary embeddings, RMSNorm, SwiGLU) with a padding mask input,
  positions from the mask's cumsum, and a sliding-window causal mask built
  in forward by tril/triu and masked_fill.
- KvCacheDecoder: one decoding step with a key/value cache: each layer's past
  keys and values are inputs of a run-time length, concatenated with the new
  tokens' and returned as present keys and values (several outputs of dynamic
  dims); rotary positions and the causal mask are offset by the past length
  (tril with a computed diagonal).
- AlibiDecoder: BLOOM's structure (fused query_key_value, LayerNorm after the
  embeddings, baddbmm attention scores) with ALiBi biases built from arange:
  per-head slopes by pow, positions from the mask's cumsum, MPT's distance
  matrix for the causal part.
- MoeDecoder: Mixtral's sparse mixture-of-experts block (router softmax,
  topk(2), weights renormalised, experts applied to the tokens one_hot and
  torch.where route to them, gathered and summed back by index_add_).
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

from models import RmsNorm, rotate_half


def rotary(positions, head_dim, theta=10000.0):
    """cos, sin [b, 1, s, head_dim] for positions [b, s] (floats)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = positions[:, :, None] * inv_freq[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[:, None], emb.sin()[:, None]


def repeat_kv(x, n):  # [b, kv, s, d] -> [b, kv * n, s, d], as transformers' repeat_kv
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)


class GqaAttention(nn.Module):
    """Mistral's attention: q, k, v projections (Qwen2 has their biases),
    rotary, repeat_kv, an additive mask; returns the keys and values too."""

    def __init__(self, dim, heads, kv_heads, bias=False):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q_proj = nn.Linear(dim, heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(dim, kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(dim, kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(heads * self.head_dim, dim, bias=False)

    def forward(self, x, cos, sin, mask, past=None):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        n = self.heads // self.kv_heads
        w = torch.matmul(q, repeat_kv(k, n).transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        w = torch.softmax(w, dim=-1, dtype=torch.float32)
        out = torch.matmul(w, repeat_kv(v, n)).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out), (k, v)


class SwiGlu(nn.Module):
    def __init__(self, dim, inter):
        super().__init__()
        self.gate_proj = nn.Linear(dim, inter, bias=False)
        self.up_proj = nn.Linear(dim, inter, bias=False)
        self.down_proj = nn.Linear(inter, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim, heads, kv_heads, inter, bias=False, mlp=None):
        super().__init__()
        self.input_layernorm = RmsNorm(dim)
        self.self_attn = GqaAttention(dim, heads, kv_heads, bias)
        self.post_attention_layernorm = RmsNorm(dim)
        self.mlp = mlp if mlp is not None else SwiGlu(dim, inter)

    def forward(self, x, cos, sin, mask, past=None):
        h, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x)), present


class MistralDecoder(nn.Module):
    """Mistral at 2 layers of 128 (8 query heads over 2 key/value heads,
    Qwen2's q/k/v biases), a sliding window of 8 tokens: a key is seen when
    it is at most 7 tokens before the query, not after it, and not padding."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=8, kv_heads=2, inter=256, window=8):
        super().__init__()
        self.window = window
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([DecoderLayer(dim, heads, kv_heads, inter, bias=True) for _ in range(layers)])
        self.norm = RmsNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        x = self.embed_tokens(input_ids)
        # transformers: positions count the real tokens; padding gets position 1.
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids = position_ids.masked_fill(attention_mask == 0, 1)
        cos, sin = rotary(position_ids.float(), self.layers[0].self_attn.head_dim)
        ones = torch.ones(s, s, dtype=torch.bool, device=x.device)
        allowed = torch.tril(ones) & ~torch.tril(ones, diagonal=-self.window)
        allowed = allowed[None, None] & attention_mask[:, None, None, :].bool()
        mask = torch.zeros(b, 1, s, s, dtype=x.dtype).masked_fill(~allowed, torch.finfo(x.dtype).min)
        for layer in self.layers:
            x, _ = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


class KvCacheDecoder(nn.Module):
    """A Llama/Mistral decoding step at 2 layers of 128 (8 heads over 2
    key/value heads): new tokens input_ids [b, seq], per layer past keys and
    values [b, 2, past, 16]; outputs the logits and per layer the present
    keys and values [b, 2, past + seq, 16]."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=8, kv_heads=2, inter=256):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([DecoderLayer(dim, heads, kv_heads, inter) for _ in range(layers)])
        self.norm = RmsNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        pasts = [(past_key_0, past_value_0), (past_key_1, past_value_1)]
        b, s = input_ids.shape
        p = past_key_0.shape[2]
        x = self.embed_tokens(input_ids)
        positions = torch.arange(p, p + s, device=x.device).float()[None].expand(b, s)
        cos, sin = rotary(positions, self.layers[0].self_attn.head_dim)
        allowed = torch.ones(s, p + s, dtype=torch.bool, device=x.device).tril(diagonal=p)
        mask = torch.zeros(s, p + s, dtype=x.dtype).masked_fill(~allowed, torch.finfo(x.dtype).min)[None, None]
        presents = []
        for layer, past in zip(self.layers, pasts):
            x, present = layer(x, cos, sin, mask, past)
            presents += list(present)
        return (self.lm_head(self.norm(x)),) + tuple(presents)


def alibi_slopes(heads):
    """BLOOM's per-head slopes: 2^(-8 i / n) for n a power of two, the
    interleaved extra slopes otherwise; computed in the graph from arange."""
    closest = 2 ** math.floor(math.log2(heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        extra = min(closest, heads - closest)
        slopes = torch.cat([slopes, torch.pow(extra_base, torch.arange(1, 1 + 2 * extra, 2, dtype=torch.int32))])
    return slopes


class BloomBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.input_layernorm = nn.LayerNorm(dim)
        self.query_key_value = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)
        self.post_attention_layernorm = nn.LayerNorm(dim)
        self.dense_h_to_4h = nn.Linear(dim, 4 * dim)
        self.dense_4h_to_h = nn.Linear(4 * dim, dim)

    def forward(self, x, alibi, mask):  # alibi [b * heads, 1 or s, s], mask [b, 1, s, s] bool (True: masked)
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        qkv = self.query_key_value(h).view(b, s, self.heads, 3, self.head_dim)
        q = qkv[..., 0, :].transpose(1, 2).reshape(b * self.heads, s, self.head_dim)
        k = qkv[..., 1, :].permute(0, 2, 3, 1).reshape(b * self.heads, self.head_dim, s)
        v = qkv[..., 2, :].transpose(1, 2).reshape(b * self.heads, s, self.head_dim)
        scores = alibi.baddbmm(batch1=q, batch2=k, beta=1.0, alpha=1.0 / math.sqrt(self.head_dim))
        scores = scores.view(b, self.heads, s, s).masked_fill(mask, torch.finfo(x.dtype).min)
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).view(b * self.heads, s, s)
        ctx = torch.bmm(probs, v).view(b, self.heads, s, self.head_dim).permute(0, 2, 1, 3).reshape(b, s, -1)
        x = x + self.dense(ctx)
        h = self.post_attention_layernorm(x)
        g = self.dense_h_to_4h(h)
        g = g * 0.5 * (1.0 + torch.tanh(0.79788456 * g * (1 + 0.044715 * g * g)))  # bloom_gelu_forward
        return x + self.dense_4h_to_h(g)


class AlibiDecoder(nn.Module):
    """BLOOM at 2 layers of 96 with 6 heads (not a power of two: the extra
    slopes are taken too). Layers alternate between BLOOM's ALiBi (slope
    times the key's position among the real tokens, from the mask's cumsum)
    and MPT's (slope times minus the key-query distance, from two aranges)."""

    def __init__(self, vocab=1000, dim=96, layers=2, heads=6):
        super().__init__()
        self.heads = heads
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.word_embeddings_layernorm = nn.LayerNorm(dim)
        self.h = nn.ModuleList([BloomBlock(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        x = self.word_embeddings_layernorm(self.word_embeddings(input_ids))
        slopes = alibi_slopes(self.heads)
        key_pos = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]  # build_alibi_tensor
        bloom = (slopes[None, :, None] * key_pos).reshape(b * self.heads, 1, s)
        dist = torch.arange(s, device=x.device)[None, :] - torch.arange(s, device=x.device)[:, None]
        mpt = (slopes[:, None, None] * -dist.abs()[None].float())[None].expand(b, self.heads, s, s)
        mpt = mpt.reshape(b * self.heads, s, s)
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=x.device), diagonal=1)
        mask = causal[None, None] | (attention_mask[:, None, None, :] == 0)
        for i, block in enumerate(self.h):
            x = block(x, bloom if i % 2 == 0 else mpt, mask)
        return F.linear(self.ln_f(x), self.word_embeddings.weight)


class MoeBlock(nn.Module):
    """Mixtral's MixtralSparseMoeBlock, written as transformers writes it."""

    def __init__(self, dim, inter, experts=4, top_k=2):
        super().__init__()
        self.experts_n, self.top_k = experts, top_k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList([SwiGlu(dim, inter) for _ in range(experts)])

    def forward(self, x):
        b, s, d = x.shape
        hidden = x.view(-1, d)
        router_logits = self.gate(hidden)
        weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        weights, selected = torch.topk(weights, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        final = torch.zeros((b * s, d), dtype=hidden.dtype, device=hidden.device)
        expert_mask = F.one_hot(selected, num_classes=self.experts_n).permute(2, 1, 0)
        for e in range(self.experts_n):
            idx, top_x = torch.where(expert_mask[e])
            current = hidden[None, top_x].reshape(-1, d)
            current = self.experts[e](current) * weights[top_x, idx, None]
            final.index_add_(0, top_x, current.to(hidden.dtype))
        return final.reshape(b, s, d)


class MoeDecoder(nn.Module):
    """Mixtral at 2 layers of 64 (4 heads over 2 key/value heads, causal),
    each MLP a sparse mixture of 4 SwiGLU experts, 2 per token."""

    def __init__(self, vocab=1000, dim=64, layers=2, heads=4, kv_heads=2, inter=128):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([DecoderLayer(dim, heads, kv_heads, inter, mlp=MoeBlock(dim, inter))
                                     for _ in range(layers)])
        self.norm = RmsNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.embed_tokens(input_ids)
        positions = torch.arange(s, device=x.device).float()[None].expand(b, s)
        cos, sin = rotary(positions, self.layers[0].self_attn.head_dim)
        mask = torch.triu(torch.full((s, s), torch.finfo(x.dtype).min, device=x.device), diagonal=1)[None, None]
        for layer in self.layers:
            x, _ = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))
