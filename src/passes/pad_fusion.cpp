// fuse_pad: a zero constant Pad of the spatial axes folded into the Conv or
// AveragePool that reads it. TensorFlow exports (tf2onnx) write "same"
// padding of a strided conv as an explicit Pad, and PyTorch's exporter writes
// avg_pool2d(padding=p) with count_include_pad=True (Inception's pool
// branches) as a Pad before an AveragePool without pads; left as a node, it
// is a full copy of the tensor, and oneDNN reorders out of and back into its
// blocked layout around it.
#include "hone/passes.h"

#include <algorithm>

#include "ops/attrs.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

using passes::constant_of;

/// The per-axis pads of `pad` over a tensor of `rank` dims, [b0..b(r-1),
/// e0..e(r-1)], when they are known constants and the pad writes zeros in
/// constant mode; else nothing.
std::optional<std::vector<int64_t>> zero_pads(const Graph& g, const Node& pad, size_t rank) {
  const auto pa = ops::pad_attrs(pad);
  if (!pa || pa->mode != "constant") return std::nullopt;
  // The fill: attribute `value` before opset 11, optional input 2 after.
  if (pa->value != 0.0f) return std::nullopt;
  if (pad.inputs.size() > 2 && pad.inputs[2] >= 0 && !passes::is_scalar(g, pad.inputs[2], 0.0, 0.0))
    return std::nullopt;
  auto given = passes::int_list(g, pad, "pads", 1);
  if (!given) return std::nullopt;
  std::vector<int64_t> axes;
  if (pad.inputs.size() > 3 && pad.inputs[3] >= 0) {  // opset 18: pads of these axes only
    const Tensor* a = constant_of(g, pad.inputs[3]);
    if (a == nullptr || (a->dtype() != DType::kI64 && a->dtype() != DType::kI32))
      return std::nullopt;
    for (int64_t i = 0; i < a->numel(); ++i) {
      int64_t ax = tensor_element_as_int64(*a, i);
      if (ax < 0) ax += static_cast<int64_t>(rank);
      if (ax < 0 || ax >= static_cast<int64_t>(rank)) return std::nullopt;
      axes.push_back(ax);
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (given->size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto ax = static_cast<size_t>(axes[i]);
    pads[ax] += (*given)[i];
    pads[rank + ax] += (*given)[axes.size() + i];
  }
  return pads;
}

/// The pads of AveragePool `pool` once the zero `pads` (of every axis, as
/// zero_pads gives them) before it are its own: the zeros then count in each
/// window's mean (count_include_pad), as they did as values. Nothing when the
/// pool's own pads would not count, its windows depend on the padded size
/// (auto_pad SAME_*, ceil_mode), or a pad would reach a whole window.
std::optional<std::vector<int64_t>> average_pool_pads(const Node& pool,
                                                      const std::vector<int64_t>& pads) {
  const auto pa = ops::pool_attrs(pool);
  const auto wa = ops::conv_attrs(pool);  // the window attributes
  if (!pa || !wa || pa->ceil_mode ||
      (wa->auto_pad != ops::AutoPad::kNotSet && wa->auto_pad != ops::AutoPad::kValid))
    return std::nullopt;
  const size_t spatial = pa->kernel_shape.size();
  if (spatial == 0 || pads.size() != 2 * (spatial + 2)) return std::nullopt;
  const size_t rank = spatial + 2;
  std::vector<int64_t> own =
      wa->auto_pad == ops::AutoPad::kValid ? std::vector<int64_t>{} : wa->pads;
  if (own.empty()) own.assign(2 * spatial, 0);
  if (own.size() != 2 * spatial) return std::nullopt;
  const bool own_padded = std::any_of(own.begin(), own.end(), [](int64_t p) { return p != 0; });
  if (own_padded && !pa->count_include_pad) return std::nullopt;
  for (size_t a = 0; a < spatial; ++a) {
    own[a] += pads[2 + a];
    own[spatial + a] += pads[rank + 2 + a];
    if (own[a] >= pa->kernel_shape[a] || own[spatial + a] >= pa->kernel_shape[a])
      return std::nullopt;
  }
  return own;
}

}  // namespace

Result<Graph> fuse_pad(const Graph& in, PassStats* stats) {
  const Graph& g = in;
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& pad = g.nodes()[i];
    const auto pad_id = static_cast<NodeId>(i);
    if (pad.op_type != "Pad" || !(pad.domain.empty() || pad.domain == "ai.onnx") ||
        pad.outputs.size() != 1 || pad.outputs[0] < 0 || pad.inputs.empty() || pad.inputs[0] < 0)
      continue;
    const NodeId conv_id = uses.sole_reader(pad.outputs[0]);
    if (conv_id < 0 || rw.taken(pad_id) || rw.taken(conv_id)) continue;
    const Node& conv = g.node(conv_id);
    if (!(conv.domain.empty() || conv.domain == "ai.onnx")) continue;
    if (conv.op_type == "AveragePool" && conv.inputs.size() == 1 &&
        conv.inputs[0] == pad.outputs[0]) {
      const auto pool = ops::pool_attrs(conv);
      if (!pool) continue;
      const auto pads = zero_pads(g, pad, pool->kernel_shape.size() + 2);
      if (!pads || (*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[pads->size() / 2] != 0 ||
          (*pads)[pads->size() / 2 + 1] != 0 ||
          std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p < 0; }))
        continue;
      const auto pool_pads = average_pool_pads(conv, *pads);
      if (!pool_pads) continue;
      Node fused = conv;
      fused.inputs[0] = pad.inputs[0];
      fused.attrs.erase("auto_pad");
      fused.attrs["pads"] = *pool_pads;
      fused.attrs["count_include_pad"] = int64_t{1};
      rw.remove(pad_id);
      rw.remove(conv_id);
      rw.add_node(std::move(fused));
      ++count;
      continue;
    }
    if (conv.op_type != "Conv" || conv.inputs.size() < 2 || conv.inputs[0] != pad.outputs[0] ||
        conv.inputs[1] == pad.outputs[0] ||
        (conv.inputs.size() > 2 && conv.inputs[2] == pad.outputs[0]))
      continue;
    // Explicit pads only: SAME_* derives them from the padded input's size.
    const auto ca = ops::conv_attrs(conv);
    if (!ca || (ca->auto_pad != ops::AutoPad::kNotSet && ca->auto_pad != ops::AutoPad::kValid))
      continue;
    const Tensor* w = constant_of(g, conv.inputs[1]);
    if (w == nullptr || w->rank() < 3) continue;
    const size_t rank = w->rank();
    const auto pads = zero_pads(g, pad, rank);
    if (!pads) continue;
    // Batch and channel axes stay as they are; a negative pad crops.
    bool fits = (*pads)[0] == 0 && (*pads)[1] == 0 && (*pads)[rank] == 0 && (*pads)[rank + 1] == 0;
    for (int64_t p : *pads) fits &= p >= 0;
    if (!fits) continue;
    const size_t spatial = rank - 2;
    std::vector<int64_t> conv_pads =
        ca->auto_pad == ops::AutoPad::kValid ? std::vector<int64_t>{} : ca->pads;
    if (conv_pads.empty()) conv_pads.assign(2 * spatial, 0);
    if (conv_pads.size() != 2 * spatial) continue;
    for (size_t a = 0; a < spatial; ++a) {
      conv_pads[a] += (*pads)[2 + a];
      conv_pads[spatial + a] += (*pads)[rank + 2 + a];
    }
    Node fused = conv;
    fused.inputs[0] = pad.inputs[0];
    fused.attrs.erase("auto_pad");
    fused.attrs["pads"] = conv_pads;
    rw.remove(pad_id);
    rw.remove(conv_id);
    rw.add_node(std::move(fused));
    ++count;
  }
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
