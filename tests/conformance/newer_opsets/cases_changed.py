"""Existing ops whose semantics or signature changed in opsets 18-26, and a
few unchanged ones stamped with the newer opsets (their import path)."""
import numpy as np
from onnx import TensorProto

from common import NP_TO_ONNX, case, rng

F = TensorProto.FLOAT


def out(dtype):
    return NP_TO_ONNX[np.dtype(dtype)]


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


# AveragePool-19: dilations (22 only adds types)
for opset in (19, 22):
    r = rng(f"avgpool{opset}")
    case(f"average_pool{opset}_dilations", "AveragePool", opset, [("X", f32(r, 1, 2, 7, 7))],
         [("Y", F)], {"kernel_shape": [2, 2], "dilations": [2, 2]})
r = rng("avgpool19b")
case("average_pool19_dilations_pads_ceil", "AveragePool", 19, [("X", f32(r, 1, 1, 6, 7))],
     [("Y", F)], {"kernel_shape": [3, 2], "dilations": [2, 1], "pads": [1, 1, 1, 1],
                  "strides": [2, 2], "ceil_mode": 1, "count_include_pad": 1})
case("average_pool19_dilations_1d", "AveragePool", 19, [("X", f32(r, 1, 2, 9))], [("Y", F)],
     {"kernel_shape": [3], "dilations": [3]})


# Pad-18 axes, Pad-19 'wrap', Pad-21..25 (types only)
def pad(name, opset, x, pads, mode=None, value=None, axes=None):
    ins = [("data", x), ("pads", np.array(pads, dtype=np.int64))]
    ins.append(("constant_value", np.array(value, dtype=x.dtype)) if value is not None else ("", None))
    if axes is not None:
        ins.append(("axes", np.array(axes, dtype=np.int64)))
    while ins[-1][0] == "":
        ins.pop()
    case(name, "Pad", opset, ins, [("output", out(x.dtype))], {"mode": mode} if mode else {})


r = rng("pad")
pad("pad18_axes", 18, f32(r, 2, 3, 4), [1, 2, 0, 1], value=1.5, axes=[0, 2])
pad("pad19_wrap", 19, f32(r, 3, 4), [1, 2, 2, 3], mode="wrap")
pad("pad19_wrap_axes", 19, f32(r, 2, 3, 4), [2, 1], mode="wrap", axes=[-1])
pad("pad19_wrap_negative", 19, f32(r, 4, 5), [-1, 2, 1, -2], mode="wrap")
pad("pad21_reflect", 21, f32(r, 3, 4), [0, 2, 0, 1], mode="reflect")
pad("pad25_edge_int32", 25, r.integers(-9, 9, (3, 3)).astype(np.int32), [1, 1, 2, 0], mode="edge")


# Resize-18 (antialias, axes, keep_aspect_ratio_policy) and -19 (half_pixel_symmetric)
def resize(name, opset, x, scales=None, sizes=None, **attrs):
    ins = [("X", x), ("", None)]
    ins.append(("scales", np.array(scales, dtype=np.float32)) if scales is not None else ("", None))
    if sizes is not None:
        ins.append(("sizes", np.array(sizes, dtype=np.int64)))
    while ins[-1][0] == "":
        ins.pop()
    case(name, "Resize", opset, ins, [("Y", F)], attrs)


r = rng("resize")
resize("resize19_half_pixel_symmetric_up", 19, f32(r, 1, 1, 3, 4), scales=[1, 1, 2.5, 1.5],
       mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
resize("resize19_half_pixel_symmetric_down", 19, f32(r, 1, 1, 6, 7), sizes=[1, 1, 4, 3],
       mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
resize("resize19_half_pixel_symmetric_nearest", 19, f32(r, 1, 2, 3, 3), scales=[1, 1, 1.7, 2.4],
       mode="nearest", coordinate_transformation_mode="half_pixel_symmetric")
resize("resize18_antialias_linear", 18, f32(r, 1, 1, 8, 8), sizes=[1, 1, 3, 5], mode="linear",
       antialias=1)
resize("resize18_antialias_cubic", 18, f32(r, 1, 1, 7, 9), scales=[1, 1, 0.5, 0.6], mode="cubic",
       antialias=1)
resize("resize18_axes_sizes", 18, f32(r, 1, 2, 4, 6), sizes=[8, 3], axes=[2, 3], mode="nearest")
resize("resize18_keep_aspect_not_larger", 18, f32(r, 1, 1, 4, 6), sizes=[6, 6], axes=[2, 3],
       mode="linear", keep_aspect_ratio_policy="not_larger")
resize("resize18_keep_aspect_not_smaller", 18, f32(r, 1, 1, 4, 6), sizes=[6, 6], axes=[2, 3],
       mode="linear", keep_aspect_ratio_policy="not_smaller")


# QuantizeLinear / DequantizeLinear: 21 block_size and output_dtype, 23 precision
def dequantize(name, opset, x, scale, zp=None, **attrs):
    ins = [("x", x), ("x_scale", scale)]
    if zp is not None:
        ins.append(("x_zero_point", zp))
    case(name, "DequantizeLinear", opset, ins, [("y", out(scale.dtype))], attrs)


def quantize(name, opset, x, scale, zp=None, out_type=None, **attrs):
    ins = [("x", x), ("y_scale", scale)]
    if zp is not None:
        ins.append(("y_zero_point", zp))
    t = zp.dtype if zp is not None else (out_type or np.uint8)
    case(name, "QuantizeLinear", opset, ins, [("y", out(t))], attrs)


r = rng("quant")
dequantize("dequantize21_blocked", 21, r.integers(0, 255, (2, 6)).astype(np.uint8),
           (r.random((2, 3)) + 0.1).astype(np.float32),
           r.integers(0, 255, (2, 3)).astype(np.uint8), axis=1, block_size=2)
dequantize("dequantize21_blocked_axis0_ragged", 21, r.integers(-128, 127, (5, 3)).astype(np.int8),
           (r.random((2, 3)) + 0.1).astype(np.float32), axis=0, block_size=3)
dequantize("dequantize21_per_axis_int16", 21, r.integers(-999, 999, (3, 4)).astype(np.int16),
           (r.random((4,)) + 0.1).astype(np.float32), axis=1)
dequantize("dequantize23_blocked_3d", 23, r.integers(0, 255, (2, 4, 3)).astype(np.uint8),
           (r.random((2, 2, 3)) + 0.1).astype(np.float32),
           r.integers(0, 255, (2, 2, 3)).astype(np.uint8), axis=-2, block_size=2)
dequantize("dequantize25_per_tensor", 25, r.integers(0, 255, (3, 4)).astype(np.uint8),
           np.array(0.25, dtype=np.float32), np.array(7, dtype=np.uint8))
quantize("quantize21_blocked", 21, (r.standard_normal((3, 8)) * 20).astype(np.float32),
         (r.random((3, 2)) + 0.2).astype(np.float32), r.integers(0, 255, (3, 2)).astype(np.uint8),
         axis=1, block_size=4)
quantize("quantize21_blocked_int8_ragged", 21, (r.standard_normal((7, 2)) * 20).astype(np.float32),
         (r.random((3, 2)) + 0.2).astype(np.float32), r.integers(-9, 9, (3, 2)).astype(np.int8),
         axis=0, block_size=3)
quantize("quantize21_output_dtype_int8", 21, (r.standard_normal((4, 5)) * 50).astype(np.float32),
         np.array(0.5, dtype=np.float32), out_type=np.int8, output_dtype=TensorProto.INT8)
quantize("quantize21_output_dtype_uint16", 21, (r.standard_normal((4, 5)) * 5000).astype(np.float32),
         np.array(0.7, dtype=np.float32), out_type=np.uint16, output_dtype=TensorProto.UINT16)
quantize("quantize23_precision_f32", 23, (r.standard_normal((3, 4)) * 30).astype(np.float32),
         np.array(0.37, dtype=np.float32), np.array(3, dtype=np.uint8), precision=TensorProto.FLOAT)
quantize("quantize24_per_axis", 24, (r.standard_normal((2, 3, 2)) * 30).astype(np.float32),
         (r.random((3,)) + 0.2).astype(np.float32), r.integers(-5, 5, (3,)).astype(np.int8))


# ReduceMax / ReduceMin-20 on bool; 18 takes axes as an input
def reduce(name, op, opset, x, axes=None, **attrs):
    ins = [("data", x)]
    if axes is not None:
        ins.append(("axes", np.array(axes, dtype=np.int64)))
    case(name, op, opset, ins, [("reduced", out(x.dtype))], attrs)


r = rng("reduce")
reduce("reduce_max20_bool", "ReduceMax", 20, r.random((3, 4)) > 0.7, axes=[1])
reduce("reduce_min20_bool", "ReduceMin", 20, r.random((3, 4)) > 0.3, axes=[0], keepdims=0)
reduce("reduce_max20_bool_all", "ReduceMax", 20, r.random((2, 3)) > 0.9)
reduce("reduce_max20_float", "ReduceMax", 20, f32(r, 2, 3, 4), axes=[-1, 0])
reduce("reduce_min20_int32_noop", "ReduceMin", 20, r.integers(-9, 9, (2, 3)).astype(np.int32),
       axes=[], noop_with_empty_axes=1)
reduce("reduce_log_sum_exp18", "ReduceLogSumExp", 18, f32(r, 2, 3, 4), axes=[1])
reduce("reduce_sum_square18_keep0", "ReduceSumSquare", 18, f32(r, 2, 3), axes=[0], keepdims=0)
reduce("reduce_l2_18", "ReduceL2", 18, f32(r, 3, 4), axes=[1])


# TopK-24
def topk(name, x, k, **attrs):
    case(name, "TopK", 24, [("X", x), ("K", np.array([k], dtype=np.int64))],
         [("Values", out(x.dtype)), ("Indices", TensorProto.INT64)], attrs)


r = rng("topk")
topk("topk24_largest", f32(r, 3, 6), 3)
topk("topk24_smallest_axis0", f32(r, 5, 4), 2, axis=0, largest=0)
topk("topk24_ties_int64", r.integers(0, 4, (2, 8)).astype(np.int64), 5)
topk("topk24_f16", r.standard_normal((2, 5)).astype(np.float16), 2)


# Unchanged ops stamped with newer opsets
r = rng("misc")
x = f32(r, 2, 3, 4)
case("reshape25", "Reshape", 25, [("data", x), ("shape", np.array([4, -1], dtype=np.int64))],
     [("reshaped", F)])
case("transpose24", "Transpose", 24, [("data", x)], [("transposed", F)], {"perm": [2, 0, 1]})
case("flatten23", "Flatten", 23, [("input", x)], [("output", F)], {"axis": 2})
case("squeeze25", "Squeeze", 25, [("data", f32(r, 2, 1, 3)), ("axes", np.array([1], dtype=np.int64))],
     [("squeezed", F)])
case("unsqueeze24", "Unsqueeze", 24, [("data", x), ("axes", np.array([0, -1], dtype=np.int64))],
     [("expanded", F)])
case("shape25_start_end", "Shape", 25, [("data", x)], [("shape", TensorProto.INT64)],
     {"start": 1, "end": -1})
case("size25", "Size", 25, [("data", x)], [("size", TensorProto.INT64)])
case("cast25_f32_to_int32", "Cast", 25, [("input", (x * 10).astype(np.float32))],
     [("output", TensorProto.INT32)], {"to": TensorProto.INT32})
case("cast24_f32_to_f16", "Cast", 24, [("input", x)], [("output", TensorProto.FLOAT16)],
     {"to": TensorProto.FLOAT16})
case("castlike23", "CastLike", 23, [("input", x), ("target_type", np.zeros((1,), np.float64))],
     [("output", TensorProto.DOUBLE)])
case("identity25", "Identity", 25, [("input", x)], [("output", F)])
case("constant_of_shape25", "ConstantOfShape", 25, [("input", np.array([2, 3], dtype=np.int64))],
     [("output", TensorProto.INT32)],
     {"value": __import__("onnx").helper.make_tensor("value", TensorProto.INT32, [1], [7])})
case("gelu20_tanh", "Gelu", 20, [("X", f32(r, 3, 5))], [("Y", F)], {"approximate": "tanh"})
case("gelu20", "Gelu", 20, [("X", f32(r, 3, 5))], [("Y", F)])
case("isinf20", "IsInf", 20, [("X", np.array([1, np.inf, -np.inf, np.nan], np.float32))],
     [("Y", TensorProto.BOOL)], {"detect_negative": 0})
case("isnan20", "IsNaN", 20, [("X", np.array([1, np.inf, np.nan], np.float32))],
     [("Y", TensorProto.BOOL)])
case("mish22", "Mish", 22, [("X", f32(r, 4, 3))], [("Y", F)])
case("hard_swish22", "HardSwish", 22, [("X", f32(r, 4, 3) * 4)], [("Y", F)])
case("round22", "Round", 22, [("X", np.array([0.5, 1.5, -2.5, 2.4, -0.6], np.float32))], [("Y", F)])
case("conv22", "Conv", 22, [("X", f32(r, 1, 2, 5, 5)), ("W", f32(r, 3, 2, 3, 3))], [("Y", F)],
     {"pads": [1, 1, 1, 1]})
case("instance_norm22", "InstanceNormalization", 22,
     [("input", f32(r, 2, 3, 4)), ("scale", f32(r, 3)), ("B", f32(r, 3))], [("output", F)])
case("group_norm21", "GroupNormalization", 21,
     [("X", f32(r, 2, 4, 3)), ("scale", f32(r, 4)), ("bias", f32(r, 4))], [("Y", F)],
     {"num_groups": 2})
case("group_norm18", "GroupNormalization", 18,
     [("X", f32(r, 2, 4, 3)), ("scale", f32(r, 2)), ("bias", f32(r, 2))], [("Y", F)],
     {"num_groups": 2})
case("lp_pool18_ceil", "LpPool", 18, [("X", f32(r, 1, 2, 5, 5))], [("Y", F)],
     {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1, "p": 3})
case("split18_num_outputs", "Split", 18, [("input", f32(r, 7, 2))],
     [("a", F), ("b", F), ("c", F)], {"num_outputs": 3})
case("scatter_elements18_max", "ScatterElements", 18,
     [("data", f32(r, 3, 3)), ("indices", np.array([[1, 0, 2], [1, 1, 0]], np.int64)),
      ("updates", f32(r, 2, 3))], [("output", F)], {"axis": 0, "reduction": "max"})
case("scatter_nd18_min", "ScatterND", 18,
     [("data", f32(r, 4, 3)), ("indices", np.array([[1], [3], [1]], np.int64)),
      ("updates", f32(r, 3, 3))], [("output", F)], {"reduction": "min"})
case("bitwise_and18", "BitwiseAnd", 18,
     [("x", r.integers(-99, 99, (3, 4)).astype(np.int32)),
      ("y", r.integers(-99, 99, (4,)).astype(np.int32))], [("z", TensorProto.INT32)])
case("grid_sample20_linear", "GridSample", 20,
     [("X", f32(r, 1, 2, 4, 5)), ("grid", (r.random((1, 3, 3, 2)) * 2.4 - 1.2).astype(np.float32))],
     [("Y", F)], {"mode": "linear"})
# (Not cubic with border padding: ONNX Runtime, like PyTorch, clamps only
# the taps there, where the ONNX reference clamps the coordinate first.)
case("grid_sample20_cubic_align", "GridSample", 20,
     [("X", f32(r, 1, 1, 5, 4)), ("grid", (r.random((1, 2, 4, 2)) * 2.4 - 1.2).astype(np.float32))],
     [("Y", F)], {"mode": "cubic", "align_corners": 1})
case("grid_sample20_3d_linear", "GridSample", 20,
     [("X", f32(r, 1, 2, 3, 4, 5)),
      ("grid", (r.random((1, 2, 3, 2, 3)) * 2.2 - 1.1).astype(np.float32))],
     [("Y", F)], {"mode": "linear"})
case("grid_sample20_3d_nearest_reflection", "GridSample", 20,
     [("X", f32(r, 1, 1, 3, 3, 4)),
      ("grid", (r.random((1, 2, 2, 2, 3)) * 3 - 1.5).astype(np.float32))],
     [("Y", F)], {"mode": "nearest", "padding_mode": "reflection"})
# DFT in double: in float32 ONNX Runtime's spectrum has ~1e-6 noise where
# the exact value is 0, beyond the conformance tolerance.
D = TensorProto.DOUBLE
case("dft20_axis_input", "DFT", 20,
     [("input", r.standard_normal((2, 6, 1))), ("", None), ("axis", np.array(1, dtype=np.int64))],
     [("output", D)])
case("dft20_length_inverse", "DFT", 20,
     [("input", r.standard_normal((1, 5, 2))), ("dft_length", np.array(8, dtype=np.int64)),
      ("axis", np.array(-2, dtype=np.int64))], [("output", D)], {"inverse": 1})
case("dft20_onesided", "DFT", 20, [("input", r.standard_normal((3, 8, 1)))], [("output", D)],
     {"onesided": 1})
case("cast19_saturate_attr", "Cast", 19, [("input", x * 1000)], [("output", TensorProto.FLOAT16)],
     {"to": TensorProto.FLOAT16, "saturate": 1})
case("cast21_f32_to_uint8", "Cast", 21, [("input", np.abs(x) * 50)], [("output", TensorProto.UINT8)],
     {"to": TensorProto.UINT8})


def qlinear_matmul(name, opset, scale_dtype):
    r = rng(name)
    a = r.integers(0, 255, (2, 3)).astype(np.uint8)
    b = r.integers(0, 255, (3, 4)).astype(np.uint8)
    sd = np.dtype(scale_dtype)
    ins = [("a", a), ("a_scale", np.array(0.02, sd)), ("a_zero_point", np.array(120, np.uint8)),
           ("b", b), ("b_scale", np.array(0.03, sd)), ("b_zero_point", np.array(130, np.uint8)),
           ("y_scale", np.array(0.5, sd)), ("y_zero_point", np.array(100, np.uint8))]
    case(name, "QLinearMatMul", opset, ins, [("y", TensorProto.UINT8)])


qlinear_matmul("qlinear_matmul21", 21, np.float32)
qlinear_matmul("qlinear_matmul21_f16_scales", 21, np.float16)
