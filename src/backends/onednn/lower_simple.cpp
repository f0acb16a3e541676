// Element-wise, binary, pooling, softmax, normalization and reduction ops as
// oneDNN primitives; the layout ops are lower_shape.cpp's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "backends/onednn/impl_name.h"
#include "backends/onednn/lower_batchnorm.h"
#include "backends/onednn/lower_reduce.h"
#include "backends/onednn/pattern.h"
#include "backends/onednn/plan.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/unary.h"

namespace hone::onednn {

/// The non-plain layouts a conv leaves its output in, by rank.
std::vector<dnnl::memory::format_tag> native_tags(size_t rank) {
  using tag = dnnl::memory::format_tag;
  if (rank == 3) return {tag::acb, tag::aBc16b, tag::aBc8b};
  if (rank == 4) return {tag::acdb, tag::aBcd16b, tag::aBcd8b};
  if (rank == 5) return {tag::acdeb, tag::aBcde16b, tag::aBcde8b};
  return {};
}

/// supports() has checked the axis; ops/axis.h maps it.
int64_t normalize_axis(int64_t axis, size_t rank) {
  return ops::try_normalize_axis(axis, static_cast<int64_t>(rank)).value_or(axis);
}

dims_t split2(const dims_t& d, int64_t axis) {
  const auto mid = d.begin() + axis;
  return {std::accumulate(d.begin(), mid, int64_t{1}, std::multiplies<>()),
          std::accumulate(mid, d.end(), int64_t{1}, std::multiplies<>())};
}

namespace {

using dnnl::algorithm;
using dnnl::memory;

Result<void> lower_eltwise(PlanBuilder& b, const Node& n, const EltwiseSpec& es) {
  const PValue x = b.value(n.inputs[0]);
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(kInfer, es.alg, x.ref.md, es.alpha, es.beta), user_scratch(),
      cpu_engine());
  BufferRef out{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  b.add_step("eltwise", dnnl::eltwise_forward(pd), pd,
             {{DNNL_ARG_SRC, x.ref}, {DNNL_ARG_DST, out}});
  if (es.then_clip01) {
    dnnl::eltwise_forward::primitive_desc clip(
        dnnl::eltwise_forward::desc(kInfer, algorithm::eltwise_clip, out.md, 0.0f, 1.0f),
        user_scratch(), cpu_engine());
    BufferRef out2{b.new_temp(clip.dst_desc()), clip.dst_desc()};
    b.add_step("eltwise", dnnl::eltwise_forward(clip), clip,
               {{DNNL_ARG_SRC, out}, {DNNL_ARG_DST, out2}});
    out = out2;
  }
  b.set(n.outputs[0], PValue{x.dims, out});
  return {};
}

/// `s0 op s1` in plain layouts, `s0` of the output's dims `out` and `s1` of
/// `p1` (as many dims, each 1 or the output's): the dims that broadcast alike
/// merge (plain bytes keep their order), so [1,64,3,49,49] + [1,64,1,49,49]
/// (swin_t's shifted-window mask) is [64,3,2401] + [64,1,2401], a pattern
/// oneDNN's jit kernel takes where for the 5-D one it takes its reference
/// kernel. Where the merged form still gets the reference kernel, so does
/// [R,C] + [R,1], the same with a leading 1 is tried: [1,R,C] + [1,R,1] is a
/// per-channel broadcast, which the jit kernel takes. Returns the result, a
/// new plain temporary of `out`.
BufferRef add_merged_binary(PlanBuilder& b, algorithm alg, int s0, int s1, const dims_t& out,
                            const dims_t& p1) {
  dims_t cout, c1;
  std::vector<bool> cbc;  // per merged dim: the second operand broadcasts
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    const bool bc = p1[i] == 1;
    if (!cbc.empty() && cbc.back() == bc) {
      cout.back() *= out[i];
      c1.back() *= p1[i];
    } else {
      cout.push_back(out[i]);
      c1.push_back(p1[i]);
      cbc.push_back(bc);
    }
  }
  if (cout.empty()) cout = c1 = {1};
  auto make = [&](const dims_t& d0, const dims_t& d1) {
    return dnnl::binary::primitive_desc(
        dnnl::binary::desc(alg, plain_md(d0), plain_md(d1), plain_md(d0)), user_scratch(),
        cpu_engine());
  };
  dims_t d0 = cout, d1 = c1;
  auto pd = make(d0, d1);
  if (is_ref_impl(pd) && cout.size() < 5) {
    dims_t l0 = cout, l1 = c1;
    l0.insert(l0.begin(), 1);
    l1.insert(l1.begin(), 1);
    auto alt = make(l0, l1);
    if (!is_ref_impl(alt)) {
      pd = alt;
      d0 = l0;
      d1 = l1;
    }
  }
  const md_t m0 = plain_md(d0);
  const int dst = b.new_temp(m0);
  b.add_step("binary", dnnl::binary(pd), pd,
             {{DNNL_ARG_SRC_0, {s0, m0}},
              {DNNL_ARG_SRC_1, {s1, plain_md(d1)}},
              {DNNL_ARG_DST, {dst, m0}}});
  return {dst, plain_md(out)};
}

/// `a op b` where `a` is short of the output's shape and cannot trade
/// places with `b` (oneDNN broadcasts only a binary op's second operand):
/// one step adds `a` to zeros of the output's shape and applies `op b` as
/// its post-op. Exact but for the sign of a zero `a`. Where oneDNN has only
/// its reference kernel for that step (both operands broadcast on different
/// axes: DeBERTa's [1,1,1,S] x [1,1,S,1] mask, 2 ms at S = 128, a hundred
/// times its jit kernel's time), the same as two merged binary steps: zeros
/// + a, then that op b.
Result<void> lower_binary_widened(PlanBuilder& b, const Node& n, algorithm alg, const dims_t& out) {
  const size_t r = out.size();
  const ValueId v0 = n.inputs[0], v1 = n.inputs[1];
  const md_t full = plain_md(r ? out : dims_t{1});
  const md_t m0 = plain_md(r ? pad_left(b.value(v0).dims, r) : dims_t{1});
  const md_t m1 = plain_md(r ? pad_left(b.value(v1).dims, r) : dims_t{1});
  const BufferRef zeros{b.new_constant(Tensor::zeros(DType::kF32, out)), full};
  dnnl::post_ops po;
  po.append_binary(alg, m1);
  dnnl::primitive_attr attr = user_scratch();
  attr.set_post_ops(po);
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm::binary_add, full, m0, full), attr,
                                  cpu_engine());
  if (r > 0 && is_ref_impl(pd)) {
    const BufferRef a = add_merged_binary(b, algorithm::binary_add, zeros.buffer,
                                          b.plain(v0).buffer, out, pad_left(b.value(v0).dims, r));
    const BufferRef dst =
        add_merged_binary(b, alg, a.buffer, b.plain(v1).buffer, out, pad_left(b.value(v1).dims, r));
    b.set(n.outputs[0], PValue{out, dst});
    return {};
  }
  const BufferRef dst{b.new_temp(full), full};
  b.add_step("binary", dnnl::binary(pd), pd,
             {{DNNL_ARG_SRC_0, zeros},
              {DNNL_ARG_SRC_1, {b.plain(v0).buffer, m0}},
              {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {b.plain(v1).buffer, m1}},
              {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst});
  return {};
}

Result<void> lower_binary(PlanBuilder& b, const Node& n, algorithm alg) {
  ValueId v0 = n.inputs[0], v1 = n.inputs[1];
  HONE_TRY(dims_t out, ops::broadcast_shapes({b.value(v0).dims, b.value(v1).dims}));
  const size_t r = out.size();
  const bool commutative = alg == algorithm::binary_add || alg == algorithm::binary_mul ||
                           alg == algorithm::binary_max || alg == algorithm::binary_min;
  if (pad_left(b.value(v0).dims, r) != out) {
    if (!commutative || pad_left(b.value(v1).dims, r) != out)
      return lower_binary_widened(b, n, alg, out);
    std::swap(v0, v1);
  }
  const bool same = pad_left(b.value(v1).dims, r) == out;
  const md_t m1_plain = plain_md(pad_left(b.value(v1).dims, r));
  // Where the first operand lives (kept: its own layout, else a layout it is
  // reordered into) and the layout of a broadcast second operand.
  struct Layouts {
    std::optional<md_t> s0;  // nullopt: plain
    md_t m1;
  };
  // oneDNN 2.6's jit binary broadcasts a plain second operand only over
  // plain or channels-last sources; over a channel-blocked one it needs the
  // operand in the same blocking of the vector's width (16 on AVX-512), and
  // otherwise takes its reference kernel, 40 times slower (regnet_y_400mf's
  // squeeze-and-excitation Mul on nChw8c: 38 ms of 47). So: the kept layout
  // with a plain operand, the kept layout with the operand in the same
  // blocking, the source in channels-last, and plain last.
  std::vector<Layouts> tries;
  const PValue& x0 = b.value(v0);
  if (x0.dims.size() == r) {
    tries.push_back({x0.ref.md, m1_plain});
    if (!same && !is_plain(x0.ref.md))
      for (auto t : native_tags(r))
        if (x0.ref.md == md_t(out, memory::data_type::f32, t))
          tries.push_back(
              {x0.ref.md, md_t(pad_left(b.value(v1).dims, r), memory::data_type::f32, t)});
    if (!same && !is_plain(x0.ref.md) && !native_tags(r).empty())
      tries.push_back({md_t(out, memory::data_type::f32, native_tags(r)[0]), m1_plain});
  }
  tries.push_back({std::nullopt, m1_plain});
  // Plain with the dims that broadcast alike merged (add_merged_binary): the
  // last resort where it has fewer dims.
  int merged_rank = 0;
  {
    const dims_t p1 = pad_left(b.value(v1).dims, r);
    std::optional<bool> last_bc;
    for (size_t i = 0; i < r; ++i) {
      if (out[i] == 1 || (last_bc && *last_bc == (p1[i] == 1))) continue;
      last_bc = p1[i] == 1;
      ++merged_rank;
    }
  }
  const bool collapsible = !same && static_cast<size_t>(std::max(merged_rank, 1)) < r;
  auto attempt_collapsed = [&]() {
    const BufferRef dst = add_merged_binary(b, alg, b.plain(v0).buffer, b.plain(v1).buffer, out,
                                            pad_left(b.value(v1).dims, r));
    b.set(n.outputs[0], PValue{out, dst});
  };
  auto attempt = [&](const Layouts& l, bool last) -> std::optional<dnnl::binary::primitive_desc> {
    const md_t s0_md = l.s0 ? *l.s0 : plain_md(out);
    const md_t m1 = same ? s0_md : l.m1;
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, s0_md, m1, any_md(r ? out : dims_t{1})),
                                    user_scratch(), cpu_engine());
    if (!last && is_ref_impl(pd)) return std::nullopt;
    BufferRef s0 = l.s0 ? b.ensure(v0, *l.s0) : BufferRef{b.plain(v0).buffer, plain_md(out)};
    // A second operand of lower rank that only lacks leading 1s ([T,D] added
    // to [1,T,D]) is the same bytes under the output's dims first: a reorder
    // cannot change the rank.
    BufferRef s1;
    if (!same)
      s1 = b.reorder_to(BufferRef{b.plain(v1).buffer, m1_plain}, m1);
    else if (b.value(v1).dims.size() == r)
      s1 = b.ensure(v1, s0.md);
    else
      s1 = b.reorder_to(BufferRef{b.plain(v1).buffer, plain_md(out)}, s0.md);
    BufferRef dst{b.new_temp(pd.dst_desc()), pd.dst_desc()};
    b.add_step("binary", dnnl::binary(pd), pd,
               {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, dst}});
    b.set(n.outputs[0], PValue{out, dst});
    return pd;
  };
  for (size_t i = 0; i < tries.size(); ++i) {
    const bool last = i + 1 == tries.size() && !collapsible;
    try {
      if (attempt(tries[i], last)) return {};
    } catch (const dnnl::error&) {
      if (last) throw;
    }
  }
  attempt_collapsed();
  return {};
}

Result<void> lower_pool(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dims.size() < 3)
    return fail(ErrorCode::kInvalidArgument, "pooling needs N, C and spatial dims");
  const size_t sp = x.dims.size() - 2;
  const dims_t in(x.dims.begin() + 2, x.dims.end());
  const bool global = n.op_type.starts_with("Global");
  ops::PoolAttrs pa;
  ops::ConvAttrs wa;  // the window attributes
  if (!global) {
    HONE_TRY(pa, ops::pool_attrs(n));
    HONE_TRY(wa, ops::conv_attrs(n));
  }
  const dims_t kernel = global ? in : pa.kernel_shape;
  const dims_t strides = global || wa.strides.empty() ? dims_t(sp, 1) : wa.strides;
  const dims_t dil = global || wa.dilations.empty() ? dims_t(sp, 1) : wa.dilations;
  Window win;
  if (global) {
    win = Window{dims_t(sp, 1), dims_t(sp, 0), dims_t(sp, 0)};
  } else {
    HONE_TRY(win, sliding_window(n, in, kernel, pa.ceil_mode));
  }
  algorithm alg = algorithm::pooling_max;
  if (n.op_type.ends_with("AveragePool"))
    alg = pa.count_include_pad ? algorithm::pooling_avg_include_padding
                               : algorithm::pooling_avg_exclude_padding;
  dims_t dst{x.dims[0], x.dims[1]};
  dst.insert(dst.end(), win.out.begin(), win.out.end());
  dims_t dil0;
  for (int64_t d : dil) dil0.push_back(d - 1);
  // One channel in plain layout is byte for byte channels-last, which
  // oneDNN pools with a vectorized kernel (plain gets its scalar one).
  BufferRef view = usual(b, n.inputs[0]);
  const auto tags = native_tags(x.dims.size());
  if (x.dims[1] == 1 && is_plain(view.md) && !tags.empty())
    view.md = md_t(x.dims, memory::data_type::f32, tags[0]);
  dnnl::pooling_v2_forward::primitive_desc pd(
      dnnl::pooling_v2_forward::desc(kInfer, alg, view.md, any_md(dst), strides, kernel, dil0,
                                     win.pad_l, win.pad_r),
      user_scratch(), cpu_engine());
  BufferRef src = pd.src_desc() == view.md ? view : b.ensure(n.inputs[0], pd.src_desc());
  BufferRef out{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  b.add_step("pooling", dnnl::pooling_v2_forward(pd), pd,
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, out}});
  b.set(n.outputs[0], PValue{dst, out});
  return {};
}

Result<void> lower_softmax(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  HONE_TRY(const ops::SoftmaxAttrs sa, ops::softmax_attrs(n, b.graph().opset("")));
  const bool legacy = sa.coerce_2d;
  const int64_t axis = normalize_axis(sa.axis, x.dims.size());
  if (axis < 0 || axis >= static_cast<int64_t>(std::max<size_t>(x.dims.size(), 1)))
    return fail(ErrorCode::kInvalidArgument,
                "softmax axis out of range for " + shape_to_string(x.dims));
  BufferRef src = b.plain(n.inputs[0]);
  const md_t md = legacy ? plain_md(split2(x.dims, axis)) : plain_md(x.dims);
  const int a = legacy ? 1 : static_cast<int>(x.dims.empty() ? 0 : axis);
  const algorithm alg =
      n.op_type == "LogSoftmax" ? algorithm::softmax_log : algorithm::softmax_accurate;
  dnnl::softmax_v2_forward::primitive_desc pd(
      dnnl::softmax_v2_forward::desc(kInfer, alg, md, md, a), user_scratch(), cpu_engine());
  const int out = b.new_temp(md);
  b.add_step("softmax", dnnl::softmax_v2_forward(pd), pd,
             {{DNNL_ARG_SRC, {src.buffer, md}}, {DNNL_ARG_DST, {out, md}}});
  b.set(n.outputs[0], PValue{x.dims, {out, plain_md(x.dims)}});
  return {};
}

BufferRef vector_constant(PlanBuilder& b, ValueId v) {
  const Tensor& t = *b.constant(v);
  return BufferRef{b.new_constant(t), plain_md({t.numel()})};
}

Result<void> lower_layernorm(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  const int64_t axis = normalize_axis(na.axis, x.dims.size());
  if (x.dims.empty() || axis < 0 || axis >= static_cast<int64_t>(x.dims.size()))
    return fail(ErrorCode::kInvalidArgument,
                "LayerNormalization axis out of range for " + shape_to_string(x.dims));
  const dims_t flat = split2(x.dims, axis);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  for (size_t i = 1; i < (has_bias ? 3u : 2u); ++i)
    if (b.constant(n.inputs[i]) == nullptr || b.constant(n.inputs[i])->numel() != flat[1])
      return fail(ErrorCode::kUnsupported,
                  "LayerNormalization scale and bias must be constants of the normalized size");
  auto flags = dnnl::normalization_flags::use_scale;
  if (has_bias) flags = flags | dnnl::normalization_flags::use_shift;
  const md_t md = plain_md(flat);
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(kInfer, md, na.epsilon, flags), user_scratch(),
      cpu_engine());
  BufferRef src = b.plain(n.inputs[0]);
  const int out = b.new_temp(md);
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC, {src.buffer, md}},
                                              {DNNL_ARG_SCALE, vector_constant(b, n.inputs[1])},
                                              {DNNL_ARG_DST, {out, md}}};
  if (has_bias) args.push_back({DNNL_ARG_SHIFT, vector_constant(b, n.inputs[2])});
  b.add_step("layernorm", dnnl::layer_normalization_forward(pd), pd, std::move(args));
  b.set(n.outputs[0], PValue{x.dims, {out, plain_md(x.dims)}});
  return {};
}

/// InstanceNormalization: oneDNN's layer normalization over the spatial
/// elements of each (n, c) row, without its scale and shift (those are per
/// normalized element, InstanceNormalization's per channel), then scale and
/// bias per channel as one binary step with an add post-op; skipped where
/// they are ones and zeros (PyTorch exports GroupNorm so, and multiplies by
/// its own weight after a Reshape back).
Result<void> lower_instancenorm(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dims.size() < 3)
    return fail(
        ErrorCode::kInvalidArgument,
        "InstanceNormalization needs N, C and a spatial axis, got " + shape_to_string(x.dims));
  const int64_t c = x.dims[1];
  const Tensor* scale = b.constant(n.inputs[1]);
  const Tensor* bias = b.constant(n.inputs[2]);
  if (scale == nullptr || bias == nullptr || scale->numel() != c || bias->numel() != c ||
      scale->dtype() != DType::kF32 || bias->dtype() != DType::kF32)
    return fail(ErrorCode::kUnsupported,
                "InstanceNormalization scale and B must be f32 constants of C elements");
  const dims_t rows = split2(x.dims, 2);  // [N*C, spatial]
  if (rows[0] == 0 || rows[1] == 0)
    return fail(ErrorCode::kUnsupported,
                "InstanceNormalization of an empty tensor " + shape_to_string(x.dims));
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  const md_t md = plain_md(rows);
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(kInfer, md, na.epsilon,
                                              dnnl::normalization_flags::none),
      user_scratch(), cpu_engine());
  const BufferRef src = b.plain(n.inputs[0]);
  const int normed = b.new_temp(md);
  b.add_step("layernorm", dnnl::layer_normalization_forward(pd), pd,
             {{DNNL_ARG_SRC, {src.buffer, md}}, {DNNL_ARG_DST, {normed, md}}});
  const md_t full = plain_md(x.dims);
  bool identity = true;
  for (int64_t i = 0; i < c; ++i)
    identity = identity && scale->data<float>()[i] == 1.0f && bias->data<float>()[i] == 0.0f;
  if (identity) {
    b.set(n.outputs[0], PValue{x.dims, {normed, full}});
    return {};
  }
  dims_t per_channel(x.dims.size(), 1);
  per_channel[1] = c;
  const md_t cmd = plain_md(per_channel);
  dnnl::post_ops po;
  po.append_binary(algorithm::binary_add, cmd);
  dnnl::primitive_attr attr = user_scratch();
  attr.set_post_ops(po);
  dnnl::binary::primitive_desc bpd(dnnl::binary::desc(algorithm::binary_mul, full, cmd, full), attr,
                                   cpu_engine());
  const BufferRef dst{b.new_temp(full), full};
  b.add_step("binary", dnnl::binary(bpd), bpd,
             {{DNNL_ARG_SRC_0, {normed, full}},
              {DNNL_ARG_SRC_1, {b.new_constant(*scale), cmd}},
              {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {b.new_constant(*bias), cmd}},
              {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{x.dims, dst});
  return {};
}

}  // namespace

bool eltwise_spec(const PlanBuilder& b, const Node& n, EltwiseSpec* out) {
  const std::string& op = n.op_type;
  EltwiseSpec s;
  if (op == "Relu") {
    s.alg = algorithm::eltwise_relu;
  } else if (op == "LeakyRelu") {
    const auto p = ops::unary_params(n, *ops::find_unary(op));
    if (!p) return false;
    s = {algorithm::eltwise_relu, p->a, 0, false};
  } else if (op == "Sigmoid") {
    s.alg = algorithm::eltwise_logistic;
  } else if (op == "Tanh") {
    s.alg = algorithm::eltwise_tanh;
  } else if (op == "Elu") {
    const auto p = ops::unary_params(n, *ops::find_unary(op));
    if (!p) return false;
    s = {algorithm::eltwise_elu, p->a, 0, false};
  } else if (op == "HardSwish") {
    s.alg = algorithm::eltwise_hardswish;
  } else if (op == "Sqrt") {
    s.alg = algorithm::eltwise_sqrt;
  } else if (op == "Exp") {
    s.alg = algorithm::eltwise_exp;
  } else if (op == "Abs") {
    s.alg = algorithm::eltwise_abs;
  } else if (op == "Neg") {
    s = {algorithm::eltwise_linear, -1.0f, 0.0f, false};
  } else if (op == "Reciprocal") {
    // x^-1: oneDNN's jit divides (1 / x, bit for bit, ±0, ±inf and NaN too).
    s = {algorithm::eltwise_pow, 1.0f, -1.0f, false};
  } else if (op == "Pow") {
    const Tensor* e = n.inputs.size() == 2 ? b.constant(n.inputs[1]) : nullptr;
    if (e == nullptr || e->numel() != 1 || e->dtype() != DType::kF32) return false;
    s = {algorithm::eltwise_pow, 1.0f, e->data<float>()[0], false};
  } else if (op == "Gelu") {
    // What the graph passes turn the spelled-out erf and tanh forms into.
    const auto approx = ops::gelu_approx(n);
    if (!approx) return false;
    s.alg = *approx == ops::GeluApprox::kNone ? algorithm::eltwise_gelu_erf
                                              : algorithm::eltwise_gelu_tanh;
  } else if (op == "HardSigmoid") {
    const auto p = ops::unary_params(n, *ops::find_unary(op));
    if (!p) return false;
    s = {algorithm::eltwise_linear, p->a, p->b, true};
  } else if (op == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (n.has_attr("min") || n.has_attr("max")) {
      const ops::ClipAttrs c = ops::clip_attrs(n);
      lo = c.min;
      hi = c.max;
    }
    for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
      if (n.inputs[i] < 0) continue;
      const Tensor* t = b.constant(n.inputs[i]);
      if (t == nullptr || t->numel() != 1 || t->dtype() != DType::kF32) return false;
      (i == 1 ? lo : hi) = t->data<float>()[0];
    }
    s = {algorithm::eltwise_clip, lo, hi, false};
  } else {
    return false;
  }
  *out = s;
  return true;
}

Result<void> lower_simple(PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (std::vector<const Node*> sw;
      op == "Sigmoid" && match_swish(b.graph(), n.inputs[0], &sw) && sw[0] == &n) {
    b.absorb(sw[1]);
    Node as_swish = n;
    as_swish.outputs = sw[1]->outputs;
    return lower_eltwise(b, as_swish, EltwiseSpec{algorithm::eltwise_swish, 1.0f, 0, false});
  }
  EltwiseSpec es;
  if (eltwise_spec(b, n, &es)) return lower_eltwise(b, n, es);
  if (op == "Div") {
    std::vector<const Node*> rest;
    if (match_gelu(b.graph(), n, &rest)) {
      for (const Node* r : rest) b.absorb(r);
      Node last = *rest.back();
      Node as_gelu = n;
      as_gelu.outputs = last.outputs;
      return lower_eltwise(b, as_gelu, EltwiseSpec{algorithm::eltwise_gelu_erf, 0, 0, false});
    }
  }
  if (op == "Add") {
    std::vector<const Node*> hs;
    for (ValueId y : n.inputs)
      if (match_hardswish(b.graph(), y, &hs) && hs[0] == &n) {
        for (size_t i = 1; i < hs.size(); ++i) b.absorb(hs[i]);
        Node as_hardswish = n;
        as_hardswish.inputs = {y};
        as_hardswish.outputs = hs.back()->outputs;
        return lower_eltwise(b, as_hardswish,
                             EltwiseSpec{algorithm::eltwise_hardswish, 0, 0, false});
      }
    return lower_binary(b, n, algorithm::binary_add);
  }
  if (op == "Sub") return lower_binary(b, n, algorithm::binary_sub);
  if (op == "Max") return lower_binary(b, n, algorithm::binary_max);
  if (op == "Min") return lower_binary(b, n, algorithm::binary_min);
  if (op == "Mul") return lower_binary(b, n, algorithm::binary_mul);
  if (op == "Div") return lower_binary(b, n, algorithm::binary_div);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return lower_pool(b, n);
  if (op == "Softmax" || op == "LogSoftmax") return lower_softmax(b, n);
  if (op == "BatchNormalization") return lower_batchnorm(b, n);
  if (op == "LayerNormalization") return lower_layernorm(b, n);
  if (op == "InstanceNormalization") return lower_instancenorm(b, n);
  if (op.starts_with("Reduce")) return lower_reduce(b, n);  // lower_reduce.cpp
  return lower_shape(b, n);
}

}  // namespace hone::onednn
