// Element-wise, binary, pooling, softmax, normalization and layout ops as
// oneDNN primitives (or, for reshapes, as metadata over the same buffer).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "backends/onednn/pattern.h"
#include "backends/onednn/plan.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::onednn {
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

/// `a op b` where `a` is short of the output's shape and cannot trade
/// places with `b` (oneDNN broadcasts only a binary op's second operand):
/// one step adds `a` to zeros of the output's shape and applies `op b` as
/// its post-op. Exact but for the sign of a zero `a`.
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
  auto attempt = [&](bool keep_layout) -> dnnl::binary::primitive_desc {
    BufferRef s0 = keep_layout && b.value(v0).dims.size() == r ? b.value(v0).ref : b.plain(v0);
    if (!keep_layout || b.value(v0).dims.size() != r) s0.md = plain_md(out);
    const bool same = pad_left(b.value(v1).dims, r) == out;
    const md_t m1 = same ? s0.md : plain_md(pad_left(b.value(v1).dims, r));
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, s0.md, m1, any_md(r ? out : dims_t{1})),
                                    user_scratch(), cpu_engine());
    BufferRef s1 = same ? b.ensure(v1, s0.md) : BufferRef{b.plain(v1).buffer, m1};
    BufferRef dst{b.new_temp(pd.dst_desc()), pd.dst_desc()};
    b.add_step("binary", dnnl::binary(pd), pd,
               {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, dst}});
    b.set(n.outputs[0], PValue{out, dst});
    return pd;
  };
  try {
    attempt(true);
  } catch (const dnnl::error&) {
    attempt(false);
  }
  return {};
}

/// The non-plain layouts a conv leaves its output in, by rank.
std::vector<memory::format_tag> native_tags(size_t rank) {
  using tag = memory::format_tag;
  if (rank == 3) return {tag::acb, tag::aBc16b, tag::aBc8b};
  if (rank == 4) return {tag::acdb, tag::aBcd16b, tag::aBcd8b};
  if (rank == 5) return {tag::acdeb, tag::aBcde16b, tag::aBcde8b};
  return {};
}

Result<void> lower_pool(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dims.size() < 3)
    return fail(ErrorCode::kInvalidArgument, "pooling needs N, C and spatial dims");
  const size_t sp = x.dims.size() - 2;
  const dims_t in(x.dims.begin() + 2, x.dims.end());
  const bool global = n.op_type.starts_with("Global");
  const dims_t kernel = global ? in : n.attr_ints("kernel_shape");
  const dims_t strides = global ? dims_t(sp, 1) : n.attr_ints("strides", dims_t(sp, 1));
  const dims_t dil = global ? dims_t(sp, 1) : n.attr_ints("dilations", dims_t(sp, 1));
  Window win;
  if (global) {
    win = Window{dims_t(sp, 1), dims_t(sp, 0), dims_t(sp, 0)};
  } else {
    HONE_TRY(win, sliding_window(n, in, kernel, n.attr_int("ceil_mode", 0) != 0));
  }
  algorithm alg = algorithm::pooling_max;
  if (n.op_type.ends_with("AveragePool"))
    alg = n.attr_int("count_include_pad", 0) ? algorithm::pooling_avg_include_padding
                                             : algorithm::pooling_avg_exclude_padding;
  dims_t dst{x.dims[0], x.dims[1]};
  dst.insert(dst.end(), win.out.begin(), win.out.end());
  dims_t dil0;
  for (int64_t d : dil) dil0.push_back(d - 1);
  // One channel in plain layout is byte for byte channels-last, which
  // oneDNN pools with a vectorized kernel (plain gets its scalar one).
  BufferRef view = x.ref;
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

/// supports() has checked the axis; ops/axis.h maps it.
int64_t normalize_axis(int64_t axis, size_t rank) {
  return ops::try_normalize_axis(axis, static_cast<int64_t>(rank)).value_or(axis);
}

dims_t split2(const dims_t& d, int64_t axis) {
  const auto mid = d.begin() + axis;
  return {std::accumulate(d.begin(), mid, int64_t{1}, std::multiplies<>()),
          std::accumulate(mid, d.end(), int64_t{1}, std::multiplies<>())};
}

Result<void> lower_softmax(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const bool legacy = b.graph().opset("") < 13;
  const int64_t axis = normalize_axis(n.attr_int("axis", legacy ? 1 : -1), x.dims.size());
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

Result<void> lower_batchnorm(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dims.size() < 2)
    return fail(ErrorCode::kInvalidArgument, "BatchNormalization needs N and C dims");
  for (size_t i = 1; i < 5; ++i)
    if (b.constant(n.inputs[i]) == nullptr || b.constant(n.inputs[i])->numel() != x.dims[1])
      return fail(ErrorCode::kUnsupported,
                  "BatchNormalization parameters must be constants of C elements");
  const auto flags = dnnl::normalization_flags::use_global_stats |
                     dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(kInfer, x.ref.md, n.attr_float("epsilon", 1e-5f),
                                              flags),
      user_scratch(), cpu_engine());
  BufferRef src = b.ensure(n.inputs[0], pd.src_desc());
  BufferRef out{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  b.add_step("batchnorm", dnnl::batch_normalization_forward(pd), pd,
             {{DNNL_ARG_SRC, src},
              {DNNL_ARG_SCALE, vector_constant(b, n.inputs[1])},
              {DNNL_ARG_SHIFT, vector_constant(b, n.inputs[2])},
              {DNNL_ARG_MEAN, vector_constant(b, n.inputs[3])},
              {DNNL_ARG_VARIANCE, vector_constant(b, n.inputs[4])},
              {DNNL_ARG_DST, out}});
  b.set(n.outputs[0], PValue{x.dims, out});
  return {};
}

Result<void> lower_layernorm(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const int64_t axis = normalize_axis(n.attr_int("axis", -1), x.dims.size());
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
      dnnl::layer_normalization_forward::desc(kInfer, md, n.attr_float("epsilon", 1e-5f), flags),
      user_scratch(), cpu_engine());
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

/// Same bytes, new logical dims (needs the plain layout).
void alias(PlanBuilder& b, const Node& n, dims_t dims) {
  BufferRef src = b.plain(n.inputs[0]);
  b.set(n.outputs[0], PValue{dims, {src.buffer, plain_md(dims)}});
}

/// ReduceMean/Sum/Max/Min over constant axes: oneDNN's reduction primitive on
/// the plain layout, reduced axes kept as 1 (then dropped without a copy).
Result<void> lower_reduce(PlanBuilder& b, const Node& n) {
  static const std::map<std::string, algorithm> kAlg = {{"ReduceMean", algorithm::reduction_mean},
                                                        {"ReduceSum", algorithm::reduction_sum},
                                                        {"ReduceMax", algorithm::reduction_max},
                                                        {"ReduceMin", algorithm::reduction_min}};
  const dims_t in = b.value(n.inputs[0]).dims;
  dims_t axes = n.attr_ints("axes");
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || t->dtype() != DType::kI64)
      return fail(ErrorCode::kUnsupported, n.op_type + " needs constant i64 axes");
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  }
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0)
    return fail(ErrorCode::kUnsupported, n.op_type + " with noop_with_empty_axes and no axes");
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) {
    const int64_t k = a < 0 ? a + static_cast<int64_t>(in.size()) : a;
    if (k < 0 || k >= static_cast<int64_t>(in.size()))
      return fail(ErrorCode::kInvalidArgument, n.op_type + " axis " + std::to_string(a) +
                                                   " is out of range for rank " +
                                                   std::to_string(in.size()));
    reduced[static_cast<size_t>(k)] = true;
  }
  dims_t kept, squeezed;
  for (size_t i = 0; i < in.size(); ++i) {
    kept.push_back(reduced[i] ? 1 : in[i]);
    if (!reduced[i]) squeezed.push_back(in[i]);
  }
  for (int64_t d : in)
    if (d == 0) return fail(ErrorCode::kUnsupported, n.op_type + " of an empty tensor");
  const dims_t out = n.attr_int("keepdims", 1) != 0 ? kept : squeezed;
  if (kept == in) {
    // Every reduced axis has one element: the result is the input (oneDNN
    // refuses a reduction whose source and destination are alike).
    alias(b, n, out);
    return {};
  }
  const BufferRef src = b.plain(n.inputs[0]);
  const md_t dst = plain_md(kept);
  dnnl::reduction::primitive_desc pd(
      dnnl::reduction::desc(kAlg.at(n.op_type), src.md, dst, 0.0f, 0.0f), user_scratch(),
      cpu_engine());
  const int buf = b.new_temp(dst);
  b.add_step("reduction", dnnl::reduction(pd), pd,
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, {buf, dst}}});
  b.set(n.outputs[0], PValue{out, {buf, plain_md(out)}});
  return {};
}

Result<void> lower_reshape(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const Tensor* shape = b.constant(n.inputs[1]);
  if (shape == nullptr || shape->dtype() != DType::kI64)
    return fail(ErrorCode::kUnsupported, "Reshape needs a constant i64 shape");
  const bool allowzero = n.attr_int("allowzero", 0) != 0;
  dims_t out(shape->data<int64_t>(), shape->data<int64_t>() + shape->numel());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size())
        return fail(ErrorCode::kInvalidArgument, "Reshape copies a dim the input lacks");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      infer = static_cast<int64_t>(i);
      continue;
    }
    known *= out[i];
  }
  const int64_t numel = shape_numel(in);
  if (infer >= 0) {
    if (known == 0 || numel % known)
      return fail(ErrorCode::kInvalidArgument, "Reshape cannot infer the -1 dim");
    out[static_cast<size_t>(infer)] = numel / known;
  }
  if (shape_numel(out) != numel)
    return fail(ErrorCode::kInvalidArgument, "Reshape of " + shape_to_string(in) + " to " +
                                                 shape_to_string(out) +
                                                 " changes the element count");
  alias(b, n, out);
  return {};
}

/// Squeeze and Unsqueeze: the same bytes under new dims.
Result<void> lower_squeeze(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  dims_t axes = n.attr_ints("axes");
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || t->dtype() != DType::kI64)
      return fail(ErrorCode::kUnsupported, n.op_type + " needs constant i64 axes");
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  }
  const bool squeeze = n.op_type == "Squeeze";
  const int64_t rank = static_cast<int64_t>(in.size() + (squeeze ? 0 : axes.size()));
  std::vector<bool> marked(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t k = ops::try_normalize_axis(a, rank).value_or(-1);
    if (k < 0 || k >= rank || marked[static_cast<size_t>(k)])
      return fail(ErrorCode::kInvalidArgument, n.op_type + " axis " + std::to_string(a) +
                                                   " is out of range or repeated for rank " +
                                                   std::to_string(rank));
    if (squeeze && in[static_cast<size_t>(k)] != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "Squeeze axis " + std::to_string(a) + " of " + shape_to_string(in) + " is not 1");
    marked[static_cast<size_t>(k)] = true;
  }
  dims_t out;
  if (squeeze) {
    for (size_t i = 0; i < in.size(); ++i)
      if (axes.empty() ? in[i] != 1 : !marked[i]) out.push_back(in[i]);
  } else {
    for (size_t i = 0, next = 0; i < static_cast<size_t>(rank); ++i)
      out.push_back(marked[i] ? 1 : in[next++]);
  }
  alias(b, n, out);
  return {};
}

/// The layout tag of `md` among native_tags(), or undef.
memory::format_tag layout_tag(const md_t& md) {
  for (memory::format_tag t : native_tags(md.dims().size()))
    if (md == md_t(md.dims(), memory::data_type::f32, t)) return t;
  return memory::format_tag::undef;
}

/// The non-plain layout that every computed value of `vs` is in (constants
/// are packed into it), or nothing.
std::optional<memory::format_tag> shared_layout(const PlanBuilder& b,
                                                const std::vector<ValueId>& vs) {
  std::optional<memory::format_tag> shared;
  for (ValueId v : vs) {
    if (const Tensor* c = b.constant(v)) {
      if (c->dtype() != DType::kF32) return std::nullopt;
      continue;
    }
    const md_t& md = b.value(v).ref.md;
    const memory::format_tag t =
        md.data_type() == memory::data_type::f32 ? layout_tag(md) : memory::format_tag::undef;
    if (t == memory::format_tag::undef || (shared && *shared != t)) return std::nullopt;
    shared = t;
  }
  return shared;
}

Result<void> lower_concat(PlanBuilder& b, const Node& n) {
  std::vector<ValueId> srcs;
  for (ValueId v : n.inputs)
    if (v >= 0) srcs.push_back(v);
  if (srcs.empty()) return fail(ErrorCode::kInvalidArgument, "Concat without inputs");
  const dims_t first = b.value(srcs[0]).dims;
  const int64_t axis = normalize_axis(n.attr_int("axis", 0), first.size());
  if (first.empty() || axis < 0 || axis >= static_cast<int64_t>(first.size()))
    return fail(ErrorCode::kInvalidArgument,
                "Concat axis out of range for " + shape_to_string(first));
  dims_t out = first;
  out[static_cast<size_t>(axis)] = 0;
  std::vector<md_t> mds;
  std::vector<std::pair<int, BufferRef>> args;
  std::vector<ValueId> kept;
  for (ValueId v : srcs) {
    const dims_t d = b.value(v).dims;
    for (size_t i = 0; i < d.size(); ++i)
      if (d.size() != first.size() || (static_cast<int64_t>(i) != axis && d[i] != first[i]))
        return fail(ErrorCode::kInvalidArgument, "Concat of " + shape_to_string(first) + " and " +
                                                     shape_to_string(d) + " on axis " +
                                                     std::to_string(axis));
    // oneDNN refuses empty sources; they add nothing.
    if (d[static_cast<size_t>(axis)] == 0) continue;
    out[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
    kept.push_back(v);
  }
  if (kept.empty()) return fail(ErrorCode::kUnsupported, "Concat of empty tensors only");
  // Sources that all live in one channels-last or channel-blocked layout are
  // joined in it (a conv net's skip connections): going through plain would
  // cost a reorder out of and back into that layout for every source.
  std::optional<memory::format_tag> shared = shared_layout(b, kept);
  // A channel-blocked join along channels is a plain copy only when no
  // source ends inside a block.
  const auto tags = native_tags(out.size());
  if (shared && axis == 1 && *shared != tags[0]) {
    const int64_t block = *shared == tags[1] ? 16 : 8;
    for (ValueId v : kept)
      if (b.value(v).dims[1] % block != 0) shared.reset();
  }
  for (ValueId v : kept) {
    const dims_t& d = b.value(v).dims;
    BufferRef src;
    if (!shared) {
      src = b.plain(v);
    } else if (const Tensor* c = b.constant(v)) {
      src = b.pack(*c, plain_md(d), md_t(d, memory::data_type::f32, *shared));
    } else {
      src = b.value(v).ref;
    }
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(mds.size()), src});
    mds.push_back(src.md);
  }
  const md_t dst_md = shared ? md_t(out, memory::data_type::f32, *shared) : plain_md(out);
  dnnl::concat::primitive_desc pd(dst_md, static_cast<int>(axis), mds, cpu_engine(),
                                  user_scratch());
  const BufferRef ref{b.new_temp(dst_md), dst_md};
  args.push_back({DNNL_ARG_DST, ref});
  b.add_step("concat", dnnl::concat(pd), pd, std::move(args));
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

/// Reads Slice's starts/ends/axes/steps (inputs from opset 10, attributes before).
Result<std::vector<int64_t>> slice_param(PlanBuilder& b, const Node& n, size_t input,
                                         const char* attr) {
  if (b.graph().opset("") < 10) return n.attr_ints(attr);
  if (input >= n.inputs.size() || n.inputs[input] < 0) return std::vector<int64_t>{};
  const Tensor* t = b.constant(n.inputs[input]);
  if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
    return fail(ErrorCode::kUnsupported,
                std::string("Slice ") + attr + " is not known when the plan is built");
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i)
    out.push_back(t->dtype() == DType::kI64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i]);
  return out;
}

/// Slice with positive steps: a strided view of the input, copied by a reorder.
Result<void> lower_slice(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const auto rank = static_cast<int64_t>(in.size());
  HONE_TRY(std::vector<int64_t> starts, slice_param(b, n, 1, "starts"));
  HONE_TRY(std::vector<int64_t> ends, slice_param(b, n, 2, "ends"));
  HONE_TRY(std::vector<int64_t> axes, slice_param(b, n, 3, "axes"));
  HONE_TRY(std::vector<int64_t> steps, slice_param(b, n, 4, "steps"));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return fail(ErrorCode::kInvalidArgument, "Slice starts, ends, axes and steps differ in length");
  if (in.empty()) return fail(ErrorCode::kInvalidArgument, "Slice of a scalar");
  dims_t strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  dims_t out = in, view_strides = strides;
  int64_t offset = 0;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = ops::try_normalize_axis(axes[k], rank).value_or(-1);
    if (a < 0)
      return fail(ErrorCode::kInvalidArgument, "Slice axis " + std::to_string(axes[k]) +
                                                   " out of range for " + shape_to_string(in));
    if (steps[k] <= 0)
      return fail(ErrorCode::kUnsupported, "Slice with a step of " + std::to_string(steps[k]));
    const int64_t dim = in[static_cast<size_t>(a)];
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + dim : i, 0, dim); };
    const int64_t start = clamp(starts[k]), end = clamp(ends[k]);
    const int64_t count = end > start ? (end - start + steps[k] - 1) / steps[k] : 0;
    if (count == 0) return fail(ErrorCode::kUnsupported, "Slice with an empty result");
    out[static_cast<size_t>(a)] = count;
    view_strides[static_cast<size_t>(a)] = strides[static_cast<size_t>(a)] * steps[k];
    offset += start * strides[static_cast<size_t>(a)];
  }
  const BufferRef src = b.plain(n.inputs[0]);
  md_t view(out, memory::data_type::f32, view_strides);
  view.data.offset0 = offset;  // the view starts at the first selected element
  const md_t dst = plain_md(out);
  dnnl::reorder::primitive_desc pd(cpu_engine(), view, cpu_engine(), dst, user_scratch());
  const BufferRef ref{b.new_temp(dst), dst};
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, view}}, {DNNL_ARG_TO, ref}});
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

/// Split: each output a view of the input along the axis, copied by a
/// reorder. The sizes come from the `split` input (opset 13) or attribute,
/// else equal parts (the last smaller under opset 18's num_outputs).
Result<void> lower_split(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  const auto rank = static_cast<int64_t>(in.size());
  const int64_t a = ops::try_normalize_axis(n.attr_int("axis", 0), rank).value_or(-1);
  if (a < 0)
    return fail(ErrorCode::kInvalidArgument, "Split axis " + std::to_string(n.attr_int("axis", 0)) +
                                                 " out of range for " + shape_to_string(in));
  const int64_t dim = in[static_cast<size_t>(a)];
  std::vector<int64_t> sizes;
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported, "Split sizes are not known when the plan is built");
    for (int64_t i = 0; i < t->numel(); ++i)
      sizes.push_back(t->dtype() == DType::kI64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i]);
  } else if (n.has_attr("split")) {
    sizes = n.attr_ints("split");
  } else {
    const auto parts = static_cast<int64_t>(n.outputs.size());
    const int64_t each = (dim + parts - 1) / parts;
    for (int64_t k = 0, left = dim; k < parts; ++k, left -= each)
      sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (sizes.size() != n.outputs.size() || total != dim)
    return fail(ErrorCode::kInvalidArgument,
                "Split sizes do not add up to axis " + std::to_string(a) + " of " +
                    shape_to_string(in) + " in " + std::to_string(n.outputs.size()) + " parts");
  dims_t strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  const BufferRef src = b.plain(n.inputs[0]);
  int64_t start = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const int64_t count = sizes[k];
    if (n.outputs[k] >= 0) {
      if (count == 0) return fail(ErrorCode::kUnsupported, "Split with an empty part");
      dims_t out = in;
      out[static_cast<size_t>(a)] = count;
      md_t view(out, memory::data_type::f32, strides);
      view.data.offset0 = start * strides[static_cast<size_t>(a)];
      const md_t dst = plain_md(out);
      dnnl::reorder::primitive_desc pd(cpu_engine(), view, cpu_engine(), dst, user_scratch());
      const BufferRef ref{b.new_temp(dst), dst};
      b.add_step("reorder", dnnl::reorder(pd), pd,
                 {{DNNL_ARG_FROM, {src.buffer, view}}, {DNNL_ARG_TO, ref}});
      b.set(n.outputs[k], PValue{out, ref});
    }
    start += count;
  }
  return {};
}

/// Pad in constant mode, its pads known when the plan is built: the output
/// is first copied from a constant holding the pad value, then the input
/// into its interior (two reorders). Pads of zero alias the input; a
/// negative pad (a crop) is refused.
Result<void> lower_pad(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const size_t r = x.dims.size();
  std::vector<int64_t> pads;
  double value = 0;
  std::vector<int64_t> axes;
  auto ints = [&](size_t i, const char* what) -> Result<std::vector<int64_t>> {
    const Tensor* t = b.constant(n.inputs[i]);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported,
                  std::string("Pad ") + what + " are not known when the plan is built");
    std::vector<int64_t> out;
    for (int64_t k = 0; k < t->numel(); ++k)
      out.push_back(static_cast<int64_t>(tensor_element_as_double(*t, k)));
    return out;
  };
  if (b.graph().opset("") < 11) {
    pads = n.attr_ints("pads");
    value = n.attr_float("value", 0.0f);
  } else {
    HONE_TRY(pads, ints(1, "pads"));
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* v = b.constant(n.inputs[2]);
      if (v == nullptr || v->numel() != 1)
        return fail(ErrorCode::kUnsupported, "Pad's constant_value is not a known scalar");
      value = tensor_element_as_double(*v, 0);
    }
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
      HONE_TRY(axes, ints(3, "axes"));
    }
  }
  if (axes.empty())
    for (size_t a = 0; a < r; ++a) axes.push_back(static_cast<int64_t>(a));
  if (pads.size() != 2 * axes.size())
    return fail(ErrorCode::kInvalidArgument, "Pad has " + std::to_string(pads.size()) +
                                                 " pads for " + std::to_string(axes.size()) +
                                                 " axes of " + shape_to_string(x.dims));
  dims_t begin(r, 0), end(r, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = ops::try_normalize_axis(axes[k], static_cast<int64_t>(r)).value_or(-1);
    if (a < 0)
      return fail(ErrorCode::kInvalidArgument, "Pad axis " + std::to_string(axes[k]) +
                                                   " out of range for " + shape_to_string(x.dims));
    begin[static_cast<size_t>(a)] = pads[k];
    end[static_cast<size_t>(a)] = pads[k + axes.size()];
  }
  dims_t out = x.dims;
  bool none = true;
  for (size_t a = 0; a < r; ++a) {
    if (begin[a] < 0 || end[a] < 0)
      return fail(ErrorCode::kUnsupported, "Pad with a negative pad (a crop)");
    out[a] += begin[a] + end[a];
    none = none && begin[a] == 0 && end[a] == 0;
  }
  if (none) {
    b.set(n.outputs[0], x);
    return {};
  }
  const md_t dst = plain_md(out);
  Tensor fill = Tensor::zeros(DType::kF32, out);
  if (value != 0) std::fill_n(fill.data<float>(), fill.numel(), static_cast<float>(value));
  const BufferRef filled{b.new_constant(std::move(fill)), dst};
  const BufferRef ref{b.new_temp(dst), dst};
  dnnl::reorder::primitive_desc fill_pd(cpu_engine(), dst, cpu_engine(), dst, user_scratch());
  b.add_step("reorder", dnnl::reorder(fill_pd), fill_pd,
             {{DNNL_ARG_FROM, filled}, {DNNL_ARG_TO, ref}});
  dims_t strides(r, 1);
  for (size_t i = r - 1; i > 0; --i) strides[i - 1] = strides[i] * out[i];
  md_t interior(x.dims, memory::data_type::f32, strides);
  int64_t offset = 0;
  for (size_t a = 0; a < r; ++a) offset += begin[a] * strides[a];
  interior.data.offset0 = offset;
  const BufferRef src = b.plain(n.inputs[0]);
  dnnl::reorder::primitive_desc pd(cpu_engine(), src.md, cpu_engine(), interior, user_scratch());
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, {ref.buffer, interior}}});
  b.set(n.outputs[0], PValue{out, ref});
  return {};
}

Result<void> lower_transpose(PlanBuilder& b, const Node& n) {
  const dims_t in = b.value(n.inputs[0]).dims;
  dims_t perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != in.size())
    return fail(ErrorCode::kInvalidArgument, "Transpose perm has the wrong length");
  if (in.empty()) {
    alias(b, n, in);
    return {};
  }
  dims_t strides(in.size(), 1);
  for (size_t i = in.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * in[i];
  dims_t out(in.size()), view_strides(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const auto p = static_cast<size_t>(perm[i]);
    if (p >= in.size())
      return fail(ErrorCode::kInvalidArgument, "Transpose perm value out of range");
    out[i] = in[p];
    view_strides[i] = strides[p];
  }
  BufferRef src = b.plain(n.inputs[0]);
  const md_t view(out, memory::data_type::f32, view_strides), dst = plain_md(out);
  dnnl::reorder::primitive_desc pd(cpu_engine(), view, cpu_engine(), dst, user_scratch());
  const int buf = b.new_temp(dst);
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, view}}, {DNNL_ARG_TO, {buf, dst}}});
  b.set(n.outputs[0], PValue{out, {buf, dst}});
  return {};
}

}  // namespace

bool eltwise_spec(const PlanBuilder& b, const Node& n, EltwiseSpec* out) {
  const std::string& op = n.op_type;
  EltwiseSpec s;
  if (op == "Relu") {
    s.alg = algorithm::eltwise_relu;
  } else if (op == "LeakyRelu") {
    s = {algorithm::eltwise_relu, n.attr_float("alpha", 0.01f), 0, false};
  } else if (op == "Sigmoid") {
    s.alg = algorithm::eltwise_logistic;
  } else if (op == "Tanh") {
    s.alg = algorithm::eltwise_tanh;
  } else if (op == "Elu") {
    s = {algorithm::eltwise_elu, n.attr_float("alpha", 1.0f), 0, false};
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
  } else if (op == "Pow") {
    const Tensor* e = n.inputs.size() == 2 ? b.constant(n.inputs[1]) : nullptr;
    if (e == nullptr || e->numel() != 1 || e->dtype() != DType::kF32) return false;
    s = {algorithm::eltwise_pow, 1.0f, e->data<float>()[0], false};
  } else if (op == "Gelu") {
    // What the graph passes turn the spelled-out erf and tanh forms into.
    const std::string approx = n.attr_string("approximate", "none");
    if (approx != "none" && approx != "tanh") return false;
    s.alg = approx == "none" ? algorithm::eltwise_gelu_erf : algorithm::eltwise_gelu_tanh;
  } else if (op == "HardSigmoid") {
    s = {algorithm::eltwise_linear, n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f), true};
  } else if (op == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (n.has_attr("min") || n.has_attr("max")) {
      lo = n.attr_float("min", lo);
      hi = n.attr_float("max", hi);
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
  if (op == "Reshape") return lower_reshape(b, n);
  if (op == "Transpose") return lower_transpose(b, n);
  if (op == "Squeeze" || op == "Unsqueeze") return lower_squeeze(b, n);
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin")
    return lower_reduce(b, n);
  if (op == "Concat") return lower_concat(b, n);
  if (op == "Slice") return lower_slice(b, n);
  if (op == "Split") return lower_split(b, n);
  if (op == "Pad") return lower_pad(b, n);
  if (op == "Identity") {
    b.set(n.outputs[0], b.value(n.inputs[0]));
    return {};
  }
  if (op == "Flatten") {
    const dims_t in = b.value(n.inputs[0]).dims;
    const int64_t axis = normalize_axis(n.attr_int("axis", 1), in.size());
    if (axis < 0 || axis > static_cast<int64_t>(in.size()))
      return fail(ErrorCode::kInvalidArgument,
                  "Flatten axis out of range for " + shape_to_string(in));
    alias(b, n, split2(in, axis));
    return {};
  }
  return fail(ErrorCode::kUnsupported, "no oneDNN lowering for " + op);
}

}  // namespace hone::onednn
