// Post-op fusion for the dense ops (Conv, Gemm, MatMul): the activations and
// binary ops that follow one are folded into its primitive as oneDNN
// post-ops, and the step is named for what it fused ("conv+eltwise").
//
//   Fusion used;
//   auto pd = with_fusion(b, out, dst, Fusion{}, 1.0f, make_pd, &used);
//   finish(b, used, std::move(args), "matmul", dnnl::matmul(pd), pd, PValue{dst, ref});
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/onednn/impl_name.h"
#include "backends/onednn/plan.h"

namespace hone::onednn {

/// The step name: "conv", or "conv[bf16]" when it reads bf16.
std::string dense_kind(const char* op, dnnl::memory::data_type dt);

/// Runs `create(dt)` with bf16 inputs when the builder allows it, and with
/// f32 when oneDNN has no bf16 kernel for this op (it throws dnnl::error).
/// `create` must not add steps before its primitive_desc exists.
template <class Create>
auto with_input_type(const PlanBuilder& b, Create create, dnnl::memory::data_type* dt) {
  if (b.bf16()) {
    try {
      *dt = dnnl::memory::data_type::bf16;
      return create(dnnl::memory::data_type::bf16);
    } catch (const dnnl::error&) {
    }
  }
  *dt = dnnl::memory::data_type::f32;
  return create(dnnl::memory::data_type::f32);
}

/// The nodes after a dense op folded into its post-ops.
struct Fusion {
  dnnl::post_ops ops;
  std::vector<std::pair<int, BufferRef>> src1;  // post-op index -> operand
  std::vector<const Node*> nodes;
  ValueId out = kNoValue;
  std::string kind;
  int count = 0;
  /// A residual Add taken as a sum post-op: the op writes its result over
  /// the skip value, which lives in this buffer (-1: none).
  int sum_into = -1;
  /// The op's ONNX result dims when `dst` flattens them (a MatMul run as
  /// one product of fewer dims); empty: dst's own.
  dims_t logical;
  /// Links of the chain taken (a link is one node, or a matched pattern).
  int links = 0;
};

/// Whether a residual operand may be accumulated into in place (a sum
/// post-op writing over it); null: never.
using CanSum = std::function<bool(ValueId)>;

/// The binary post-op of Add, Sub, Mul and Div; nothing for other ops.
std::optional<dnnl::algorithm> binary_alg(const std::string& op);

/// An operand the dense op's result can be combined with as a post-op: it
/// broadcasts into `dst` without enlarging it. Returns its plain view.
/// `logical`: see Fusion::logical.
std::optional<BufferRef> post_op_operand(PlanBuilder& b, ValueId other, const dims_t& dst,
                                         const dims_t& logical = {});

/// Follows single-consumer chains of activations and binary ops from `from`.
/// `seed` already holds post-ops the op itself needs (Gemm's C). With
/// `full_size_binary` false, a binary operand as large as `dst` (a residual
/// add) ends the chain: a Conv given a plain full-size post-op operand falls
/// to oneDNN 2.6's slow plain-layout path (measured: 5 ms instead of 0.3 ms for
/// resnet.onnx's projection conv), so the Add runs as its own primitive,
/// unless the operand already lives in `residual` (the layout chosen for the
/// op's output): then it is read in place.
/// At most `max_links` links are taken.
Fusion collect(PlanBuilder& b, ValueId from, const dims_t& dst, Fusion seed, bool full_size_binary,
               const md_t* residual, const CanSum& can_sum, int max_links = 6);

/// The post-ops of `f` and an output scale, with a user scratchpad.
dnnl::primitive_attr make_attr(const Fusion& f, float scale);

/// Creates the pd with the fused chain; when oneDNN cannot fuse it, with the
/// seed's post-ops only (the rest then lowers node by node). A chain oneDNN
/// accepts only with its reference kernel is shortened until it gets another
/// one: oneDNN 2.6's brgemm MatMul takes no binary post-op broadcast along the
/// batch only (a [1,T,T] attention mask added to [H,T,T] scores), and ran
/// llama's score products as ref:any, 40 ms each instead of 0.1 ms. When the
/// seed alone is a reference kernel too, the longest chain is kept.
template <class MakePd>
auto with_fusion(PlanBuilder& b, ValueId from, const dims_t& dst, const Fusion& seed, float scale,
                 MakePd make, Fusion* used, bool full_size_binary = true,
                 const md_t* residual = nullptr, const CanSum& can_sum = {}) {
  using Pd = decltype(make(make_attr(seed, scale)));
  std::optional<Pd> ref_pd;
  Fusion ref_used;
  Fusion f = collect(b, from, dst, seed, full_size_binary, residual, can_sum);
  for (int links = f.links; links > 0 && !f.nodes.empty();) {
    try {
      Pd pd = make(make_attr(f, scale));
      if (!is_ref_impl(pd)) {
        *used = f;
        return pd;
      }
      if (!ref_pd) {
        ref_pd = pd;
        ref_used = f;
      }
    } catch (const dnnl::error&) {
    }
    if (--links > 0) f = collect(b, from, dst, seed, full_size_binary, residual, can_sum, links);
  }
  Pd pd = make(make_attr(seed, scale));
  if (ref_pd && is_ref_impl(pd)) {
    *used = ref_used;
    return *ref_pd;
  }
  *used = seed;
  used->out = from;
  return pd;
}

/// Adds the dense op's step (`args` plus `f`'s post-op operands, named
/// `kind` and what `f` fused), absorbs the fused nodes and sets `f.out`.
void finish(PlanBuilder& b, const Fusion& f, std::vector<std::pair<int, BufferRef>> args,
            std::string kind, dnnl::primitive prim, const dnnl::primitive_desc_base& pd,
            PValue out);

}  // namespace hone::onednn
