// Conv, Gemm and MatMul as oneDNN primitives, with the nodes that follow them
// (bias/residual Add, activations, scaling) fused in as post-ops (fusion.h).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "backends/onednn/fusion.h"
#include "backends/onednn/plan.h"
#include "backends/onednn/timing.h"
#include "ops/attrs.h"
#include "ops/broadcast.h"
#include "ops/window.h"

namespace hone::onednn {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
md_t strided_md(const dims_t& d, const dims_t& strides) {
  return md_t(d, kF32, strides);
}

/// A conv primitive's arguments as `time_primitive` takes them.
std::vector<std::pair<int, md_t>> conv_args(const dnnl::convolution_forward::primitive_desc& pd,
                                            const Fusion& f, bool has_bias) {
  std::vector<std::pair<int, md_t>> args{{DNNL_ARG_SRC, pd.src_desc()},
                                         {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                         {DNNL_ARG_DST, pd.dst_desc()},
                                         {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}};
  if (has_bias) args.push_back({DNNL_ARG_BIAS, pd.bias_desc()});
  for (const auto& [idx, ref] : f.src1)
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, ref.md});
  return args;
}

/// What the nodes a residual fusion would absorb cost when they run on their
/// own after the conv: one binary pass over `dst` per binary node and one
/// eltwise pass per activation (Relu stands in for each).
double unfused_tail_ms(const md_t& dst, size_t binaries, size_t eltwises) {
  const dnnl::engine& eng = cpu_engine();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  double ms = 0;
  if (binaries > 0) {
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm::binary_add, dst, dst, dst), attr,
                                    eng);
    ms += static_cast<double>(binaries) *
          time_primitive(dnnl::binary(pd), {{DNNL_ARG_SRC_0, dst},
                                            {DNNL_ARG_SRC_1, dst},
                                            {DNNL_ARG_DST, dst},
                                            {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}});
  }
  if (eltwises > 0) {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algorithm::eltwise_relu,
                                    dst, 0.0f, 0.0f),
        attr, eng);
    ms += static_cast<double>(eltwises) *
          time_primitive(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, dst},
                                                     {DNNL_ARG_DST, dst},
                                                     {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}});
  }
  return ms;
}

/// Adds the conv step of `pd` reading `src`: weights packed once when
/// constant (reordered per run otherwise), a fresh output, the bias; `out`
/// is the output's view as the graph's value sees it (the output's own
/// descriptor when null). Then what `f` fused is absorbed.
void add_conv_step(PlanBuilder& b, const Node& n,
                   const dnnl::convolution_forward::primitive_desc& pd, const dims_t& wdims,
                   const md_t& bias_md, const BufferRef& src, const Fusion& f, std::string kind,
                   const dims_t& dst, const md_t* out_view = nullptr) {
  const Tensor* w = b.constant(n.inputs[1]);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const Tensor* bias = has_bias ? b.constant(n.inputs[2]) : nullptr;
  const BufferRef wei =
      w ? b.pack(*w, plain_md(wdims), pd.weights_desc())
        : b.reorder_to(BufferRef{b.plain(n.inputs[1]).buffer, plain_md(wdims)}, pd.weights_desc());
  const BufferRef out{f.sum_into >= 0 ? f.sum_into : b.new_temp(pd.dst_desc()), pd.dst_desc()};
  std::vector<std::pair<int, BufferRef>> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, out}};
  if (has_bias)
    args.push_back({DNNL_ARG_BIAS, bias ? BufferRef{b.new_constant(*bias), bias_md}
                                        : BufferRef{b.plain(n.inputs[2]).buffer, bias_md}});
  finish(b, f, std::move(args), std::move(kind), dnnl::convolution_forward(pd), pd,
         PValue{dst, out_view ? BufferRef{out.buffer, *out_view} : out});
}

/// A depthwise 1-D Conv run as a 2-D one over an H of 1: oneDNN 2.6 has its
/// vectorized depthwise kernels (jit_dw, brdgmm_dw) only for 2-D, and gives a
/// 1-D one its gemm-based kernel, 7x slower on Silero VAD's 258-channel
/// depthwise conv. The 3-D value and the 4-D view share their bytes (an axis
/// of 1 added at 2). Nodes after it are not fused (their operands are 3-D).
/// `phased`: a conv of dilation d and stride 1 whose length W and pads are
/// multiples of d is the same bytes as an undilated one over [W/d, d] (its
/// rows the positions j*d + r of the same phase r), with a kernel of k x 1
/// and pads divided by d; the depthwise kernels take no dilation, and the
/// gemm kernel oneDNN gives a dilated one is 20 to 50 times slower
/// (QuartzNet's dilated 128-channel convs: 0.2-0.3 ms each).
Result<void> lower_depthwise_1d(PlanBuilder& b, const Node& n, const Window& win, int64_t group,
                                bool phased) {
  const PValue x = b.value(n.inputs[0]);
  const Tensor* w = b.constant(n.inputs[1]);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const dims_t wd = w ? w->shape() : b.value(n.inputs[1]).dims;
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const int64_t dil = ca.dilations.empty() ? 1 : ca.dilations[0];
  const int64_t d = phased ? dil : 1;
  auto add_h = [&](dims_t v) {
    if (phased) {
      v[2] /= d;
      v.push_back(d);
    } else {
      v.insert(v.begin() + 2, 1);
    }
    return v;
  };
  const dims_t x4 = add_h(x.dims);
  const dims_t dst3{x.dims[0], wd[0], win.out[0]};
  const dims_t dst4 = add_h(dst3);
  const dims_t wdims = phased ? dims_t{group, wd[0] / group, 1, wd[2], 1}
                              : dims_t{group, wd[0] / group, 1, 1, wd[2]};
  const dims_t strides{1, ca.strides.empty() ? 1 : ca.strides[0]};
  const dims_t dil0 = phased ? dims_t{0, 0} : dims_t{0, dil - 1};
  const dims_t pad_l = phased ? dims_t{win.pad_l[0] / d, 0} : dims_t{0, win.pad_l[0]};
  const dims_t pad_r = phased ? dims_t{win.pad_r[0] / d, 0} : dims_t{0, win.pad_r[0]};
  const md_t bias_md = plain_md({wd[0]});
  const md_t wei_any(wdims, kF32, tag::any);
  auto desc =
      has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                 algorithm::convolution_direct, any_md(x4), wei_any,
                                                 bias_md, any_md(dst4), strides, dil0, pad_l, pad_r)
               : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                 algorithm::convolution_direct, any_md(x4), wei_any,
                                                 any_md(dst4), strides, dil0, pad_l, pad_r);
  Fusion none;
  none.out = n.outputs[0];
  dnnl::convolution_forward::primitive_desc pd(desc, make_attr(none, 1.0f), cpu_engine());
  // Both views must exist before a step is added (reshape throws when a
  // layout cannot drop the axis; the caller then lowers the conv as 1-D).
  const md_t src3 = pd.src_desc().reshape(x.dims);
  const md_t out3 = pd.dst_desc().reshape(dst3);
  const BufferRef src{b.ensure(n.inputs[0], src3).buffer, pd.src_desc()};
  add_conv_step(b, n, pd, wdims, bias_md, src, none, "conv", dst3, &out3);
  return {};
}

/// Whether lower_depthwise_1d can run `n` (dilation `dil`, stride 1) phased.
bool phases_fit(const Window& win, int64_t length, int64_t dil, int64_t stride) {
  return dil > 1 && stride == 1 && length % dil == 0 && win.pad_l[0] % dil == 0 &&
         win.pad_r[0] % dil == 0 && win.out[0] == length;
}

Result<void> lower_conv(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const Tensor* w = b.constant(n.inputs[1]);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const dims_t wd = w ? w->shape() : b.value(n.inputs[1]).dims;
  const size_t rank = x.dims.size();
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const int64_t group = ca.group;
  if (wd.size() != rank || rank < 3 || x.dims[1] != wd[1] * group || wd[0] % group != 0)
    return fail(ErrorCode::kInvalidArgument, "Conv: input " + shape_to_string(x.dims) +
                                                 " and weights " + shape_to_string(wd) +
                                                 " do not fit group " + std::to_string(group));
  const size_t sp = rank - 2;
  const dims_t kernel(wd.begin() + 2, wd.end());
  const dims_t strides = ca.strides.empty() ? dims_t(sp, 1) : ca.strides;
  const dims_t dil = ca.dilations.empty() ? dims_t(sp, 1) : ca.dilations;
  HONE_TRY(Window win, sliding_window(n, dims_t(x.dims.begin() + 2, x.dims.end()), kernel, false));
  if (rank == 3 && group > 1 && wd[1] == 1 && !b.bf16()) {
    if (phases_fit(win, x.dims[2], dil[0], strides[0])) {
      try {
        return lower_depthwise_1d(b, n, win, group, /*phased=*/true);
      } catch (const dnnl::error&) {
      }
    }
    try {
      return lower_depthwise_1d(b, n, win, group, /*phased=*/false);
    } catch (const dnnl::error&) {
    }
  }
  dims_t dst{x.dims[0], wd[0]};
  dst.insert(dst.end(), win.out.begin(), win.out.end());
  dims_t dil0;
  for (int64_t d : dil) dil0.push_back(d - 1);
  dims_t wdims = wd;
  if (group > 1) {
    wdims = {group, wd[0] / group};
    wdims.insert(wdims.end(), wd.begin() + 1, wd.end());
  }
  const md_t bias_md = plain_md({wd[0]});
  // bf16 reads (src, weights) accumulate into an f32 dst: with f32 outputs
  // every post-op and consumer stays as it is.
  memory::data_type in_dt = kF32;
  md_t src_md = any_md(x.dims);
  md_t dst_any = any_md(dst);
  // The nChw16c variant of a plan (the block times both when it has
  // depthwise convs): oneDNN 2.6's `any` picks nhwc, where depthwise runs
  // brdgmm_dw, about 1.6x slower than jit_dw on nChw16c (mobilenet.onnx, 1
  // thread: 12 / 6 / 8 us against 7 / 4 / 5 us); but on nChw16c some binary
  // ops have only oneDNN's reference kernel (PaddleOCR's SE blocks), and
  // resnet's convs were ~15% slower, so neither layout wins everywhere.
  const bool blocked16 =
      b.prefer_blocked16() && x.dims.size() == 4 && x.dims[1] % 16 == 0 && wd[0] % 16 == 0;
  // A first-layer conv (a few input channels, read in their own layout)
  // writes nChw16c too, so what reads it stays there: a DenseNet's stem
  // output is the first source of every concat of its first block.
  const bool blocked16_dst = blocked16 || (b.prefer_blocked16() && x.dims.size() == 4 &&
                                           group == 1 && x.dims[1] <= 4 && wd[0] % 16 == 0);
  algorithm conv_alg = algorithm::convolution_direct;
  auto make = [&](const dnnl::primitive_attr& attr) {
    const md_t wei_any(wdims, in_dt, tag::any);
    auto d = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        conv_alg, src_md, wei_any, bias_md, dst_any,
                                                        strides, dil0, win.pad_l, win.pad_r)
                      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        conv_alg, src_md, wei_any, dst_any, strides,
                                                        dil0, win.pad_l, win.pad_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine());
  };
  Fusion used;
  auto create = [&](memory::data_type dt) {
    in_dt = dt;
    src_md = md_t(x.dims, dt, blocked16 ? tag::nChw16c : tag::any);
    dst_any = md_t(dst, kF32, blocked16_dst ? tag::nChw16c : tag::any);
    try {
      return with_fusion(b, n.outputs[0], dst, Fusion{}, 1.0f, make, &used,
                         /*full_size_binary=*/false);
    } catch (const dnnl::error&) {
      if (!blocked16_dst) throw;
      src_md = md_t(x.dims, dt, tag::any);  // no kernel for the forced layout: let oneDNN pick
      dst_any = any_md(dst);
      return with_fusion(b, n.outputs[0], dst, Fusion{}, 1.0f, make, &used,
                         /*full_size_binary=*/false);
    }
  };
  dnnl::convolution_forward::primitive_desc pd = with_input_type(b, create, &in_dt);
  // A first-layer conv (a few channels, input still plain NCHW) has a JIT
  // kernel that reads NCHW directly, saving the reorder of the whole input;
  // it writes a blocked layout of its own. That pays when the one reader of
  // its output is another Conv, which then takes the output in one reorder
  // (mobilenet.onnx, 1 thread: 10 us + 3 us for the reorder instead of 18 us
  // + 6 us). With other readers (a residual Add) each would reorder, so
  // `any` stays. A reference or gemm kernel is no gain either.
  const Node* reader = b.sole_consumer(used.out);
  // (f32 only: the block's input is f32, so a bf16 conv needs a reorder anyway.)
  if (in_dt == kF32 && x.dims[1] <= 4 && group == 1 && is_plain(x.ref.md) &&
      !(pd.src_desc() == x.ref.md) && reader != nullptr && reader->op_type == "Conv") {
    src_md = x.ref.md;
    try {
      Fusion direct_used;
      auto direct = with_fusion(b, n.outputs[0], dst, Fusion{}, 1.0f, make, &direct_used,
                                /*full_size_binary=*/false);
      const std::string impl = direct.impl_info_str();
      if (direct_used.nodes.size() == used.nodes.size() && !is_ref_impl_name(impl) &&
          impl.find("gemm") == std::string::npos) {
        pd = direct;
        used = direct_used;
      }
    } catch (const dnnl::error&) {
    }
  }
  // A residual Add that ended the chain: when the skip value already lives in
  // the layout picked for this conv's output, the Add and what follows it
  // fuse, reading that value in place (conv+binary+eltwise in one pass).
  if (const Node* c = b.sole_consumer(used.out); c != nullptr && c->op_type == "Add") {
    const md_t picked = pd.dst_desc();
    const md_t picked_src = src_md;
    src_md = pd.src_desc();
    dst_any = picked;
    // The skip may be summed into in place when it dies at the Add and is
    // not what the conv reads.
    const CanSum can_sum = [&](ValueId skip) {
      return b.value(skip).ref.buffer != x.ref.buffer && b.dies_at(skip, c);
    };
    try {
      Fusion with_residual;
      auto fused = with_fusion(b, n.outputs[0], dst, Fusion{}, 1.0f, make, &with_residual,
                               /*full_size_binary=*/false, &picked, can_sum);
      // oneDNN may pick another kernel for the fused form (jit_1x1 for
      // brgconv_1x1, jit for brgconv): it wins on thin convs, where the
      // separate passes over the output dominate, and loses on wide ones.
      // So when the kernel changes, both forms are timed here.
      // (The choice is the backend's timed_choices "fusion" entry when it
      // holds one.)
      bool take = with_residual.nodes.size() > used.nodes.size();
      if (take && std::string(fused.impl_info_str()) != pd.impl_info_str()) {
        size_t binaries = 0;
        for (size_t k = used.nodes.size(); k < with_residual.nodes.size(); ++k)
          binaries += binary_alg(with_residual.nodes[k]->op_type).has_value();
        const size_t eltwises = with_residual.nodes.size() - used.nodes.size() - binaries;
        take = b.choose(n, "fusion", {"unfused", "fused"}, [&] {
          const double apart_ms =
              time_primitive(dnnl::convolution_forward(pd), conv_args(pd, used, has_bias)) +
              unfused_tail_ms(picked, binaries, eltwises);
          const double fused_ms = time_primitive(dnnl::convolution_forward(fused),
                                                 conv_args(fused, with_residual, has_bias));
          return std::vector<double>{apart_ms, fused_ms};
        }) == "fused";
      }
      if (take) {
        pd = fused;
        used = with_residual;
      }
    } catch (const dnnl::error&) {
    }
    src_md = picked_src;
  }
  std::string kind = dense_kind("conv", in_dt);
  // Winograd: a 3x3 stride-1 conv on nChw16c (the layout oneDNN 2.6's
  // Winograd kernels read and write) with constant weights, taken when it
  // runs faster than the direct kernel with the same post-ops (it fuses ReLU
  // and a residual sum, no binary op). Measured at 1 thread on an AMD EPYC
  // (AVX-512): 0.4-0.7x the direct kernel's time on convs of 64-512
  // channels, slower on thin ones (32 channels); its error against exact
  // sums is 2-5x the direct kernel's (relative L2 ~5e-7 per conv).
  auto on_blocked16 = [&](const md_t& md, const dims_t& dims) {
    return md == md_t(dims, kF32, tag::nChw16c);
  };
  // Unforced (PlanBuilder::set_winograd), the choice is the backend's
  // timed_choices "winograd" entry when it holds one that can run here.
  if (b.winograd() != false && in_dt == kF32 && w != nullptr && group == 1 &&
      kernel == dims_t{3, 3} && strides == dims_t{1, 1} && dil == dims_t{1, 1} &&
      on_blocked16(pd.src_desc(), x.dims) && on_blocked16(pd.dst_desc(), dst)) {
    conv_alg = algorithm::convolution_winograd;
    src_md = pd.src_desc();
    dst_any = pd.dst_desc();
    std::optional<dnnl::convolution_forward::primitive_desc> wino;
    try {
      auto made = make(make_attr(used, 1.0f));
      if (!is_ref_impl(made)) wino = made;
    } catch (const dnnl::error&) {  // post-ops it does not fuse, or shapes it has no kernel for
    }
    const bool take =
        wino && (b.winograd() == true || b.choose(n, "winograd", {"direct", "winograd"}, [&] {
          return std::vector<double>{
              time_primitive(dnnl::convolution_forward(pd), conv_args(pd, used, has_bias)),
              time_primitive(dnnl::convolution_forward(*wino), conv_args(*wino, used, has_bias))};
        }) == "winograd");
    // A recorded Winograd this CPU has no kernel for is warned about.
    if (!wino && !b.winograd()) (void)b.choose(n, "winograd", {"direct"}, {});
    if (take) {
      pd = *wino;
      kind = "conv[wino]";
    }
  }
  // A conv left to the direct kernel on nChw16c whose output goes to one
  // Conv or Concat: oneDNN 2.6's brgconv on nhwc runs Inception's 1x7, 7x1,
  // 5x5 and strided 3x3 convs 12-18% faster than its nChw16c kernel, so nhwc
  // is timed too, charged with the reorder into it and the one back, and
  // kept when faster (a chain of such convs then stays on nhwc).
  const Node* next = b.sole_consumer(used.out);
  if (b.layout_trials() && kind == dense_kind("conv", in_dt) && in_dt == kF32 && group == 1 &&
      rank == 4 && shape_numel(kernel) > 1 && used.src1.empty() && used.sum_into < 0 &&
      next != nullptr && (next->op_type == "Conv" || next->op_type == "Concat") &&
      on_blocked16(pd.src_desc(), x.dims) && on_blocked16(pd.dst_desc(), dst)) {
    conv_alg = algorithm::convolution_direct;
    src_md = md_t(x.dims, kF32, tag::nhwc);
    dst_any = md_t(dst, kF32, tag::nhwc);
    std::optional<dnnl::convolution_forward::primitive_desc> cl;
    try {
      auto made = make(make_attr(used, 1.0f));
      if (!is_ref_impl(made) && made.src_desc() == src_md && made.dst_desc() == dst_any) cl = made;
    } catch (const dnnl::error&) {  // no kernel for these layouts: nChw16c stays
    }
    // The backend's timed_choices "layout" entry, when it holds one, is taken untimed.
    std::vector<std::string> runnable{"nChw16c"};
    if (cl) runnable.push_back("nhwc");
    const std::string pick = b.choose(n, "layout", runnable, [&] {
      const double blocked_ms =
          time_primitive(dnnl::convolution_forward(pd), conv_args(pd, used, has_bias)) +
          reorder_ms(x.ref.md, pd.src_desc());
      const double cl_ms =
          time_primitive(dnnl::convolution_forward(*cl), conv_args(*cl, used, has_bias)) +
          reorder_ms(x.ref.md, cl->src_desc()) + reorder_ms(cl->dst_desc(), pd.dst_desc());
      return std::vector<double>{blocked_ms, cl_ms};
    });
    if (pick == "nhwc") pd = *cl;
  }
  add_conv_step(b, n, pd, wdims, bias_md, b.ensure(n.inputs[0], pd.src_desc()), used,
                std::move(kind), dst);
  return {};
}

Result<void> lower_gemm(PlanBuilder& b, const Node& n) {
  HONE_TRY(const ops::GemmAttrs ga, ops::gemm_attrs(n));
  const bool ta = ga.trans_a, tb = ga.trans_b;
  const float alpha = ga.alpha, beta = ga.beta;
  const dims_t ad = b.value(n.inputs[0]).dims;
  const Tensor* bconst = b.constant(n.inputs[1]);
  const dims_t bd = bconst ? bconst->shape() : b.value(n.inputs[1]).dims;
  if (ad.size() != 2 || bd.size() != 2)
    return fail(ErrorCode::kInvalidArgument, "Gemm needs 2-D A and B");
  const int64_t M = ta ? ad[1] : ad[0], K = ta ? ad[0] : ad[1];
  const int64_t N = tb ? bd[0] : bd[1], K2 = tb ? bd[1] : bd[0];
  if (K != K2)
    return fail(ErrorCode::kInvalidArgument, "Gemm: A " + shape_to_string(ad) + " and B " +
                                                 shape_to_string(bd) + " disagree on K");
  const dims_t dst{M, N};
  const md_t a_view = ta ? strided_md({M, K}, {1, M}) : strided_md({M, K}, {K, 1});
  const md_t b_view = tb ? strided_md({K, N}, {1, K}) : strided_md({K, N}, {N, 1});
  Fusion seed;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && beta != 0.0f) {
    const ValueId c = n.inputs[2];
    std::optional<BufferRef> operand;
    if (beta != 1.0f) {
      const Tensor* ct = b.constant(c);
      if (ct == nullptr)
        return fail(ErrorCode::kUnsupported, "Gemm with beta != 1 needs a constant C");
      Tensor scaled = ct->clone();
      for (float& v : scaled.span<float>()) v *= beta;
      const dims_t padded = pad_left(scaled.shape(), 2);
      if (padded.size() == 2 && (padded[0] == 1 || padded[0] == M) &&
          (padded[1] == 1 || padded[1] == N))
        operand = BufferRef{b.new_constant(scaled), plain_md(padded)};
    } else {
      operand = post_op_operand(b, c, dst);
    }
    if (!operand)
      return fail(ErrorCode::kInvalidArgument,
                  "Gemm: C does not broadcast to " + shape_to_string(dst));
    seed.ops.append_binary(algorithm::binary_add, operand->md);
    seed.src1.push_back({seed.count++, *operand});
    seed.kind = "+binary";
  }
  const md_t dst_md = plain_md(dst);
  // bf16: A (and a non-constant B) are converted to plain bf16 each run.
  memory::data_type in_dt = kF32;
  auto src_of = [&](memory::data_type dt) { return dt == kF32 ? a_view : plain_md({M, K}, dt); };
  auto wei_of = [&](memory::data_type dt) {
    return bconst ? md_t({K, N}, dt, tag::any) : dt == kF32 ? b_view : plain_md({K, N}, dt);
  };
  Fusion used;
  auto create = [&](memory::data_type dt) {
    auto make = [&](const dnnl::primitive_attr& attr) {
      dnnl::matmul::desc d(src_of(dt), wei_of(dt), dst_md);
      return dnnl::matmul::primitive_desc(d, attr, cpu_engine());
    };
    return with_fusion(b, n.outputs[0], dst, seed, alpha, make, &used);
  };
  auto pd = with_input_type(b, create, &in_dt);
  BufferRef a = b.reorder_to({b.plain(n.inputs[0]).buffer, a_view}, src_of(in_dt));
  BufferRef wei = bconst ? b.pack(*bconst, b_view, pd.weights_desc())
                         : b.reorder_to({b.plain(n.inputs[1]).buffer, b_view}, wei_of(in_dt));
  BufferRef out{b.new_temp(dst_md), dst_md};
  finish(b, used, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, out}},
         dense_kind("gemm", in_dt), dnnl::matmul(pd), pd, PValue{dst, out});
  return {};
}

Result<void> lower_matmul(PlanBuilder& b, const Node& n) {
  dims_t ad = b.value(n.inputs[0]).dims;
  const Tensor* bconst = b.constant(n.inputs[1]);
  dims_t bd = bconst ? bconst->shape() : b.value(n.inputs[1]).dims;
  if (ad.empty() || bd.empty()) return fail(ErrorCode::kInvalidArgument, "MatMul of a scalar");
  const bool squeeze_m = ad.size() == 1, squeeze_n = bd.size() == 1;
  if (squeeze_m) ad.insert(ad.begin(), 1);
  if (squeeze_n) bd.push_back(1);
  const size_t r = std::max(ad.size(), bd.size());
  ad = pad_left(ad, r);
  bd = pad_left(bd, r);
  if (ad[r - 1] != bd[r - 2])
    return fail(ErrorCode::kInvalidArgument,
                "MatMul: " + shape_to_string(ad) + " x " + shape_to_string(bd) + " disagree on K");
  dims_t dst(r), logical;
  // The batch dims broadcast the ONNX way (ops/broadcast.h).
  const auto batch = ops::broadcast_shapes({std::vector<int64_t>(ad.begin(), ad.end() - 2),
                                            std::vector<int64_t>(bd.begin(), bd.end() - 2)});
  if (!batch)
    return fail(ErrorCode::kInvalidArgument, "MatMul: batch dims of " + shape_to_string(ad) +
                                                 " and " + shape_to_string(bd) +
                                                 " do not broadcast");
  for (size_t i = 0; i + 2 < r; ++i) {
    dst[i] = (*batch)[i];
    logical.push_back(dst[i]);
  }
  dst[r - 2] = ad[r - 2];
  dst[r - 1] = bd[r - 1];
  if (!squeeze_m) logical.push_back(dst[r - 2]);
  if (!squeeze_n) logical.push_back(dst[r - 1]);
  // A constant B without batch dims of its own (a linear layer's weight)
  // makes one 2-D product of all of A's rows: oneDNN packs the weights of a
  // 2-D product only, and multiplies [T,1,K] rows (nn.MultiheadAttention's
  // sequence-first input) as T products of one row each, 4 times slower
  // (vit_tiny's in-projection: 1.05 ms against 0.25).
  bool flat = bconst != nullptr && r >= 3 && !squeeze_m && !squeeze_n;
  for (size_t i = 0; flat && i + 2 < r; ++i) flat = bd[i] == 1;
  if (flat) {
    const int64_t rows = shape_numel(dims_t(ad.begin(), ad.end() - 1));
    ad = {rows, ad[r - 1]};
    bd = {bd[r - 2], bd[r - 1]};
    dst = {rows, bd[1]};
  }
  // Batch dims that A and B share, without broadcasting, are one: oneDNN
  // 2.6 has its fast kernels for 3-D products only and takes its reference
  // one for 4-D (swin_t's windowed attention, [64,3,49,32] x [64,3,32,49]:
  // 700 ms a product on this machine).
  const bool shared_batch = !flat && r > 3 && std::equal(ad.begin(), ad.end() - 2, bd.begin());
  if (shared_batch) {
    const int64_t count = shape_numel(dims_t(ad.begin(), ad.end() - 2));
    ad = {count, ad[r - 2], ad[r - 1]};
    bd = {count, bd[r - 2], bd[r - 1]};
    dst = {count, dst[r - 2], dst[r - 1]};
  }
  const md_t a_md = plain_md(ad), b_md = plain_md(bd), dst_md = plain_md(dst);
  memory::data_type in_dt = kF32;
  auto wei_of = [&](memory::data_type dt) {
    return bconst ? md_t(bd, dt, tag::any) : plain_md(bd, dt);
  };
  Fusion used;
  auto create = [&](memory::data_type dt) {
    auto make = [&](const dnnl::primitive_attr& attr) {
      dnnl::matmul::desc d(plain_md(ad, dt), wei_of(dt), dst_md);
      return dnnl::matmul::primitive_desc(d, attr, cpu_engine());
    };
    if (squeeze_m || squeeze_n) {
      used = Fusion{};
      used.out = n.outputs[0];
      return make(make_attr(used, 1.0f));
    }
    Fusion seed;
    if (flat || shared_batch) seed.logical = logical;
    return with_fusion(b, n.outputs[0], dst, seed, 1.0f, make, &used);
  };
  dnnl::matmul::primitive_desc pd = with_input_type(b, create, &in_dt);
  BufferRef a = b.reorder_to({b.plain(n.inputs[0]).buffer, a_md}, plain_md(ad, in_dt));
  BufferRef wei = bconst ? b.pack(*bconst, b_md, pd.weights_desc())
                         : b.reorder_to({b.plain(n.inputs[1]).buffer, b_md}, wei_of(in_dt));
  const int out_buf = b.new_temp(dst_md);
  finish(b, used, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, {out_buf, dst_md}}},
         dense_kind("matmul", in_dt), dnnl::matmul(pd), pd,
         PValue{logical, {out_buf, plain_md(logical)}});
  return {};
}

}  // namespace

Result<Window> sliding_window(const Node& n, const dims_t& in, const dims_t& kernel,
                              bool ceil_mode) {
  HONE_TRY(ops::Window g, ops::make_window(n, in, kernel, ceil_mode, n.op_type));
  Window w{g.out, g.pad_begin, g.pad_end};
  // oneDNN wants the right padding to cover ceil_mode's last window.
  if (ceil_mode)
    for (size_t i = 0; i < in.size(); ++i)
      w.pad_r[i] = std::max(w.pad_r[i],
                            (g.out[i] - 1) * g.strides[i] + g.dilated(i) - in[i] - g.pad_begin[i]);
  return w;
}

Result<void> lower_dense(PlanBuilder& b, const Node& n) {
  if (n.op_type == "Conv") return lower_conv(b, n);
  if (n.op_type == "Gemm") return lower_gemm(b, n);
  return lower_matmul(b, n);
}

// Declared in timing.h: shared with lower_rnn.cpp.
double time_primitive(const dnnl::primitive& prim, const std::vector<std::pair<int, md_t>>& args) {
  const dnnl::engine& eng = cpu_engine();
  std::vector<std::unique_ptr<void, decltype(&std::free)>> buffers;
  std::unordered_map<int, dnnl::memory> mem;
  for (const auto& [arg, md] : args) {
    const size_t bytes = (md.get_size() + 63) / 64 * 64 + 64;
    buffers.emplace_back(std::aligned_alloc(64, bytes), &std::free);
    if (!buffers.back()) return std::numeric_limits<double>::infinity();
    std::memset(buffers.back().get(), 0, bytes);
    mem.emplace(arg, dnnl::memory(md, eng, buffers.back().get()));
  }
  dnnl::stream s(eng);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 6; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    prim.execute(s, mem);
    s.wait();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, ms);  // the first run warms caches and JIT code
  }
  return best;
}

// Declared in timing.h.
double reorder_ms(const md_t& from, const md_t& to) {
  if (from == to) return 0;
  dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratch());
  return time_primitive(
      dnnl::reorder(pd),
      {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}});
}

}  // namespace hone::onednn
