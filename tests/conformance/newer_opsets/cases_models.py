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


def control_flow_and_optionals():
    r = rng("control")
    vi = helper.make_tensor_value_info
    x = r.standard_normal((2, 3)).astype(np.float32)
    # If-24 whose branches hold opset-24 ops (Swish, RMSNormalization).
    then_g = helper.make_graph([mk("Swish", ["x"], ["t"], alpha=0.5)], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([mk("RMSNormalization", ["x", "s"], ["e"])], "else", [],
                               [vi("e", F, None)])
    for cond in (True, False):
        graph_case(f"if24_{'then' if cond else 'else'}", 24,
                   [mk("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                   [("c", np.array(cond)), ("x", x)], [("y", F)],
                   {"s": r.standard_normal(3).astype(np.float32)})
    # Loop-25: a loop-carried product and per-iteration scan outputs.
    body = helper.make_graph(
        [mk("Identity", ["cond_in"], ["cond_out"]), mk("Mul", ["acc_in", "x"], ["acc_out"]),
         mk("Add", ["acc_out", "x"], ["scan_out"])], "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F, None)],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, None), vi("scan_out", F, None)])
    graph_case("loop25", 25, [mk("Loop", ["n", "", "acc0"], ["acc", "scans"], body=body)],
               [("n", np.array(3, np.int64)), ("acc0", np.ones((2, 3), np.float32)), ("x", x)],
               [("acc", F), ("scans", F)], {})
    # OptionalHasElement / OptionalGetElement-18 take a plain tensor too.
    graph_case("optional_has_element18_tensor", 18, [mk("OptionalHasElement", ["x"], ["y"])],
               [("x", x)], [("y", TensorProto.BOOL)], {})
    graph_case("optional_get_element18_tensor", 18, [mk("OptionalGetElement", ["x"], ["y"])],
               [("x", x)], [("y", F)], {})


control_flow_and_optionals()
