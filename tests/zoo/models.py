"""The zoo's own transformer modules: small, seeded, nothing downloaded.

transformers is not a dependency, so the encoders and decoders a user base
exports from it are written here with the same layer structure (the ops the
exporters see are what matters, not the trained weights): a BERT encoder,
a GPT-2 decoder, a Llama decoder (rotary embeddings, RMSNorm, SwiGLU,
grouped-query attention), a Whisper-style audio encoder (two Conv1d, then
pre-LN blocks), a T5 encoder (relative position buckets, T5's RMS norm) and
an LSTM tagger. Sizes are small so that the CPU part of the zoo fits in CI.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split(self, x):  # [b, s, h] -> [b, heads, s, d]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), -1)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, inter)
        self.output = nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.attn_norm(x + self.attn_out(self.attention(x, mask_bias)))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    """BERT-base's structure at 4 layers of 128: word, position and token-type
    embeddings, post-LN blocks with exact GELU, the padding mask as an additive
    bias, and the tanh pooler on the first token."""

    def __init__(self, vocab=1000, hidden=128, layers=4, heads=4, inter=512, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, inter) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


def gelu_new(x):  # GPT-2's tanh approximation, as transformers writes it
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Block(nn.Module):
    def __init__(self, dim, heads, max_pos):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)  # fused QKV, split after
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)
        self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool)).view(
            1, 1, max_pos, max_pos), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        causal = self.bias[:, :, :s, :s]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        a = torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.c_proj(a)
        return x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))


class Gpt2Decoder(nn.Module):
    """GPT-2's structure at 4 layers of 128: learned positions, pre-LN blocks,
    fused QKV, the causal mask sliced from a lower-triangular buffer, GELU's
    tanh form, and the LM head tied to the token embedding."""

    def __init__(self, vocab=1000, dim=128, layers=4, heads=4, max_pos=256):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(max_pos, dim)
        self.h = nn.ModuleList([Gpt2Block(dim, heads, max_pos) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


class RmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q_proj = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, dim, bias=False)

    def repeat_kv(self, x):  # [b, kv, s, d] -> [b, heads, s, d], as transformers' repeat_kv
        b, kv, s, d = x.shape
        n = self.heads // self.kv_heads
        return x[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        w = torch.softmax(w.float(), dim=-1).to(q.dtype)
        return self.o_proj(torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1))


class LlamaLayer(nn.Module):
    def __init__(self, dim, heads, kv_heads, inter):
        super().__init__()
        self.input_layernorm = RmsNorm(dim)
        self.self_attn = LlamaAttention(dim, heads, kv_heads)
        self.post_attention_layernorm = RmsNorm(dim)
        self.gate_proj = nn.Linear(dim, inter, bias=False)
        self.up_proj = nn.Linear(dim, inter, bias=False)
        self.down_proj = nn.Linear(inter, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class LlamaDecoder(nn.Module):
    """Llama's structure at 4 layers of 128: RMSNorm, rotary position
    embeddings (cos/sin computed from the positions in the graph), SwiGLU
    MLP, grouped-query attention (8 query heads over 2 key/value heads), an
    additive causal mask, no biases, an untied LM head."""

    def __init__(self, vocab=1000, dim=128, layers=4, heads=8, kv_heads=2, inter=352, theta=10000.0):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([LlamaLayer(dim, heads, kv_heads, inter) for _ in range(layers)])
        self.norm = RmsNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // heads
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim)),
                             persistent=False)

    def forward(self, input_ids):
        s = input_ids.size(1)
        x = self.embed_tokens(input_ids)
        pos = torch.arange(s, device=input_ids.device).float()
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        mask = torch.triu(torch.full((s, s), torch.finfo(x.dtype).min, device=x.device), diagonal=1)[None, None]
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


def sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.self_attn_layer_norm = nn.LayerNorm(dim)
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.final_layer_norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.self_attn_layer_norm(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.final_layer_norm(x))))


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder at 4 layers of 128 over 80 mel bins: two
    Conv1d with GELU (the second halves the frames), sinusoidal positions
    sliced to the length, pre-LN blocks (torch's MultiheadAttention), a final
    LayerNorm."""

    def __init__(self, mels=80, dim=128, layers=4, heads=4, max_frames=1500):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, dim, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, kernel_size=3, stride=2, padding=1)
        self.register_buffer("embed_positions", sinusoids(max_frames, dim), persistent=False)
        self.layers = nn.ModuleList([WhisperLayer(dim, heads) for _ in range(layers)])
        self.layer_norm = nn.LayerNorm(dim)

    def forward(self, input_features):
        x = F.gelu(self.conv2(F.gelu(self.conv1(input_features)))).permute(0, 2, 1)
        x = x + self.embed_positions[: x.size(1)]
        for layer in self.layers:
            x = layer(x)
        return self.layer_norm(x)


class T5Norm(nn.Module):  # T5's LayerNorm: RMS, no bias, no mean
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class T5Encoder(nn.Module):
    """T5's encoder at 4 layers of 128: no positions in the embedding, a
    bucketed relative position bias computed in the graph (log buckets,
    bidirectional) shared by all layers, T5's RMS norm, ReLU MLP, no
    attention scaling, padding mask."""

    def __init__(self, vocab=1000, dim=128, layers=4, heads=4, ff=512, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.buckets, self.max_distance = heads, buckets, max_distance
        self.embed = nn.Embedding(vocab, dim)
        self.rel_bias = nn.Embedding(buckets, heads)
        self.q = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(layers)])
        self.k = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(layers)])
        self.v = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(layers)])
        self.o = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(layers)])
        self.wi = nn.ModuleList([nn.Linear(dim, ff, bias=False) for _ in range(layers)])
        self.wo = nn.ModuleList([nn.Linear(ff, dim, bias=False) for _ in range(layers)])
        self.ln1 = nn.ModuleList([T5Norm(dim) for _ in range(layers)])
        self.ln2 = nn.ModuleList([T5Norm(dim) for _ in range(layers)])
        self.final = T5Norm(dim)

    def bucket(self, rel):
        n = self.buckets // 2
        ret = (rel > 0).to(torch.long) * n
        rel = torch.abs(rel)
        exact = n // 2
        is_small = rel < exact
        large = exact + (torch.log(rel.float() / exact) / math.log(self.max_distance / exact)
                         * (n - exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, n - 1))
        return ret + torch.where(is_small, rel, large)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        x = self.embed(input_ids)
        ctx = torch.arange(s, dtype=torch.long, device=x.device)
        bias = self.rel_bias(self.bucket(ctx[None, :] - ctx[:, None])).permute(2, 0, 1)[None]
        bias = bias + (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        d = x.size(-1) // self.heads
        for i in range(len(self.q)):
            h = self.ln1[i](x)
            q, k, v = (p[i](h).view(b, s, self.heads, d).transpose(1, 2) for p in (self.q, self.k, self.v))
            w = torch.softmax(torch.matmul(q, k.transpose(3, 2)) + bias, dim=-1)
            x = x + self.o[i](torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1))
            x = x + self.wo[i](F.relu(self.wi[i](self.ln2[i](x))))
        return self.final(x)


class LstmTagger(nn.Module):
    """A sequence tagger as tutorials write one: embedding, a two-layer
    bidirectional LSTM, a linear head per token."""

    def __init__(self, vocab=1000, dim=64, hidden=96, tags=17):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, input_ids):
        return self.head(self.lstm(self.embed(input_ids))[0])


class GruClassifier(nn.Module):
    """A keyword-spotting style classifier: Conv1d front end over 40 mel bins,
    a GRU, mean over time, a linear head."""

    def __init__(self, mels=40, channels=64, hidden=128, classes=12):
        super().__init__()
        self.conv = nn.Conv1d(mels, channels, kernel_size=5, padding=2)
        self.norm = nn.BatchNorm1d(channels)
        self.gru = nn.GRU(channels, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, features):
        x = F.relu(self.norm(self.conv(features))).transpose(1, 2)
        return self.head(self.gru(x)[0].mean(dim=1))


class Wav2Vec2Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim, self.scale = heads, dim // heads, (dim // heads) ** -0.5
        self.q_proj, self.k_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.v_proj, self.out_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x):  # transformers' layout: [b*heads, s, d] and torch.bmm
        b, s, dim = x.shape
        def shape(t):
            return t.view(b, s, self.heads, self.head_dim).transpose(1, 2).reshape(b * self.heads, s, self.head_dim)
        q, k, v = shape(self.q_proj(x) * self.scale), shape(self.k_proj(x)), shape(self.v_proj(x))
        w = torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1)
        o = torch.bmm(w, v).view(b, self.heads, s, self.head_dim).transpose(1, 2).reshape(b, s, dim)
        return self.out_proj(o)


class Wav2Vec2Layer(nn.Module):
    def __init__(self, dim, heads, inter):
        super().__init__()
        self.attention = Wav2Vec2Attention(dim, heads)
        self.layer_norm = nn.LayerNorm(dim)
        self.intermediate = nn.Linear(dim, inter)
        self.output = nn.Linear(inter, dim)
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, x):  # post-LN, as wav2vec2-base
        x = self.layer_norm(x + self.attention(x))
        return self.final_layer_norm(x + self.output(F.gelu(self.intermediate(x))))


class Wav2Vec2Encoder(nn.Module):
    """wav2vec2-base's (and HuBERT's) structure at 4 layers of 128 over raw
    16 kHz audio: seven Conv1d feature extractors (kernels 10,3,3,3,3,2,2,
    strides 5,2,2,2,2,2,2: 20 ms a frame), GroupNorm with a group per channel
    after the first, GELU; a feature projection (LayerNorm, Linear); the
    convolutional relative position embedding (a grouped Conv1d of kernel 128
    with weight norm, its extra last frame dropped, GELU) added before the
    post-LN transformer layers."""

    def __init__(self, conv_dim=64, dim=128, layers=4, heads=4, inter=512, pos_kernel=128, pos_groups=16):
        super().__init__()
        kernels, strides = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)
        self.convs = nn.ModuleList([nn.Conv1d(1 if i == 0 else conv_dim, conv_dim, k, s, bias=False)
                                    for i, (k, s) in enumerate(zip(kernels, strides))])
        self.first_norm = nn.GroupNorm(conv_dim, conv_dim)
        self.feature_norm = nn.LayerNorm(conv_dim)
        self.projection = nn.Linear(conv_dim, dim)
        self.pos_conv = nn.utils.weight_norm(
            nn.Conv1d(dim, dim, pos_kernel, padding=pos_kernel // 2, groups=pos_groups), name="weight", dim=2)
        self.norm = nn.LayerNorm(dim)
        self.layers = nn.ModuleList([Wav2Vec2Layer(dim, heads, inter) for _ in range(layers)])

    def forward(self, input_values):
        x = input_values[:, None]
        for i, conv in enumerate(self.convs):
            x = conv(x)
            if i == 0:
                x = self.first_norm(x)
            x = F.gelu(x)
        x = self.projection(self.feature_norm(x.transpose(1, 2)))
        pos = self.pos_conv(x.transpose(1, 2))[:, :, :-1]  # SamePad: an even kernel makes one frame too many
        x = self.norm(x + F.gelu(pos).transpose(1, 2))
        for layer in self.layers:
            x = layer(x)
        return x


class BartAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim, self.scale = heads, dim // heads, (dim // heads) ** -0.5
        self.q_proj, self.k_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.v_proj, self.out_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x, kv, mask=None):
        b, t, dim = x.shape
        s = kv.size(1)
        q = (self.q_proj(x) * self.scale).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(kv).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(kv).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            w = w + mask
        o = torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, t, dim)
        return self.out_proj(o)


class BartDecoderLayer(nn.Module):
    def __init__(self, dim, heads, ff):
        super().__init__()
        self.self_attn, self.self_norm = BartAttention(dim, heads), nn.LayerNorm(dim)
        self.cross_attn, self.cross_norm = BartAttention(dim, heads), nn.LayerNorm(dim)
        self.fc1, self.fc2, self.final_norm = nn.Linear(dim, ff), nn.Linear(ff, dim), nn.LayerNorm(dim)

    def forward(self, x, enc, causal, enc_mask):
        x = self.self_norm(x + self.self_attn(x, x, causal))
        x = self.cross_norm(x + self.cross_attn(x, enc, enc_mask))
        return self.final_norm(x + self.fc2(F.gelu(self.fc1(x))))


class BartSeq2Seq(nn.Module):
    """BART's encoder-decoder at 2+2 layers of 128: shared token embedding,
    learned positions with BART's offset of 2, post-LN layers; the decoder's
    self-attention under a causal mask built in the graph, its cross-attention
    over the encoder's states under the encoder's padding mask; the LM head
    tied to the embedding. Inputs: source ids, their mask, decoder ids."""

    def __init__(self, vocab=1000, dim=128, layers=2, heads=4, ff=512, max_pos=512):
        super().__init__()
        self.shared = nn.Embedding(vocab, dim)
        self.enc_pos, self.dec_pos = nn.Embedding(max_pos + 2, dim), nn.Embedding(max_pos + 2, dim)
        self.enc_norm, self.dec_norm = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.encoder = nn.ModuleList([BertLayer(dim, heads, ff) for _ in range(layers)])
        self.decoder = nn.ModuleList([BartDecoderLayer(dim, heads, ff) for _ in range(layers)])

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        s, t = input_ids.size(1), decoder_input_ids.size(1)
        minimum = torch.finfo(torch.float32).min
        enc_mask = (1.0 - attention_mask[:, None, None, :].float()) * minimum
        x = self.enc_norm(self.shared(input_ids) + self.enc_pos(torch.arange(s, device=input_ids.device) + 2))
        for layer in self.encoder:
            x = layer(x, enc_mask)
        pos = torch.arange(t, device=input_ids.device)
        causal = torch.where(pos[None, :] > pos[:, None], torch.tensor(minimum), torch.tensor(0.0))[None, None]
        y = self.dec_norm(self.shared(decoder_input_ids) + self.dec_pos(pos + 2))
        for layer in self.decoder:
            y = layer(y, x, causal, enc_mask)
        return F.linear(y, self.shared.weight)
