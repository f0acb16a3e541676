"""Small multi-node graphs the way exporters write transformer blocks at
opset 23+ (Attention, RMSNormalization, RotaryEmbedding next to MatMuls), so
the backends' partitions mix compiled nodes with reference fallbacks."""
import numpy as np
from onnx import TensorProto, helper

from common import graph_case, rng

F = TensorProto.FLOAT
mk = helper.make_node


def decoder_block(name, opset, seq, past=0, interleaved=0):
    """Pre-norm GQA decoder block: RMSNorm, Q/K/V projections, RoPE on Q and
    K (3-D, position ids), causal Attention (with a KV cache when past > 0),
    output projection and residual, then an RMSNorm + Swish MLP."""
    r = rng(name)
    hidden, heads, kv_heads, hd, max_pos = 16, 4, 2, 4, 16

    def w(*shape):
        return (r.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    ang = np.outer(np.arange(max_pos), 1.0 / 10000 ** (np.arange(hd // 2) / (hd // 2)))
    inits = {
        "norm1": (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32),
        "norm2": (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32),
        "wq": w(hidden, heads * hd), "wk": w(hidden, kv_heads * hd), "wv": w(hidden, kv_heads * hd),
        "wo": w(heads * hd, hidden), "w1": w(hidden, 32), "w2": w(32, hidden),
        "cos": np.cos(ang).astype(np.float32), "sin": np.sin(ang).astype(np.float32),
    }
    x = r.standard_normal((2, seq, hidden)).astype(np.float32)
    pos = np.tile(np.arange(past, past + seq, dtype=np.int64), (2, 1))
    inputs = [("x", x), ("position_ids", pos)]
    att_in = ["q_rot", "k_rot", "v"]
    att_out = ["attn"]
    outputs = [("y", F)]
    if past:
        inputs += [("past_key", r.standard_normal((2, kv_heads, past, hd)).astype(np.float32)),
                   ("past_value", r.standard_normal((2, kv_heads, past, hd)).astype(np.float32))]
        att_in += ["", "past_key", "past_value"]
        att_out += ["present_key", "present_value"]
        outputs += [("present_key", F), ("present_value", F)]
    nodes = [
        mk("RMSNormalization", ["x", "norm1"], ["h"], epsilon=1e-6),
        mk("MatMul", ["h", "wq"], ["q"]),
        mk("MatMul", ["h", "wk"], ["k"]),
        mk("MatMul", ["h", "wv"], ["v"]),
        mk("RotaryEmbedding", ["q", "cos", "sin", "position_ids"], ["q_rot"], num_heads=heads,
           interleaved=interleaved),
        mk("RotaryEmbedding", ["k", "cos", "sin", "position_ids"], ["k_rot"], num_heads=kv_heads,
           interleaved=interleaved),
        mk("Attention", att_in, att_out, is_causal=1, q_num_heads=heads, kv_num_heads=kv_heads),
        mk("MatMul", ["attn", "wo"], ["proj"]),
        mk("Add", ["x", "proj"], ["res"]),
        mk("RMSNormalization", ["res", "norm2"], ["h2"], epsilon=1e-6),
        mk("MatMul", ["h2", "w1"], ["up"]),
        mk("Swish", ["up"], ["act"]),
        mk("MatMul", ["act", "w2"], ["down"]),
        mk("Add", ["res", "down"], ["y"]),
    ]
    # Swish is opset 24 (and ONNX Runtime 1.30 runs it only there): else
    # spell it x * Sigmoid(x).
    if opset != 24:
        nodes[-3:-2] = [mk("Sigmoid", ["up"], ["sig"]), mk("Mul", ["up", "sig"], ["act"])]
    graph_case(name, opset, nodes, inputs, outputs, inits)


decoder_block("model_decoder_block23_prefill", 23, seq=5)
decoder_block("model_decoder_block24_decode_cache", 24, seq=1, past=4)
decoder_block("model_decoder_block25_interleaved_cache", 25, seq=3, past=2, interleaved=1)
