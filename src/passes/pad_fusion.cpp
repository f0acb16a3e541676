// fuse_pad: a zero constant Pad of the spatial axes folded into the Conv that
// reads it. TensorFlow exports (tf2onnx) write "same" padding of a strided
// conv as an explicit Pad; left as a node, it is a full copy of the tensor and
// on a compiled backend a block boundary (oneDNN reorders out of and back
// into its blocked layout around it, and runs the Pad on the fallback).
#include "hone/passes.h"
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
    if (conv.op_type != "Conv" || !(conv.domain.empty() || conv.domain == "ai.onnx") ||
        conv.inputs.size() < 2 || conv.inputs[0] != pad.outputs[0] ||
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
