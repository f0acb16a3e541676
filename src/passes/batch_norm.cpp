// fold_batch_norm: inference BatchNormalization folded into the Conv or Gemm
// that feeds it. BN computes y = (x - mean) * s + bias with
// s = scale / sqrt(var + eps) per channel; both Conv and Gemm are linear in
// their weights per output channel, so scaling those weights by s and
// shifting the bias gives the same function with one node fewer.
#include <cmath>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

using passes::constant_of;

/// The per-channel factors s and shifts t (y = x * s + t) of an inference BN
/// with constant f32 parameters of `channels` entries; nothing otherwise.
struct Affine {
  std::vector<double> s, t;
};
std::optional<Affine> bn_affine(const Graph& g, const Node& bn) {
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5) return {};
  const auto ba = ops::batch_norm_attrs(bn);
  if (!ba || ba->training_mode || !ba->spatial) return {};
  for (size_t k = 1; k < bn.outputs.size(); ++k)
    if (bn.outputs[k] >= 0) return {};  // running statistics are asked for
  const Tensor* p[4];
  for (size_t k = 0; k < 4; ++k) {
    p[k] = constant_of(g, bn.inputs[k + 1]);
    if (p[k] == nullptr || p[k]->dtype() != DType::kF32 || p[k]->rank() != 1) return {};
    if (p[k]->numel() != p[0]->numel()) return {};
  }
  const double eps = ba->epsilon;
  Affine a;
  for (int64_t c = 0; c < p[0]->numel(); ++c) {
    const double scale = p[0]->data<float>()[c], bias = p[1]->data<float>()[c];
    const double mean = p[2]->data<float>()[c], var = p[3]->data<float>()[c];
    if (!(var + eps > 0)) return {};  // the model divides by zero: keep it as it is
    const double s = scale / std::sqrt(var + eps);
    a.s.push_back(s);
    a.t.push_back(bias - mean * s);
  }
  return a;
}

Tensor f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}

/// Conv(X, W[, B]) -> BN.
bool fold_into_conv(const Graph& g, const Node& conv, const Node& bn, const Affine& a,
                    passes::Rewriter& rw) {
  const Tensor* w = constant_of(g, conv.inputs[1]);
  if (w == nullptr || w->dtype() != DType::kF32 || w->rank() < 3) return false;
  const int64_t cout = w->dim(0);
  if (cout != static_cast<int64_t>(a.s.size())) return false;
  const Tensor* b = conv.inputs.size() > 2 ? constant_of(g, conv.inputs[2]) : nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 &&
      (b == nullptr || b->dtype() != DType::kF32 || b->numel() != cout))
    return false;
  const int64_t per = w->numel() / cout;
  std::vector<double> nw(static_cast<size_t>(w->numel())), nb(static_cast<size_t>(cout));
  for (int64_t c = 0; c < cout; ++c) {
    for (int64_t k = 0; k < per; ++k)
      nw[static_cast<size_t>(c * per + k)] = w->data<float>()[c * per + k] * a.s[c];
    const double bias = b ? b->data<float>()[c] : 0.0;
    nb[static_cast<size_t>(c)] = bias * a.s[c] + a.t[c];
  }
  Node n = conv;
  n.inputs = {conv.inputs[0],
              rw.add_constant(g.value(conv.inputs[1]).name + "_bn", f32(w->shape(), nw)),
              rw.add_constant(conv.name + "_bn_bias", f32({cout}, nb))};
  n.outputs = {bn.outputs[0]};
  rw.add_node(std::move(n));
  return true;
}

/// Gemm(A, B[, C]) -> BN over the output columns.
bool fold_into_gemm(const Graph& g, const Node& gemm, const Node& bn, const Affine& a,
                    passes::Rewriter& rw) {
  const Tensor* b = constant_of(g, gemm.inputs[1]);
  if (b == nullptr || b->dtype() != DType::kF32 || b->rank() != 2) return false;
  const auto ga = ops::gemm_attrs(gemm);
  if (!ga) return false;
  const bool trans_b = ga->trans_b;
  const int64_t n_cols = trans_b ? b->dim(0) : b->dim(1);
  const int64_t k_dim = trans_b ? b->dim(1) : b->dim(0);
  if (n_cols != static_cast<int64_t>(a.s.size())) return false;
  const bool has_c = gemm.inputs.size() > 2 && gemm.inputs[2] >= 0;
  const Tensor* c = has_c ? constant_of(g, gemm.inputs[2]) : nullptr;
  // C as a row (or scalar): other shapes of C would need expanding; leave them.
  if (has_c && (c == nullptr || c->dtype() != DType::kF32 || c->rank() > 2 ||
                !(c->numel() == 1 || (c->numel() == n_cols && c->shape().back() == n_cols))))
    return false;
  const double beta = ga->beta;
  std::vector<double> nb(static_cast<size_t>(b->numel())), nc(static_cast<size_t>(n_cols));
  for (int64_t k = 0; k < k_dim; ++k)
    for (int64_t j = 0; j < n_cols; ++j) {
      const int64_t idx = trans_b ? j * k_dim + k : k * n_cols + j;
      nb[static_cast<size_t>(idx)] = b->data<float>()[idx] * a.s[j];
    }
  for (int64_t j = 0; j < n_cols; ++j) {
    const double cj = c ? beta * c->data<float>()[c->numel() == 1 ? 0 : j] : 0.0;
    nc[static_cast<size_t>(j)] = cj * a.s[j] + a.t[j];
  }
  Node n = gemm;
  n.inputs = {gemm.inputs[0],
              rw.add_constant(g.value(gemm.inputs[1]).name + "_bn", f32(b->shape(), nb)),
              rw.add_constant(gemm.name + "_bn_bias", f32({n_cols}, nc))};
  n.attrs["beta"] = 1.0f;
  n.outputs = {bn.outputs[0]};
  rw.add_node(std::move(n));
  return true;
}

}  // namespace

Result<Graph> fold_batch_norm(const Graph& g, PassStats* stats) {
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& bn = g.nodes()[i];
    if (bn.op_type != "BatchNormalization" || bn.inputs.empty() || bn.outputs.empty() ||
        bn.outputs[0] < 0)
      continue;
    const Node* dense = uses.producer(bn.inputs[0]);
    if (dense == nullptr || !dense->domain.empty() || dense->outputs.size() != 1) continue;
    if (uses.sole_reader(bn.inputs[0]) != static_cast<NodeId>(i)) continue;
    const NodeId dense_id = g.value(bn.inputs[0]).producer;
    if (rw.taken(dense_id) || rw.taken(static_cast<NodeId>(i))) continue;
    auto a = bn_affine(g, bn);
    if (!a) continue;
    bool done = false;
    if (dense->op_type == "Conv" && dense->inputs.size() >= 2)
      done = fold_into_conv(g, *dense, bn, *a, rw);
    else if (dense->op_type == "Gemm" && dense->inputs.size() >= 2)
      done = fold_into_gemm(g, *dense, bn, *a, rw);
    if (!done) continue;
    rw.remove(dense_id);
    rw.remove(static_cast<NodeId>(i));
    ++count;
  }
  return passes::finish_pass(g, rw, count, stats);
}

}  // namespace hone
