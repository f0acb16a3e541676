"""New ops of opsets 18-26 other than the attention family."""
import numpy as np
from onnx import TensorProto

from common import NP_TO_ONNX, case, rng

F = TensorProto.FLOAT


def out(dtype):
    return NP_TO_ONNX[np.dtype(dtype)]


# CumProd-26
def cumprod(name, x, axis, **attrs):
    case(name, "CumProd", 26, [("x", x), ("axis", np.array(axis, dtype=np.int64))],
         [("y", out(x.dtype))], attrs)


r = rng("cumprod")
cumprod("cumprod26_1d", (r.random(6) + 0.5).astype(np.float32), 0)
cumprod("cumprod26_2d_axis1", (r.random((3, 4)) + 0.5).astype(np.float32), 1)
cumprod("cumprod26_exclusive", (r.random((3, 4)) + 0.5).astype(np.float32), 0, exclusive=1)
cumprod("cumprod26_reverse", (r.random((2, 5)) + 0.5).astype(np.float32), -1, reverse=1)
cumprod("cumprod26_exclusive_reverse", (r.random((2, 3, 4)) + 0.5).astype(np.float32), 1,
        exclusive=1, reverse=1)
cumprod("cumprod26_int32", r.integers(-3, 4, (3, 5)).astype(np.int32), 1)
cumprod("cumprod26_int64", r.integers(-5, 6, (4, 3)).astype(np.int64), 0, reverse=1)
cumprod("cumprod26_f64", (r.random((2, 4)) + 0.5).astype(np.float64), 1)
cumprod("cumprod26_zeros", np.array([2, 0, 3, -1], dtype=np.float32), 0)


# TensorScatter-24
def tensor_scatter(name, cache, update, write=None, **attrs):
    r = rng(name)
    c = r.standard_normal(cache).astype(np.float32)
    u = r.standard_normal(update).astype(np.float32)
    ins = [("past_cache", c), ("update", u)]
    if write is not None:
        ins.append(("write_indices", np.array(write, dtype=np.int64)))
    case(name, "TensorScatter", 24, ins, [("present_cache", F)], attrs)


tensor_scatter("tensor_scatter24_linear", (2, 2, 6, 3), (2, 2, 2, 3), [1, 4])
tensor_scatter("tensor_scatter24_no_indices", (2, 3, 5, 2), (2, 3, 3, 2))
tensor_scatter("tensor_scatter24_circular", (2, 2, 5, 3), (2, 2, 3, 3), [3, 1], mode="circular")
tensor_scatter("tensor_scatter24_3d_axis1", (2, 6, 4), (2, 2, 4), [0, 3], axis=1)
tensor_scatter("tensor_scatter24_axis_last", (2, 3, 4), (2, 3, 2), [2, 1], axis=-1)


# BitCast-26
def bitcast(name, x, to):
    case(name, "BitCast", 26, [("x", x)], [("y", to)], {"to": to})


r = rng("bitcast")
bitcast("bitcast26_f32_to_i32", r.standard_normal((3, 4)).astype(np.float32), TensorProto.INT32)
bitcast("bitcast26_i32_to_f32", np.array([0, 1065353216, -1082130432, 2139095040, 12345],
                                         dtype=np.int32), TensorProto.FLOAT)
bitcast("bitcast26_f32_to_u32", r.standard_normal((5,)).astype(np.float32), TensorProto.UINT32)
bitcast("bitcast26_u8_to_i8", r.integers(0, 256, (2, 5)).astype(np.uint8), TensorProto.INT8)
bitcast("bitcast26_f64_to_i64", r.standard_normal((4,)).astype(np.float64), TensorProto.INT64)
bitcast("bitcast26_f16_to_i16", r.standard_normal((2, 3)).astype(np.float16), TensorProto.INT16)
bitcast("bitcast26_i16_to_f16", np.array([0, 15360, -17408, 31744, 1], dtype=np.int16),
        TensorProto.FLOAT16)


# AffineGrid-20
def affine_grid(name, size, align=None):
    r = rng(name)
    sp = len(size) - 2
    theta = r.standard_normal((size[0], sp, sp + 1)).astype(np.float32)
    case(name, "AffineGrid", 20, [("theta", theta), ("size", np.array(size, dtype=np.int64))],
         [("grid", F)], {} if align is None else {"align_corners": align})


affine_grid("affine_grid20_2d", [2, 3, 4, 5])
affine_grid("affine_grid20_2d_align", [1, 1, 3, 6], align=1)
affine_grid("affine_grid20_3d", [2, 1, 2, 3, 4])
affine_grid("affine_grid20_3d_align", [1, 2, 3, 2, 5], align=1)


# Col2Im-18
def col2im(name, n, c, image, block, **attrs):
    r = rng(name)
    sp = len(image)
    dil = attrs.get("dilations", [1] * sp)
    st = attrs.get("strides", [1] * sp)
    pads = attrs.get("pads", [0] * 2 * sp)
    blocks = 1
    for d in range(sp):
        blocks *= (image[d] + pads[d] + pads[d + sp] - dil[d] * (block[d] - 1) - 1) // st[d] + 1
    x = r.standard_normal((n, c * int(np.prod(block)), blocks)).astype(np.float32)
    case(name, "Col2Im", 18, [("input", x), ("image_shape", np.array(image, dtype=np.int64)),
                              ("block_shape", np.array(block, dtype=np.int64))],
         [("output", F)], attrs)


col2im("col2im18_basic", 1, 1, [5, 5], [1, 5])
col2im("col2im18_2x2", 2, 3, [4, 5], [2, 2])
col2im("col2im18_strides", 1, 2, [5, 5], [3, 3], strides=[2, 2])
col2im("col2im18_pads", 1, 2, [4, 4], [3, 3], pads=[1, 0, 1, 2])
col2im("col2im18_dilations", 1, 1, [6, 6], [2, 2], dilations=[2, 3])
col2im("col2im18_3d", 1, 1, [3, 4, 3], [2, 2, 2])


# CenterCropPad-18
def center_crop_pad(name, shape, target, axes=None, dtype=np.float32):
    r = rng(name)
    x = (r.standard_normal(shape) * 10).astype(dtype)
    case(name, "CenterCropPad", 18, [("input_data", x), ("shape", np.array(target, dtype=np.int64))],
         [("output_data", out(dtype))], {} if axes is None else {"axes": axes})


center_crop_pad("center_crop_pad18_crop", (5, 7, 3), [3, 4, 3])
center_crop_pad("center_crop_pad18_pad", (3, 2, 2), [6, 5, 2])
center_crop_pad("center_crop_pad18_crop_and_pad", (4, 6), [7, 3])
center_crop_pad("center_crop_pad18_axes", (2, 5, 6, 3), [4, 3], axes=[1, 2])
center_crop_pad("center_crop_pad18_neg_axes", (2, 5, 6, 3), [8, 1], axes=[-3, -2])
center_crop_pad("center_crop_pad18_int64", (5, 4), [2, 7], dtype=np.int64)


# DeformConv-19 (and 22, which only adds types)
def deform_conv(name, x, w, opset=19, bias=False, mask=False, **attrs):
    r = rng(name)
    X = r.standard_normal(x).astype(np.float32)
    W = r.standard_normal(w).astype(np.float32)
    sp = 2
    dil = attrs.get("dilations", [1] * sp)
    st = attrs.get("strides", [1] * sp)
    pads = attrs.get("pads", [0] * 2 * sp)
    og = attrs.get("offset_group", 1)
    kh, kw = w[2], w[3]
    oh = (x[2] + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // st[0] + 1
    ow = (x[3] + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // st[1] + 1
    off = (r.standard_normal((x[0], og * kh * kw * 2, oh, ow)) * 1.5).astype(np.float32)
    ins = [("X", X), ("W", W), ("offset", off)]
    ins.append(("B", r.standard_normal((w[0],)).astype(np.float32)) if bias else ("", None))
    if mask:
        ins.append(("mask", r.random((x[0], og * kh * kw, oh, ow)).astype(np.float32)))
    while ins[-1][0] == "":
        ins.pop()
    case(name, "DeformConv", opset, ins, [("Y", F)], attrs)


deform_conv("deform_conv19_basic", (1, 1, 4, 4), (1, 1, 2, 2))
deform_conv("deform_conv19_bias_mask", (2, 2, 5, 5), (3, 2, 3, 3), bias=True, mask=True)
deform_conv("deform_conv19_pads_strides", (1, 2, 6, 5), (2, 2, 3, 3), pads=[1, 1, 1, 1],
            strides=[2, 1])
deform_conv("deform_conv19_dilations", (1, 1, 7, 7), (2, 1, 2, 2), dilations=[2, 3])
deform_conv("deform_conv19_group", (1, 4, 5, 5), (4, 2, 2, 2), group=2, bias=True)
deform_conv("deform_conv19_offset_group", (1, 4, 4, 4), (2, 4, 2, 2), offset_group=2, mask=True)
deform_conv("deform_conv22_basic", (1, 2, 4, 5), (2, 2, 2, 3), opset=22, bias=True)


# LpNormalization-22 and MaxRoiPool-22 (22 only adds types; hone had neither)
def lp_norm(name, x, **attrs):
    case(name, "LpNormalization", 22, [("input", x)], [("output", F)], attrs)


r = rng("lp_norm")
lp_norm("lp_normalization22_p2", r.standard_normal((3, 5)).astype(np.float32))
lp_norm("lp_normalization22_p1_axis0", r.standard_normal((4, 3, 2)).astype(np.float32), p=1, axis=0)
lp_norm("lp_normalization22_zero_row", np.array([[0, 0, 0], [1, -2, 2]], np.float32), axis=1)


def max_roi_pool(name, x_shape, rois, pooled, scale=None):
    r = rng(name)
    x = r.standard_normal(x_shape).astype(np.float32)
    attrs = {"pooled_shape": pooled}
    if scale is not None:
        attrs["spatial_scale"] = scale
    # ONNX Runtime 1.30 implements MaxRoiPool-1 only (not the -22 that adds
    # bfloat16), so the models import opset 21.
    case(name, "MaxRoiPool", 21, [("X", x), ("rois", np.array(rois, np.float32))], [("Y", F)], attrs)


max_roi_pool("max_roi_pool1", (1, 2, 6, 6), [[0, 0, 0, 3, 3], [0, 1, 2, 5, 4]], [2, 2])
max_roi_pool("max_roi_pool1_scale", (2, 1, 8, 8), [[1, 2, 3, 10, 13], [0, 0.4, 1.6, 6.2, 9]],
             [3, 2], scale=0.5)
max_roi_pool("max_roi_pool1_outside", (1, 1, 5, 5), [[0, 3, 3, 9, 9], [0, 0, 0, 0, 0]], [2, 3])


# Other element types of the new ops
r = rng("dtypes")
D = TensorProto.DOUBLE
H = TensorProto.FLOAT16
case("rms_norm23_f64", "RMSNormalization", 23,
     [("X", r.standard_normal((2, 5))), ("scale", r.standard_normal(5))], [("Y", D)])
case("rotary23_f16", "RotaryEmbedding", 23,
     [("X", r.standard_normal((1, 2, 3, 4)).astype(np.float16)),
      ("cos_cache", np.cos(r.random((1, 3, 2)) * 6).astype(np.float16)),
      ("sin_cache", np.sin(r.random((1, 3, 2)) * 6).astype(np.float16))], [("Y", H)])
case("cumprod26_f16", "CumProd", 26,
     [("x", (r.random((2, 4)) + 0.5).astype(np.float16)), ("axis", np.array(1, np.int64))],
     [("y", H)])
case("cumprod26_uint64", "CumProd", 26,
     [("x", r.integers(0, 5, (6,)).astype(np.uint64)), ("axis", np.array(0, np.int32))],
     [("y", TensorProto.UINT64)])
case("tensor_scatter24_int64", "TensorScatter", 24,
     [("past_cache", r.integers(-9, 9, (2, 4, 3)).astype(np.int64)),
      ("update", r.integers(-9, 9, (2, 1, 3)).astype(np.int64)),
      ("write_indices", np.array([3, 0], np.int64))], [("present_cache", TensorProto.INT64)])
case("tensor_scatter24_f16_circular", "TensorScatter", 24,
     [("past_cache", r.standard_normal((1, 2, 3, 2)).astype(np.float16)),
      ("update", r.standard_normal((1, 2, 2, 2)).astype(np.float16)),
      ("write_indices", np.array([2], np.int64))], [("present_cache", H)], {"mode": "circular"})
case("affine_grid20_f64", "AffineGrid", 20,
     [("theta", r.standard_normal((1, 2, 3))), ("size", np.array([1, 1, 3, 2], np.int64))],
     [("grid", D)])
case("center_crop_pad18_bool", "CenterCropPad", 18,
     [("input_data", r.random((3, 4)) > 0.5), ("shape", np.array([5, 2], np.int64))],
     [("output_data", TensorProto.BOOL)])
case("deform_conv19_f64", "DeformConv", 19,
     [("X", r.standard_normal((1, 1, 4, 4))), ("W", r.standard_normal((1, 1, 2, 2))),
      ("offset", r.standard_normal((1, 8, 3, 3)))], [("Y", D)])
case("swish24_f64", "Swish", 24, [("X", r.standard_normal((2, 3)) * 3)], [("Y", D)],
     {"alpha": 0.7})
case("attention23_f64", "Attention", 23,
     [("Q", r.standard_normal((1, 2, 3, 4))), ("K", r.standard_normal((1, 2, 4, 4))),
      ("V", r.standard_normal((1, 2, 4, 4)))], [("Y", D)], {"is_causal": 1})
