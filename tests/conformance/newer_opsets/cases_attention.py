"""Attention (23, 24, 25), RMSNormalization (23), RotaryEmbedding (23), Swish (24)."""
import numpy as np
from onnx import TensorProto

from common import case, rng

F = TensorProto.FLOAT
H = TensorProto.FLOAT16


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def attention(name, opset, q, k, v, mask=None, past=None, nonpad=None, attrs=None, qk_out=False,
              present=False):
    r = rng(name)
    ins = [("Q", f32(r, *q)), ("K", f32(r, *k)), ("V", f32(r, *v))]
    extra = []
    if mask is not None:
        extra.append(("attn_mask", mask(r) if callable(mask) else mask))
    else:
        extra.append(("", None))
    if past is not None:
        extra += [("past_key", f32(r, *past[0])), ("past_value", f32(r, *past[1]))]
    else:
        extra += [("", None), ("", None)]
    if nonpad is not None:
        extra.append(("nonpad_kv_seqlen", np.array(nonpad, dtype=np.int64)))
    ins += extra
    while ins[-1][0] == "":
        ins.pop()
    dt = ins[0][1].dtype
    outs = [("Y", F)]
    outs += [("present_key", F), ("present_value", F)] if present else [("", 0), ("", 0)]
    if qk_out:
        outs.append(("qk_matmul_output", F))
    while outs[-1][0] == "":
        outs.pop()
    case(name, "Attention", opset, ins, outs, attrs)


# 4-D multi-head, no mask
attention("attention23_4d", 23, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5))
attention("attention23_4d_scale", 23, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4),
          attrs={"scale": 0.3})
attention("attention23_4d_causal", 23, (1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4),
          attrs={"is_causal": 1})
attention("attention23_4d_causal_cross", 23, (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4),
          attrs={"is_causal": 1})
# 3-D inputs with head counts; GQA and MQA
attention("attention23_3d", 23, (2, 4, 12), (2, 5, 12), (2, 5, 6),
          attrs={"q_num_heads": 3, "kv_num_heads": 3})
attention("attention23_3d_gqa", 23, (2, 4, 16), (2, 4, 8), (2, 4, 8),
          attrs={"q_num_heads": 4, "kv_num_heads": 2})
attention("attention23_4d_gqa", 23, (1, 6, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3))
attention("attention23_3d_mqa_causal", 23, (1, 4, 12), (1, 4, 4), (1, 4, 4),
          attrs={"q_num_heads": 3, "kv_num_heads": 1, "is_causal": 1})
# masks: bool and additive, broadcast shapes, a shorter last dim
attention("attention23_bool_mask", 23, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
          mask=lambda r: np.concatenate([np.ones((2, 1, 3, 1), bool),
                                         r.random((2, 1, 3, 4)) > 0.4], axis=-1))
attention("attention23_float_mask_2d", 23, (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4),
          mask=lambda r: r.standard_normal((3, 5)).astype(np.float32))
attention("attention23_float_mask_4d", 23, (2, 2, 3, 4), (2, 2, 4, 4), (2, 2, 4, 4),
          mask=lambda r: r.standard_normal((2, 2, 3, 4)).astype(np.float32))
# (A mask shorter than the keys, which the spec pads with -inf, is refused by
# ONNX Runtime 1.30, so it has no case here.)
attention("attention23_causal_float_mask", 23, (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 4, 4),
          mask=lambda r: r.standard_normal((4, 4)).astype(np.float32), attrs={"is_causal": 1})
attention("attention23_causal_bool_mask", 23, (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 4, 4),
          mask=lambda r: np.concatenate([np.ones((4, 1), bool), r.random((4, 3)) > 0.3], -1),
          attrs={"is_causal": 1})
# KV cache: past and present
attention("attention23_past", 23, (1, 2, 2, 4), (1, 2, 2, 4), (1, 2, 2, 3),
          past=((1, 2, 3, 4), (1, 2, 3, 3)), present=True)
attention("attention23_past_causal", 23, (2, 2, 2, 4), (2, 2, 2, 4), (2, 2, 2, 4),
          past=((2, 2, 3, 4), (2, 2, 3, 4)), present=True, attrs={"is_causal": 1})
attention("attention23_3d_past_gqa", 23, (1, 1, 8), (1, 1, 4), (1, 1, 4),
          past=((1, 1, 4, 4), (1, 1, 4, 4)), present=True,
          attrs={"q_num_heads": 2, "kv_num_heads": 1})
# softcap and the qk_matmul_output modes
attention("attention23_softcap", 23, (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
          attrs={"softcap": 0.8})
for mode in range(4):
    attention(f"attention23_qk_mode{mode}", 23, (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
              mask=lambda r: r.standard_normal((3, 4)).astype(np.float32), qk_out=True,
              attrs={"qk_matmul_output_mode": mode, "softcap": 2.0})
attention("attention23_softmax_precision", 23, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4),
          attrs={"softmax_precision": TensorProto.FLOAT})
attention("attention23_mask_3d_heads", 23, (2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 4),
          mask=lambda r: r.standard_normal((3, 2, 5)).astype(np.float32))
attention("attention23_bool_mask_masked_row", 23, (1, 1, 3, 4), (1, 1, 4, 4), (1, 1, 4, 4),
          mask=np.array([[True, False, True, True], [False] * 4, [True] * 4]))
attention("attention23_3d_causal_past", 23, (2, 2, 8), (2, 2, 8), (2, 2, 6),
          past=((2, 2, 3, 4), (2, 2, 3, 3)), present=True,
          attrs={"q_num_heads": 2, "kv_num_heads": 2, "is_causal": 1})
attention("attention23_4d_gqa_past_mask", 23, (1, 4, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4),
          past=((1, 2, 3, 4), (1, 2, 3, 4)), present=True,
          mask=lambda r: r.standard_normal((1, 1, 2, 5)).astype(np.float32), qk_out=True)
attention("attention23_softcap_mask_scale", 23, (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
          mask=lambda r: r.standard_normal((3, 4)).astype(np.float32),
          attrs={"softcap": 1.5, "scale": 0.9})
attention("attention23_4d_dv_differs", 23, (2, 1, 3, 5), (2, 1, 4, 5), (2, 1, 4, 2),
          attrs={"is_causal": 1})
# opset 24: nonpad_kv_seqlen
attention("attention24_nonpad", 24, (2, 2, 3, 4), (2, 2, 6, 4), (2, 2, 6, 4), nonpad=[4, 6])
attention("attention24_nonpad_causal", 24, (2, 2, 2, 4), (2, 2, 6, 4), (2, 2, 6, 4),
          nonpad=[4, 6], attrs={"is_causal": 1})
attention("attention24_nonpad_3d_mask", 24, (2, 3, 8), (2, 5, 8), (2, 5, 8), nonpad=[3, 5],
          mask=lambda r: r.standard_normal((3, 5)).astype(np.float32),
          attrs={"q_num_heads": 2, "kv_num_heads": 2})
attention("attention24_4d", 24, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), attrs={"is_causal": 1})
# (Opset 25's sliding window, left/right_window_size, is newer than ONNX
# Runtime 1.30's Attention schema: it refuses the attributes, so no case.)


# (No float16 Attention case: ONNX Runtime rounds Q.K and the softmax to
# float16 on the way, so its result is off the exact one by more than the
# conformance tolerance.)


# RMSNormalization-23
def rms(name, shape, axis=None, scale_shape=None, eps=None, dtype=np.float32):
    r = rng(name)
    x = r.standard_normal(shape).astype(dtype)
    a = -1 if axis is None else axis
    norm = shape[a % len(shape):]
    s = r.standard_normal(scale_shape if scale_shape is not None else norm).astype(dtype)
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if eps is not None:
        attrs["epsilon"] = eps
    case(name, "RMSNormalization", 23, [("X", x), ("scale", s)],
         [("Y", H if dtype == np.float16 else F)], attrs)


rms("rms_norm23_last", (2, 3, 8))
rms("rms_norm23_axis1", (2, 3, 4), axis=1)
rms("rms_norm23_axis_neg2_bcast_scale", (2, 3, 4), axis=-2, scale_shape=(4,))
rms("rms_norm23_eps", (3, 5), eps=0.5)
rms("rms_norm23_f16", (2, 6), dtype=np.float16)


# RotaryEmbedding-23
def rope(name, x_shape, interleaved=0, rot_dim=0, num_heads=None, with_pos=False, max_pos=16):
    r = rng(name)
    x = r.standard_normal(x_shape).astype(np.float32)
    if len(x_shape) == 4:
        b, _, s, hd = x_shape
    else:
        b, s, hidden = x_shape
        hd = hidden // num_heads
    half = (rot_dim or hd) // 2
    rows = (max_pos,) if with_pos else (b, s)
    ang = r.random(rows + (half,)) * 6.0
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    ins = [("X", x), ("cos_cache", cos), ("sin_cache", sin)]
    if with_pos:
        ins.append(("position_ids", r.integers(0, max_pos, (b, s)).astype(np.int64)))
    attrs = {"interleaved": interleaved}
    if rot_dim:
        attrs["rotary_embedding_dim"] = rot_dim
    if num_heads:
        attrs["num_heads"] = num_heads
    case(name, "RotaryEmbedding", 23, ins, [("Y", F)], attrs)


rope("rotary23_4d", (2, 3, 4, 8))
rope("rotary23_4d_interleaved", (1, 2, 3, 6), interleaved=1)
rope("rotary23_4d_pos", (2, 2, 3, 4), with_pos=True)
rope("rotary23_3d", (2, 3, 12), num_heads=2)
rope("rotary23_3d_interleaved_pos", (1, 4, 16), num_heads=2, interleaved=1, with_pos=True)
rope("rotary23_partial", (1, 2, 3, 8), rot_dim=4)
rope("rotary23_partial_interleaved_3d", (1, 3, 16), num_heads=2, rot_dim=4, interleaved=1,
     with_pos=True)


# Swish-24
def swish(name, alpha=None, dtype=np.float32):
    r = rng(name)
    # |alpha * x| stays below ~8: further out ONNX Runtime's fast logistic
    # loses relative accuracy on the tiny results.
    x = (r.standard_normal((3, 7)) * 2.5).astype(dtype)
    case(name, "Swish", 24, [("X", x)], [("Y", H if dtype == np.float16 else F)],
         {"alpha": alpha} if alpha is not None else {})


swish("swish24")
swish("swish24_alpha", alpha=1.702)
swish("swish24_alpha_neg", alpha=-0.5)
swish("swish24_f16", dtype=np.float16)
