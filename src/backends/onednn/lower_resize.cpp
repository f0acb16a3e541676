// Resize as oneDNN resampling and ConvTranspose as oneDNN deconvolution.
//
// oneDNN's resampling knows one coordinate mapping, the half-pixel one with
// the factor OH/IH taken from the dims, and rounds it to nearest for the
// nearest mode. ONNX has several mappings and rounding modes and uses the
// scale as given. Here, with the concrete dims, every output index of every
// axis is mapped both ways, and the resampling primitive is used only where
// the two agree everywhere. Elsewhere (align_corners, cubic, antialias, a
// scale oneDNN maps otherwise, a resized batch or channel axis) the resize is
// hone's own step on the plain layout, sampling with ops/resize.h's taps as
// the reference does, so the block stays whole.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/onednn/impl_name.h"
#include "backends/onednn/plan.h"
#include "backends/onednn/timing.h"
#include "core/log.h"
#include "ops/attrs.h"
#include "ops/resize.h"

namespace hone::onednn {
namespace {

using dnnl::algorithm;
using dnnl::memory;

/// ONNX's input coordinate of output index `o` (the reference's formula).
double onnx_coord(const std::string& ctm, int64_t o, double scale, int64_t out) {
  const double x = static_cast<double>(o);
  if (ctm == "asymmetric") return x / scale;
  if (ctm == "pytorch_half_pixel" && out <= 1) return 0.0;
  return (x + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

int64_t onnx_nearest(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(std::floor(x + 0.5));
  return static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
}

/// oneDNN's mapping: (o + 0.5) * in / out - 0.5, computed in float.
float onednn_coord(int64_t o, int64_t in, int64_t out) {
  return (static_cast<float>(o) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f;
}

/// Empty when oneDNN computes axis `axis` exactly as ONNX does, else why not.
std::string axis_mismatch(bool nearest, const std::string& ctm, const std::string& nearest_mode,
                          int64_t in, int64_t out, double scale, size_t axis) {
  const std::string where = "axis " + std::to_string(axis) + " (" + std::to_string(in) + " -> " +
                            std::to_string(out) + ")";
  for (int64_t o = 0; o < out; ++o) {
    const double xo = onnx_coord(ctm, o, scale, out);
    const float xd = onednn_coord(o, in, out);
    if (nearest) {
      // A coordinate near a rounding tie could round either way in oneDNN's kernels.
      const double frac = static_cast<double>(xd) - std::floor(static_cast<double>(xd));
      if (std::abs(frac - 0.5) < 1e-3)
        return where + ": output " + std::to_string(o) + " falls on a rounding tie of oneDNN's map";
      const int64_t io = std::clamp<int64_t>(onnx_nearest(nearest_mode, xo), 0, in - 1);
      const int64_t id = std::clamp<int64_t>(std::lround(xd), 0, in - 1);
      if (io != id)
        return where + ": output " + std::to_string(o) + " reads input " + std::to_string(io) +
               " in ONNX (" + ctm + ", " + nearest_mode + ") but " + std::to_string(id) +
               " in oneDNN";
    } else if (std::abs(xo - static_cast<double>(xd)) > 1e-5 * std::max(1.0, std::abs(xo))) {
      return where + ": output " + std::to_string(o) + " samples " + std::to_string(xo) +
             " in ONNX (" + ctm + ") but " + std::to_string(xd) + " in oneDNN";
    }
  }
  return {};
}

/// One axis's taps (ops/resize.h) with f32 weights.
struct FloatTaps {
  std::vector<int64_t> begin, index;
  std::vector<float> weight;
  bool identity = true;
};

FloatTaps to_float(const ops::AxisTaps& a) {
  FloatTaps f;
  f.begin = a.begin;
  f.identity = a.identity;
  for (const ops::ResizeTap& t : a.taps) {
    f.index.push_back(t.index);
    f.weight.push_back(static_cast<float>(t.weight));
  }
  return f;
}

/// The axes resize_f32 resizes, in memory order.
std::vector<size_t> resized_axes(const std::vector<FloatTaps>& axes) {
  std::vector<size_t> todo;
  for (size_t d = 0; d < axes.size(); ++d)
    if (!axes[d].identity) todo.push_back(d);
  return todo;
}

/// The resize of `x` (dims `in`, dense in memory) to `y` (dims `out`) with
/// each axis's taps, axis after axis. The intermediate results, one fewer
/// than the resized axes, alternate between `t0` and `t1` (sized by
/// resize_scratch). f32 throughout: the reference sums in f64 and rounds
/// once, a few ulps away. Nothing is allocated per run (the f64 version
/// this replaces allocated and faulted in three buffers of the output's
/// size in f64 per run: about 2.7 of the UNet's 14.3 ms).
void resize_f32(const std::vector<FloatTaps>& axes, const dims_t& in, const dims_t& out,
                const float* x, float* y, float* t0, float* t1) {
  const std::vector<size_t> todo = resized_axes(axes);
  if (todo.empty()) {
    std::copy_n(x, shape_numel(in), y);
    return;
  }
  dims_t shape = in;
  const float* cur = x;
  for (size_t k = 0; k < todo.size(); ++k) {
    const size_t d = todo[k];
    const FloatTaps& a = axes[d];
    float* next = k + 1 == todo.size() ? y : (k % 2 == 0 ? t0 : t1);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < d; ++i) outer *= shape[i];
    for (size_t i = d + 1; i < shape.size(); ++i) inner *= shape[i];
    const int64_t in_d = shape[d], out_d = out[d];
    for (int64_t ou = 0; ou < outer; ++ou) {
      const float* src = cur + ou * in_d * inner;
      float* dst = next + ou * out_d * inner;
      for (int64_t o = 0; o < out_d; ++o, dst += inner) {
        const int64_t first = a.begin[o], last = a.begin[o + 1];
        if (inner == 1) {
          float sum = 0.0f;
          for (int64_t t = first; t < last; ++t) sum += a.weight[t] * src[a.index[t]];
          *dst = sum;
          continue;
        }
        if (first == last) {
          std::fill_n(dst, inner, 0.0f);
          continue;
        }
        const float w0 = a.weight[first];
        const float* s0 = src + a.index[first] * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * s0[i];
        for (int64_t t = first + 1; t < last; ++t) {
          const float w = a.weight[t];
          const float* st = src + a.index[t] * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] += w * st[i];
        }
      }
    }
    cur = next;
    shape[d] = out_d;
  }
}

/// The elements of resize_f32's two intermediate buffers (0: unused).
std::pair<int64_t, int64_t> resize_scratch(const std::vector<FloatTaps>& axes, const dims_t& in,
                                           const dims_t& out) {
  const std::vector<size_t> todo = resized_axes(axes);
  std::pair<int64_t, int64_t> sizes{0, 0};
  dims_t shape = in;
  for (size_t k = 0; k + 1 < todo.size(); ++k) {
    shape[todo[k]] = out[todo[k]];
    int64_t& s = k % 2 == 0 ? sizes.first : sizes.second;
    s = std::max(s, shape_numel(shape));
  }
  return sizes;
}

/// The channels-last layout of a rank-3..5 tensor (nwc, nhwc, ndhwc).
std::optional<memory::format_tag> channels_last(size_t rank) {
  if (rank == 3) return memory::format_tag::nwc;
  if (rank == 4) return memory::format_tag::nhwc;
  if (rank == 5) return memory::format_tag::ndhwc;
  return std::nullopt;
}

/// Resize as hone's own step (see the top of the file); support.cpp has
/// refused what it cannot do (tf_crop_and_resize's roi, the axes attribute,
/// a keep_aspect_ratio_policy, opset 10).
Result<void> lower_resize_own(PlanBuilder& b, const Node& n, const ops::ResizeAttrs& ra,
                              const dims_t& in, const dims_t& out,
                              const std::vector<double>& scales) {
  ops::ResizeFilter f;
  if (ra.mode == "nearest") {
    f.mode = ops::ResizeMode::kNearest;
  } else if (ra.mode == "linear") {
    f.mode = ops::ResizeMode::kLinear;
  } else if (ra.mode == "cubic") {
    f.mode = ops::ResizeMode::kCubic;
  } else {
    return fail(ErrorCode::kInvalidArgument,
                "Resize mode '" + ra.mode + "' is not nearest, linear or cubic");
  }
  if (ra.coordinate_transformation_mode == "tf_crop_and_resize")
    return fail(ErrorCode::kUnsupported, "Resize tf_crop_and_resize (its roi) on onednn");
  f.transform = ra.coordinate_transformation_mode;
  f.nearest_mode = ra.nearest_mode;
  f.cubic_a = ra.cubic_coeff_a;
  f.exclude_outside = ra.exclude_outside;
  f.antialias = ra.antialias && f.mode != ops::ResizeMode::kNearest;
  std::vector<ops::AxisTaps> axes;
  for (size_t d = 0; d < in.size(); ++d) {
    HONE_TRY(ops::AxisTaps a, ops::resize_axis_taps(f, in[d], out[d], scales[d], 0.0, 1.0));
    axes.push_back(std::move(a));
  }
  // A channels-last input (the convs around the resize picked it) is
  // resized where it lies: no reorder to plain and back, and the innermost
  // loop of every resized axis runs over the channels.
  const PValue x = b.value(n.inputs[0]);
  std::vector<size_t> order(in.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  BufferRef src;
  md_t out_md;
  dims_t mem_in, mem_out;
  auto taps = std::make_shared<std::vector<FloatTaps>>();
  const auto cl = channels_last(in.size());
  const md_t blocked16 =
      in.size() == 4 ? md_t(in, memory::data_type::f32, memory::format_tag::nChw16c) : md_t();
  if (in.size() == 4 && in[1] % 16 == 0 && axes[1].identity && x.dtype == DType::kF32 &&
      x.ref.md == blocked16) {
    // nChw16c (a plan whose convs run there) is [N, C/16, H, W, 16] in
    // memory, the channel axes kept: resized where it lies, the innermost
    // loop over a block of 16 channels.
    src = x.ref;
    out_md = md_t(out, memory::data_type::f32, memory::format_tag::nChw16c);
    mem_in = {in[0], in[1] / 16, in[2], in[3], 16};
    mem_out = {out[0], out[1] / 16, out[2], out[3], 16};
    *taps = {to_float(axes[0]), FloatTaps{}, to_float(axes[2]), to_float(axes[3]), FloatTaps{}};
  } else {
    if (cl && x.dtype == DType::kF32 && x.ref.md == md_t(in, memory::data_type::f32, *cl)) {
      std::rotate(order.begin() + 1, order.begin() + 2, order.end());  // 0, 2, ..., 1
      src = x.ref;
      out_md = md_t(out, memory::data_type::f32, *cl);
    } else {
      src = b.plain(n.inputs[0]);
      out_md = plain_md(out);
    }
    for (size_t d : order) {
      mem_in.push_back(in[d]);
      mem_out.push_back(out[d]);
      taps->push_back(to_float(axes[d]));
    }
  }
  const auto [n0, n1] = resize_scratch(*taps, mem_in, mem_out);
  const BufferRef dst{b.new_temp(out_md), out_md};
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  // Scratch: written by this step and read by none after, so the arena
  // reuses its room.
  for (auto [arg, count] : {std::pair{DNNL_ARG_WORKSPACE, n0}, std::pair{DNNL_ARG_DST_2, n1}})
    if (count > 0) args.push_back({arg, {b.new_temp(plain_md({count})), plain_md({count})}});
  const std::shared_ptr<const std::vector<FloatTaps>> shared = std::move(taps);
  const bool has_t0 = n0 > 0, has_t1 = n1 > 0;
  b.add_own_step(
      "resize",
      [shared, mem_in, mem_out, has_t0, has_t1](void* const* p) -> Result<void> {
        float* t0 = has_t0 ? static_cast<float*>(p[2]) : nullptr;
        float* t1 = has_t1 ? static_cast<float*>(p[3]) : nullptr;
        resize_f32(*shared, mem_in, mem_out, static_cast<const float*>(p[0]),
                   static_cast<float*>(p[1]), t0, t1);
        return {};
      },
      std::move(args));
  b.set(n.outputs[0], PValue{out, dst});
  return {};
}

/// Empty when oneDNN's resampling computes this resize as ONNX does (the
/// per-index check is axis_mismatch), else why not.
std::string resampling_why_not(const ops::ResizeAttrs& ra) {
  const std::string& ctm = ra.coordinate_transformation_mode;
  if (ra.mode != "nearest" && ra.mode != "linear") return "mode '" + ra.mode + "'";
  if (ra.antialias && ra.mode != "nearest") return "antialias";
  if (ra.exclude_outside) return "exclude_outside";
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" && ctm != "asymmetric")
    return "coordinate_transformation_mode '" + ctm + "'";
  if (ra.mode == "linear" && ctm == "asymmetric") return "linear with asymmetric coordinates";
  const std::string& nm = ra.nearest_mode;
  if (ra.mode == "nearest" && ctm == "asymmetric" && nm != "floor")
    return "nearest asymmetric with nearest_mode '" + nm + "'";
  if (ra.mode == "nearest" && ctm != "asymmetric" && (nm == "floor" || nm == "ceil"))
    return "nearest " + ctm + " with nearest_mode '" + nm + "'";
  return {};
}

Result<void> lower_resize(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const size_t rank = x.dims.size();
  if (rank < 1)
    return fail(ErrorCode::kInvalidArgument, "Resize of a scalar " + shape_to_string(x.dims));
  std::vector<double> scales(rank, 1.0);
  dims_t out = x.dims;
  const Tensor* st = n.inputs.size() > 2 && n.inputs[2] >= 0 ? b.constant(n.inputs[2]) : nullptr;
  const Tensor* zt = n.inputs.size() > 3 && n.inputs[3] >= 0 ? b.constant(n.inputs[3]) : nullptr;
  if (st && st->numel() > 0) {
    if (st->dtype() != DType::kF32 || st->numel() != static_cast<int64_t>(rank))
      return fail(ErrorCode::kInvalidArgument, "Resize scales must be " + std::to_string(rank) +
                                                   " f32 values, got " + st->describe());
    for (size_t i = 0; i < rank; ++i) {
      scales[i] = st->data<float>()[i];
      if (!(scales[i] > 0.0))
        return fail(ErrorCode::kInvalidArgument,
                    "Resize scale of axis " + std::to_string(i) + " is not positive");
      out[i] = static_cast<int64_t>(std::floor(static_cast<double>(x.dims[i]) * scales[i]));
    }
  } else if (zt && zt->numel() > 0) {
    if (zt->dtype() != DType::kI64 || zt->numel() != static_cast<int64_t>(rank))
      return fail(ErrorCode::kInvalidArgument, "Resize sizes must be " + std::to_string(rank) +
                                                   " i64 values, got " + zt->describe());
    for (size_t i = 0; i < rank; ++i) {
      out[i] = zt->data<int64_t>()[i];
      scales[i] = static_cast<double>(out[i]) / static_cast<double>(x.dims[i]);
    }
  } else {
    return fail(ErrorCode::kUnsupported,
                "Resize needs scales or sizes known when the plan is built");
  }
  for (size_t i = 0; i < rank; ++i)
    if (out[i] < 1)
      return fail(ErrorCode::kInvalidArgument,
                  "Resize output " + shape_to_string(out) + " has an empty axis");
  HONE_TRY(const ops::ResizeAttrs ra, ops::resize_attrs(n, b.graph().opset("")));
  // oneDNN resamples 1 to 3 spatial axes, mapping them its own way: else the own step.
  if (rank < 3 || rank > 5 || out[0] != x.dims[0] || out[1] != x.dims[1] ||
      !resampling_why_not(ra).empty())
    return lower_resize_own(b, n, ra, x.dims, out, scales);
  const bool nearest = ra.mode == "nearest";
  const std::string& ctm = ra.coordinate_transformation_mode;
  const std::string& nmode = ra.nearest_mode;
  std::vector<float> factors;
  for (size_t i = 2; i < rank; ++i) {
    if (!axis_mismatch(nearest, ctm, nmode, x.dims[i], out[i], scales[i], i).empty())
      return lower_resize_own(b, n, ra, x.dims, out, scales);
    factors.push_back(static_cast<float>(out[i]) / static_cast<float>(x.dims[i]));
  }
  const algorithm alg = nearest ? algorithm::resampling_nearest : algorithm::resampling_linear;
  dnnl::resampling_forward::primitive_desc pd(
      dnnl::resampling_forward::desc(kInfer, alg, factors, usual(b, n.inputs[0]).md, any_md(out)),
      user_scratch(), cpu_engine());
  // oneDNN 2.6 picks its reference resampling for some layouts (SegFormer's
  // bilinear [1,256,16,16] -> [1,256,64,64]: 100 to 300 ms a run, most of the
  // model's time): hone's own step computes the same taps far faster.
  if (const std::string impl = pd.impl_info_str(); is_ref_impl_name(impl)) {
    HONE_LOG_DEBUG("onednn: Resize '{}' runs as hone's own step: oneDNN's resampling is '{}'",
                   n.name, impl);
    return lower_resize_own(b, n, ra, x.dims, out, scales);
  }
  BufferRef src = b.ensure(n.inputs[0], pd.src_desc());
  BufferRef dst{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  b.add_step("resampling", dnnl::resampling_forward(pd), pd,
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst});
  return {};
}

Result<void> lower_deconv(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const Tensor* w = b.constant(n.inputs[1]);
  if (w == nullptr) return fail(ErrorCode::kUnsupported, "ConvTranspose weights must be constant");
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const Tensor* bias = has_bias ? b.constant(n.inputs[2]) : nullptr;
  if (has_bias && bias == nullptr)
    return fail(ErrorCode::kUnsupported, "ConvTranspose bias must be constant");
  // ONNX weights are (C_in, C_out / group, k...).
  const dims_t& wd = w->shape();
  const size_t rank = x.dims.size();
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const int64_t group = ca.group;
  if (rank != 4 || wd.size() != 4 || x.dims[1] != wd[0] || wd[0] % group != 0)
    return fail(ErrorCode::kInvalidArgument, "ConvTranspose: input " + shape_to_string(x.dims) +
                                                 " and weights " + shape_to_string(wd) +
                                                 " do not fit a 2-D deconvolution of group " +
                                                 std::to_string(group));
  const int64_t ic = wd[0], ocg = wd[1], icg = ic / group, oc = ocg * group;
  const dims_t kernel{wd[2], wd[3]};
  const dims_t strides = ca.strides.empty() ? dims_t{1, 1} : ca.strides;
  const dims_t dil = ca.dilations.empty() ? dims_t{1, 1} : ca.dilations;
  const dims_t opad = ca.output_padding.empty() ? dims_t{0, 0} : ca.output_padding;
  dims_t pads = ca.pads.empty() ? dims_t{0, 0, 0, 0} : ca.pads;
  if (strides.size() != 2 || dil.size() != 2 || opad.size() != 2 || pads.size() != 4)
    return fail(ErrorCode::kInvalidArgument,
                "ConvTranspose strides, dilations, output_padding need 2 values and pads 4");
  if (ca.auto_pad == ops::AutoPad::kValid) pads = {0, 0, 0, 0};
  dims_t dst{x.dims[0], oc}, pad_l, pad_r, dil0;
  for (size_t i = 0; i < 2; ++i) {
    if (strides[i] < 1 || dil[i] < 1 || opad[i] < 0 || opad[i] >= std::max(strides[i], dil[i]))
      return fail(ErrorCode::kInvalidArgument,
                  "ConvTranspose: strides/dilations must be >= 1 and output_padding below them");
    const int64_t eff = (kernel[i] - 1) * dil[i] + 1;
    const int64_t o = strides[i] * (x.dims[2 + i] - 1) + opad[i] + eff - pads[i] - pads[i + 2];
    if (o < 1)
      return fail(ErrorCode::kInvalidArgument,
                  "ConvTranspose output of axis " + std::to_string(2 + i) + " would be empty");
    dst.push_back(o);
    pad_l.push_back(pads[i]);
    // output_padding adds rows at the end: oneDNN sees it as less right padding.
    pad_r.push_back(pads[i + 2] - opad[i]);
    dil0.push_back(dil[i] - 1);
  }
  // The ONNX weights viewed as oneDNN's (g, oc/g, ic/g, kh, kw) by strides.
  const int64_t khw = kernel[0] * kernel[1];
  const md_t w_view(dims_t{group, ocg, icg, kernel[0], kernel[1]}, memory::data_type::f32,
                    dims_t{icg * ocg * khw, khw, ocg * khw, kernel[1], 1});
  const md_t bias_md = plain_md({oc});
  // With `any`, oneDNN 2.6 puts a deconvolution with few output channels
  // (PaddleOCR's head: 24 -> 6 -> 1) on channel-padded nChw16c, where the
  // Add and activation after it have only reference kernels (about 1.7 ms of
  // a 5 ms run). nhwc keeps them on JIT kernels; `any` is the fallback.
  auto make = [&](const md_t& src_md, const md_t& dst_md) {
    auto d = has_bias ? dnnl::deconvolution_forward::desc(kInfer, algorithm::deconvolution_direct,
                                                          src_md, any_md(w_view.dims()), bias_md,
                                                          dst_md, strides, dil0, pad_l, pad_r)
                      : dnnl::deconvolution_forward::desc(kInfer, algorithm::deconvolution_direct,
                                                          src_md, any_md(w_view.dims()), dst_md,
                                                          strides, dil0, pad_l, pad_r);
    return dnnl::deconvolution_forward::primitive_desc(d, user_scratch(), cpu_engine());
  };
  dnnl::deconvolution_forward::primitive_desc pd;
  try {
    pd = make(md_t(x.dims, memory::data_type::f32, memory::format_tag::nhwc),
              md_t(dst, memory::data_type::f32, memory::format_tag::nhwc));
  } catch (const dnnl::error&) {
    pd = make(any_md(x.dims), any_md(dst));
  }
  // In a plan whose convs run on nChw16c (PlanBuilder::set_prefer_blocked16),
  // a deconvolution over channels in 16s may run there too (no reorder on
  // either side; a UNet's Concat of its output with the skip is then in
  // place), but its nChw16c kernel can be the slower one (UNet's two: about
  // 0.8 ms against 0.5 ms in all): both are timed, nhwc charged with the
  // reorders into it and back.
  // The choice is the backend's timed_choices "deconv-layout" entry when it
  // holds one that can run here ("nhwc" names the form above, on oneDNN's
  // pick where nhwc has no kernel).
  if (b.prefer_blocked16() && ic % 16 == 0 && oc % 16 == 0) {
    std::optional<dnnl::deconvolution_forward::primitive_desc> blocked;
    try {
      blocked = make(md_t(x.dims, memory::data_type::f32, memory::format_tag::nChw16c),
                     md_t(dst, memory::data_type::f32, memory::format_tag::nChw16c));
    } catch (const dnnl::error&) {  // no nChw16c kernel: nhwc stays
    }
    auto args = [](const dnnl::deconvolution_forward::primitive_desc& p) {
      return std::vector<std::pair<int, md_t>>{{DNNL_ARG_SRC, p.src_desc()},
                                               {DNNL_ARG_WEIGHTS, p.weights_desc()},
                                               {DNNL_ARG_BIAS, p.bias_desc()},
                                               {DNNL_ARG_DST, p.dst_desc()},
                                               {DNNL_ARG_SCRATCHPAD, p.scratchpad_desc()}};
    };
    // Without layout trials (PlanBuilder::set_layout_trials) it stays on
    // the plan's layout, untimed.
    if (!b.layout_trials()) {
      if (blocked) pd = *blocked;
    } else {
      std::vector<std::string> runnable{"nhwc"};
      if (blocked) runnable.push_back("nChw16c");
      const std::string pick = b.choose(n, "deconv-layout", runnable, [&] {
        const double pd_ms = time_primitive(dnnl::deconvolution_forward(pd), args(pd)) +
                             reorder_ms(x.ref.md, pd.src_desc()) +
                             reorder_ms(pd.dst_desc(), blocked->dst_desc());
        const double blocked_ms =
            time_primitive(dnnl::deconvolution_forward(*blocked), args(*blocked)) +
            reorder_ms(x.ref.md, blocked->src_desc());
        return std::vector<double>{pd_ms, blocked_ms};
      });
      if (pick == "nChw16c") pd = *blocked;
    }
  }
  BufferRef src = b.ensure(n.inputs[0], pd.src_desc());
  BufferRef wei = b.pack(*w, w_view, pd.weights_desc());
  BufferRef out{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  std::vector<std::pair<int, BufferRef>> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, out}};
  if (has_bias) args.push_back({DNNL_ARG_BIAS, BufferRef{b.new_constant(*bias), bias_md}});
  b.add_step("deconv", dnnl::deconvolution_forward(pd), pd, std::move(args));
  b.set(n.outputs[0], PValue{dst, out});
  return {};
}

}  // namespace

Result<void> lower_resample(PlanBuilder& b, const Node& n) {
  return n.op_type == "Resize" ? lower_resize(b, n) : lower_deconv(b, n);
}

}  // namespace hone::onednn
