#include "backends/aot/gemm_fold.h"
#include "ops/attrs.h"

#include <algorithm>
#include <cmath>

namespace hone::aot {
namespace {

/// The permutation (shape_rules.cpp has checked it; identity if it is not one).
std::vector<int64_t> perm_of(const Node& n, size_t rank) {
  std::vector<int64_t> identity(rank);
  for (size_t i = 0; i < rank; ++i) identity[i] = static_cast<int64_t>(i);
  return ops::transpose_perm(n, static_cast<int64_t>(rank)).value_or(identity);
}

DimExprs contiguous_strides(const DimExprs& d) {
  DimExprs s(d.size());
  for (size_t i = 0; i < d.size(); ++i) s[i] = product(d, i + 1, d.size());
  return s;
}

bool is_graph_output(const Program& p, ValueId v) {
  const auto& outs = p.graph->outputs();
  return std::find(outs.begin(), outs.end(), v) != outs.end();
}

const DimExprs& dims(const Program& p, ValueId v) {
  return p.values[static_cast<size_t>(v)].dims;
}

/// The folded Transpose that made `v`, or nullptr. Folded Transposes are the
/// only ones whose output is a view: every other one runs as a step.
const Node* folded_transpose_of(const Program& p, ValueId v) {
  if (p.values[static_cast<size_t>(v)].place != Place::kView) return nullptr;
  const NodeId prod = p.graph->value(v).producer;
  if (prod < 0 || p.node(prod).op_type != "Transpose") return nullptr;
  return &p.node(prod);
}

/// A constant f32 vector along the last dim of `out` ([N], or [1, ..., 1, N]).
bool is_bias(const Program& p, ValueId v, const DimExprs& out) {
  const ValueInfo& info = p.values[static_cast<size_t>(v)];
  if (!info.constant || !info.is_f32() || info.dims.empty() || out.empty()) return false;
  if (info.dims.size() > out.size() || !(info.dims.back() == out.back())) return false;
  for (size_t i = 0; i + 1 < info.dims.size(); ++i)
    if (!(info.dims[i].is_const() && info.dims[i].value() == 1)) return false;
  return true;
}

}  // namespace

bool folds_into_matmul_operand(const Program& p, const std::vector<std::vector<NodeId>>& consumers,
                               NodeId t) {
  const Node& n = p.node(t);
  if (n.op_type != "Transpose" || n.inputs.empty() || n.inputs[0] < 0) return false;
  const ValueId out = n.outputs[0];
  const auto& readers = consumers[static_cast<size_t>(out)];
  if (readers.empty() || is_graph_output(p, out)) return false;
  for (NodeId c : readers)
    if (p.node(c).op_type != "MatMul") return false;
  const size_t r = dims(p, out).size();
  if (r < 2) return false;
  const std::vector<int64_t> perm = perm_of(n, r);
  const auto last = static_cast<int64_t>(r - 1);
  // One matrix axis must be the input's contiguous one; the other gives the
  // leading dimension. Batch axes may be anywhere.
  return perm[r - 1] == last || perm[r - 2] == last;
}

bool folds_into_matmul_result(const Program& p, const std::vector<std::vector<NodeId>>& consumers,
                              const Step& s, NodeId t) {
  const Node& n = p.node(t);
  if (n.op_type != "Transpose" || s.anchor < 0 || !s.chain.empty()) return false;
  const Node& mm = p.node(s.anchor);
  if (mm.op_type != "MatMul" || n.inputs.empty() || n.inputs[0] != s.result) return false;
  if (consumers[static_cast<size_t>(s.result)].size() != 1 || is_graph_output(p, s.result))
    return false;
  // A 1-D operand drops an output axis; keep those on the plain path.
  for (ValueId v : p.operands.at(s.anchor))
    if (dims(p, v).size() < 2) return false;
  const size_t r = dims(p, s.result).size();
  if (r < 2) return false;
  // Rows of the product stay rows (unit stride along N) in the output.
  return perm_of(n, r)[r - 1] == static_cast<int64_t>(r - 1);
}

Strided matmul_operand(const Program& p, ValueId v, bool b_side) {
  Strided s;
  if (const Node* t = folded_transpose_of(p, v)) {
    const ValueId x = t->inputs[0];
    const DimExprs& xd = dims(p, x);
    const DimExprs xs = contiguous_strides(xd);
    s.storage = x;
    for (int64_t a : perm_of(*t, xd.size())) {
      s.dims.push_back(xd[static_cast<size_t>(a)]);
      s.strides.push_back(xs[static_cast<size_t>(a)]);
    }
  } else {
    s.storage = v;
    s.dims = dims(p, v);
    s.strides = contiguous_strides(s.dims);
  }
  if (s.dims.size() == 1) {
    if (b_side) {
      s.dims.push_back(1);
      s.strides.push_back(1);
    } else {
      s.dims.insert(s.dims.begin(), DimExpr(1));
      s.strides.insert(s.strides.begin(), s.dims.back());
    }
  }
  return s;
}

Strided matmul_result(const Program& p, const Step& s, const DimExprs& out) {
  Strided r;
  r.storage = s.result;
  r.dims = out;
  if (!s.chain.empty() && p.node(s.chain[0]).op_type == "Transpose") {
    // The step's buffer holds the Transpose's output; product axis a lands
    // on output axis j where perm[j] == a.
    const Node& t = p.node(s.chain[0]);
    const DimExprs zs = contiguous_strides(dims(p, t.outputs[0]));
    const std::vector<int64_t> perm = perm_of(t, out.size());
    r.strides.resize(out.size());
    for (size_t j = 0; j < perm.size(); ++j) r.strides[static_cast<size_t>(perm[j])] = zs[j];
    return r;
  }
  r.strides = contiguous_strides(out);
  return r;
}

GemmScale gemm_scale(const Program& p, const Step& s) {
  GemmScale g;
  if (s.anchor < 0) return g;
  const std::string& op = p.node(s.anchor).op_type;
  if (op != "MatMul" && op != "Gemm") return g;
  size_t i = 0;
  if (op == "MatMul" && !s.chain.empty() && p.node(s.chain[0]).op_type == "Transpose") ++i;
  ValueId cur = i == 0 ? p.node(s.anchor).outputs[0] : p.node(s.chain[0]).outputs[0];
  // Absorbing a node changes what the anchor stores, so only past values no
  // one keeps (a stored one, e.g. a graph output, must stay as it was).
  auto kept = [&](ValueId v) {
    const Place pl = p.values[static_cast<size_t>(v)].place;
    return pl == Place::kArena || pl == Place::kOutput;
  };
  for (; i < s.chain.size() && !kept(cur); ++i) {
    const Node& m = p.node(s.chain[i]);
    const auto& ops = p.operands.at(s.chain[i]);
    if (ops.size() != 2 || (m.op_type != "Mul" && m.op_type != "Div")) break;
    ValueId other = kNoValue;
    if (ops[0] == cur && ops[1] != cur)
      other = ops[1];
    else if (m.op_type == "Mul" && ops[1] == cur && ops[0] != cur)
      other = ops[0];
    if (other == kNoValue) break;
    const auto& lit = p.values[static_cast<size_t>(other)].literal;
    // A zero or non-finite scale would change what NaN and Inf products
    // become (SGEMM may skip the product when alpha is 0).
    if (!lit || *lit == 0.0f || !std::isfinite(*lit)) break;
    g.alpha = m.op_type == "Mul" ? g.alpha * *lit : g.alpha / *lit;
    cur = m.outputs[0];
  }
  // Then a MatMul's bias: the rows start as the bias and SGEMM adds to them
  // (beta 1), which saves the chain's pass over the output.
  if (op == "MatMul" && i < s.chain.size() && !kept(cur) && p.node(s.chain[i]).op_type == "Add") {
    const auto& ops = p.operands.at(s.chain[i]);
    const ValueId other = ops.size() == 2 && ops[0] == cur   ? ops[1]
                          : ops.size() == 2 && ops[1] == cur ? ops[0]
                                                             : kNoValue;
    const DimExprs& out = dims(p, cur);
    if (other != kNoValue && other != cur && is_bias(p, other, out)) {
      g.bias = other;
      ++i;
    }
  }
  g.absorbed = i;
  return g;
}

}  // namespace hone::aot
