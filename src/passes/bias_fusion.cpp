// fuse_bias: a bias Add folded into the dense op before it, so backends see
// bias as part of Conv/Gemm (one oneDNN primitive, one BLAS call with C)
// instead of a separate pass over the output.
#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using passes::constant_of;

/// A constant `c` that, added to a Conv output of `rank` dims with `cout`
/// channels, adds one value per channel: its shape padded on the left to
/// `rank` is 1 everywhere except (possibly) axis 1. Returns the per-channel
/// values, or nothing.
std::optional<std::vector<float>> per_channel(const Tensor& c, size_t rank, int64_t cout) {
  if (c.dtype() != DType::kF32 || c.rank() > rank) return std::nullopt;
  std::vector<int64_t> padded(rank - c.rank(), 1);
  padded.insert(padded.end(), c.shape().begin(), c.shape().end());
  for (size_t i = 0; i < rank; ++i)
    if (padded[i] != 1 && !(i == 1 && padded[i] == cout)) return std::nullopt;
  std::vector<float> out(static_cast<size_t>(cout));
  for (int64_t k = 0; k < cout; ++k)
    out[static_cast<size_t>(k)] = c.data<float>()[c.numel() == 1 ? 0 : k];
  return out;
}

/// A constant usable as Gemm's C for an [M, n] result: a scalar, [n] or [1, n].
bool is_row(const Tensor& c, int64_t n) {
  if (c.dtype() != DType::kF32 || c.rank() > 2) return false;
  if (c.numel() == 1) return true;
  return n > 0 && c.shape().back() == n && c.numel() == n;
}

/// Static dim `i` of value `v`, or -1.
int64_t dim_of(const Graph& g, ValueId v, size_t i) {
  const Value& val = g.value(v);
  if (!val.shape || val.shape->rank() <= i || !(*val.shape)[i].is_static()) return -1;
  return (*val.shape)[i].value();
}

size_t rank_of(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.shape ? val.shape->rank() : size_t{99};
}

}  // namespace

Result<Graph> fuse_bias(const Graph& in, PassStats* stats) {
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& d = g.nodes()[i];
    const auto id = static_cast<NodeId>(i);
    if (!d.domain.empty() || d.outputs.size() != 1 || d.outputs[0] < 0 || d.inputs.size() < 2)
      continue;
    const NodeId add_id = uses.sole_reader(d.outputs[0]);
    if (add_id < 0 || rw.taken(id) || rw.taken(add_id)) continue;
    const Node& add = g.node(add_id);
    if (!passes::is_op(add, "Add", 2)) continue;
    const Tensor* c = constant_of(g, passes::other_operand(add, d.outputs[0]));
    if (c == nullptr) continue;
    Node fused = d;
    fused.outputs = {add.outputs[0]};
    if (d.op_type == "Conv") {
      const Tensor* w = constant_of(g, d.inputs[1]);
      if (w == nullptr || w->rank() < 3) continue;
      auto bias = per_channel(*c, w->rank(), w->dim(0));
      if (!bias) continue;
      if (d.inputs.size() > 2 && d.inputs[2] >= 0) {
        const Tensor* b = constant_of(g, d.inputs[2]);
        if (b == nullptr || b->dtype() != DType::kF32 || b->numel() != w->dim(0)) continue;
        for (size_t k = 0; k < bias->size(); ++k) (*bias)[k] += b->data<float>()[k];
      }
      fused.inputs.resize(3);
      fused.inputs[2] = rw.add_constant(d.name + "_bias", Tensor::from<float>({w->dim(0)}, *bias));
    } else if (d.op_type == "MatMul") {
      // Gemm is 2-D only: both operands must be known to be matrices.
      if (rank_of(g, d.inputs[0]) != 2 || rank_of(g, d.inputs[1]) != 2) continue;
      if (!is_row(*c, dim_of(g, d.inputs[1], 1))) continue;
      fused.op_type = "Gemm";
      fused.inputs = {d.inputs[0], d.inputs[1], passes::other_operand(add, d.outputs[0])};
      fused.attrs.clear();
    } else if (d.op_type == "Gemm") {
      if (d.inputs.size() > 2 && d.inputs[2] >= 0) continue;
      const int64_t n = ops::gemm_attrs(d).value_or(ops::GemmAttrs{}).trans_b
                            ? dim_of(g, d.inputs[1], 0)
                            : dim_of(g, d.inputs[1], 1);
      if (!is_row(*c, n)) continue;
      fused.inputs = {d.inputs[0], d.inputs[1], passes::other_operand(add, d.outputs[0])};
      fused.attrs["beta"] = 1.0f;
    } else {
      continue;
    }
    rw.remove(id);
    rw.remove(add_id);
    rw.add_node(std::move(fused));
    ++count;
  }
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
