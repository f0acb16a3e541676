// lower_einsum: an Einsum of two operands that is a batched matrix product
// becomes Transpose, Reshape and MatMul, which every backend runs with its
// own GEMM instead of leaving the node to the reference. Each label is one
// of: batch (both operands and the output), M (the first operand and the
// output), N (the second and the output) or K (both operands, summed). The
// first operand is laid out [batch, M, K], the second [batch, K, N], their
// MatMul is [batch, M, N], and a last Transpose puts the labels in the
// output's order. Groups of several labels are merged by a Reshape (their
// dims must be known, but for one group that takes -1); an empty M, N or K
// is a dim of 1. Where the product's dims go back to one per label and
// two or more of them are unknown (XLNet's `ibnd,hnd->ibh` over symbolic
// seq and batch), the Reshape's target is computed from the operands'
// Shapes (Gather and Concat, which the shape folders read). One operand
// whose output is a permutation of its labels (`ijbn->bnij`) is a Transpose.
// Left alone, with the reason logged: ellipses, a label repeated within a
// term (a diagonal), a label of one operand alone that the output lacks (a
// sum over it), more than two operands.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

/// The labels of an equation's terms; why not, when it is not a product of
/// two operands of letter labels.
struct Equation {
  std::string a, b, out;
};

std::string parse_equation(const std::string& text, Equation* eq) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  if (s.find('.') != std::string::npos) return "an ellipsis";
  const size_t arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  const size_t comma = lhs.find(',');
  if (comma == std::string::npos || lhs.find(',', comma + 1) != std::string::npos)
    return "not two operands";
  eq->a = lhs.substr(0, comma);
  eq->b = lhs.substr(comma + 1);
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto order = [](char c) { return c >= 'a' ? c - 'a' : 26 + (c - 'A'); };  // a-z, then A-Z
  for (const std::string* t : {&eq->a, &eq->b})
    for (size_t i = 0; i < t->size(); ++i) {
      if (!letter((*t)[i])) return "an invalid character";
      if (t->find((*t)[i], i + 1) != std::string::npos)
        return std::string("label '") + (*t)[i] + "' twice in one term (a diagonal)";
    }
  if (arrow != std::string::npos) {
    eq->out = s.substr(arrow + 2);
  } else {
    // Implicit output: the labels seen once, in label order (as the reference).
    for (char c : eq->a + eq->b)
      if (std::count(eq->a.begin(), eq->a.end(), c) + std::count(eq->b.begin(), eq->b.end(), c) ==
          1)
        eq->out += c;
    std::sort(eq->out.begin(), eq->out.end(), [&](char x, char y) { return order(x) < order(y); });
  }
  for (size_t i = 0; i < eq->out.size(); ++i) {
    const char c = eq->out[i];
    if (!letter(c)) return "an invalid character";
    if (eq->out.find(c, i + 1) != std::string::npos)
      return std::string("label '") + c + "' twice in the output";
    if (eq->a.find(c) == std::string::npos && eq->b.find(c) == std::string::npos)
      return std::string("output label '") + c + "' in no operand";
  }
  for (const std::string* t : {&eq->a, &eq->b}) {
    const std::string& other = t == &eq->a ? eq->b : eq->a;
    for (char c : *t)
      if (other.find(c) == std::string::npos && eq->out.find(c) == std::string::npos)
        return std::string("label '") + c + "' of one operand is summed (not a matrix product)";
  }
  return {};
}

bool has(const std::string& s, char c) {
  return s.find(c) != std::string::npos;
}

/// Positions of `labels` in `term`.
std::vector<int64_t> positions(const std::string& term, const std::string& labels) {
  std::vector<int64_t> p;
  for (char c : labels) p.push_back(static_cast<int64_t>(term.find(c)));
  return p;
}

bool identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

struct Lowering {
  passes::Rewriter& rw;
  std::string base;

  DType dtype;

  ValueId node(const std::string& op, std::vector<ValueId> ins,
               std::map<std::string, Attribute> attrs, ValueId out = kNoValue) {
    if (out == kNoValue) out = rw.new_value(base + "_" + op, dtype);
    Node n;
    n.name = rw.node_name(base + "_" + op);
    n.op_type = op;
    n.inputs = std::move(ins);
    n.outputs = {out};
    n.attrs = std::move(attrs);
    rw.add_node(std::move(n));
    return out;
  }
  ValueId transpose(ValueId v, const std::vector<int64_t>& perm) {
    if (identity(perm)) return v;
    return node("Transpose", {v}, {{"perm", perm}});
  }
  ValueId reshape(ValueId v, const std::vector<int64_t>& target, ValueId out = kNoValue) {
    const auto n = static_cast<int64_t>(target.size());
    const ValueId shape = rw.add_constant(base + "_shape", Tensor::from<int64_t>({n}, target));
    return node("Reshape", {v, shape}, {}, out);
  }
  /// The dims of `labels` as a 1-D i64 value: Shape(x) gathered at each
  /// label's position in `term`, x's labels.
  ValueId dims(ValueId x, const std::string& term, const std::string& labels) {
    const ValueId shape = node("Shape", {x}, {}, rw.new_value(base + "_Shape", DType::kI64));
    const auto n = static_cast<int64_t>(labels.size());
    const ValueId idx =
        rw.add_constant(base + "_idx", Tensor::from<int64_t>({n}, positions(term, labels)));
    return node("Gather", {shape, idx}, {{"axis", int64_t{0}}},
                rw.new_value(base + "_Gather", DType::kI64));
  }
};

/// The product of the dims of `labels` (sizes from `dims`, -1 unknown):
/// -1 when one is unknown.
int64_t group_size(const std::string& labels, const std::vector<int64_t>& dims,
                   const std::string& term) {
  int64_t p = 1;
  for (char c : labels) {
    const int64_t d = dims[term.find(c)];
    if (d < 0) return -1;
    p *= d;
  }
  return p;
}

/// Dims [start, start + len) of a Reshape's input that become one entry of
/// its target, of `size` (-1 unknown); start -1: part of one input dim.
struct Span {
  int64_t start, len, size;
};

/// The target: 0 (copy) where an entry is the input dim at its own index,
/// else its size, else -1 for one entry; nothing when two are unknown.
std::optional<std::vector<int64_t>> reshape_target(const std::vector<Span>& spans) {
  std::vector<int64_t> t;
  bool unknown = false;
  for (const Span& s : spans) {
    const auto i = static_cast<int64_t>(t.size());
    if (s.len == 1 && s.start == i) {
      t.push_back(0);
    } else if (s.size >= 0) {
      t.push_back(s.size);
    } else {
      if (unknown) return std::nullopt;
      unknown = true;
      t.push_back(-1);
    }
  }
  return t;
}

/// Static dims of `v` by position (-1 where unknown); empty when its rank
/// is not `rank`.
std::vector<int64_t> static_dims(const Value& v, size_t rank) {
  std::vector<int64_t> d(rank, -1);
  if (!v.shape) return d;
  if (v.shape->rank() != rank) return {};
  for (size_t i = 0; i < rank; ++i)
    if ((*v.shape)[i].is_static()) d[i] = (*v.shape)[i].value();
  return d;
}

/// One operand whose output is a permutation of its labels: a Transpose.
std::string lower_permutation(const Graph& g, passes::Rewriter& rw, NodeId id) {
  const Node& n = g.node(id);
  const auto equation = ops::einsum_equation(n);
  if (!equation) return equation.error().message();
  std::string s;
  for (char c : *equation)
    if (c != ' ') s += c;
  const size_t arrow = s.find("->");
  if (arrow == std::string::npos) return "one operand without an explicit output";
  const std::string in = s.substr(0, arrow), out = s.substr(arrow + 2);
  std::string sorted_in = in, sorted_out = out;
  std::sort(sorted_in.begin(), sorted_in.end());
  std::sort(sorted_out.begin(), sorted_out.end());
  if (sorted_in != sorted_out ||
      std::adjacent_find(sorted_in.begin(), sorted_in.end()) != sorted_in.end())
    return "one operand, not a permutation of its labels";
  for (char c : in)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return "an invalid character";
  const Value& x = g.value(n.inputs[0]);
  if (x.shape && x.shape->rank() != in.size()) return "rank differs from the term";
  Lowering low{rw, n.name.empty() ? "einsum" : n.name, x.dtype};
  const std::vector<int64_t> perm = positions(in, out);
  if (identity(perm)) {
    low.node("Identity", {n.inputs[0]}, {}, n.outputs[0]);
  } else {
    low.node("Transpose", {n.inputs[0]}, {{"perm", perm}}, n.outputs[0]);
  }
  return {};
}

std::string lower_one(const Graph& g, passes::Rewriter& rw, NodeId id) {
  const Node& n = g.node(id);
  if (passes::is_op(n, "Einsum", 1)) return lower_permutation(g, rw, id);
  if (!passes::is_op(n, "Einsum", 2)) return "not an Einsum of one or two operands";
  Equation eq;
  const auto equation = ops::einsum_equation(n);
  if (!equation) return equation.error().message();
  if (std::string why = parse_equation(*equation, &eq); !why.empty()) return why;
  const Value& va = g.value(n.inputs[0]);
  const Value& vb = g.value(n.inputs[1]);
  const std::vector<int64_t> da = static_dims(va, eq.a.size());
  const std::vector<int64_t> db = static_dims(vb, eq.b.size());
  if (da.size() != eq.a.size() || db.size() != eq.b.size()) return "ranks differ from the terms";
  // Reshape's 0 copies a dim: a dim of size 0 would read as that.
  for (const auto* d : {&da, &db})
    if (std::find(d->begin(), d->end(), 0) != d->end()) return "a dim of size 0";
  std::string batch, m, nn, k;
  for (char c : eq.out) {
    if (has(eq.a, c) && has(eq.b, c))
      batch += c;
    else if (has(eq.a, c))
      m += c;
    else
      nn += c;
  }
  for (char c : eq.a)
    if (has(eq.b, c) && !has(eq.out, c)) k += c;
  // Each Reshape's target: one entry per span of its input's dims.
  const auto nb = static_cast<int64_t>(batch.size());
  const auto nm = static_cast<int64_t>(m.size()), nk = static_cast<int64_t>(k.size());
  std::vector<Span> sa, sb, so;
  for (int64_t j = 0; j < nb; ++j) {
    const Span s{j, 1, da[eq.a.find(batch[static_cast<size_t>(j)])]};
    sa.push_back(s);
    sb.push_back(s);
    so.push_back(s);
  }
  sa.push_back({nb, nm, group_size(m, da, eq.a)});
  // K's labels are in both operands: a size either knows (a weight's).
  int64_t k_size = group_size(k, da, eq.a);
  if (k_size < 0) k_size = group_size(k, db, eq.b);
  sa.push_back({nb + nm, nk, k_size});
  sb.push_back({nb, nk, k_size});
  sb.push_back({nb + nk, static_cast<int64_t>(nn.size()), group_size(nn, db, eq.b)});
  // The product [batch, M, N] back to a dim per label (an empty group's 1 goes).
  for (char c : m) so.push_back({m.size() == 1 ? nb : -1, 1, da[eq.a.find(c)]});
  for (char c : nn) so.push_back({nn.size() == 1 ? nb + 1 : -1, 1, db[eq.b.find(c)]});
  auto single = [](const std::string& s) { return s.size() == 1; };
  const bool reshape_a = !single(m) || !single(k), reshape_b = !single(k) || !single(nn),
             reshape_out = !single(m) || !single(nn);
  const auto ta = reshape_target(sa), tb = reshape_target(sb), to = reshape_target(so);
  if ((reshape_a && !ta) || (reshape_b && !tb))
    return "more than one dim of unknown size in one Reshape";
  Lowering low{rw, n.name.empty() ? "einsum" : n.name, va.dtype};
  // A as [batch, M, K], B as [batch, K, N].
  ValueId a = low.transpose(n.inputs[0], positions(eq.a, batch + m + k));
  if (reshape_a) a = low.reshape(a, *ta);
  ValueId b = low.transpose(n.inputs[1], positions(eq.b, batch + k + nn));
  if (reshape_b) b = low.reshape(b, *tb);
  // [batch, M, N], then a dim per label, then the output's order.
  const std::vector<int64_t> perm = positions(batch + m + nn, eq.out);
  const bool last = !reshape_out && identity(perm);
  ValueId y = low.node("MatMul", {a, b}, {}, last ? n.outputs[0] : kNoValue);
  if (reshape_out) {
    const ValueId out = identity(perm) ? n.outputs[0] : kNoValue;
    if (to) {
      y = low.reshape(y, *to, out);
    } else {  // two dims or more unknown: [batch, M, N] by label from the operands' Shapes
      const ValueId target = low.node(
          "Concat", {low.dims(n.inputs[0], eq.a, batch + m), low.dims(n.inputs[1], eq.b, nn)},
          {{"axis", int64_t{0}}}, rw.new_value(low.base + "_target", DType::kI64));
      y = low.node("Reshape", {y, target}, {}, out);
    }
  }
  if (!identity(perm)) low.node("Transpose", {y}, {{"perm", perm}}, n.outputs[0]);
  return {};
}

}  // namespace

Result<Graph> lower_einsum(const Graph& in, PassStats* stats) {
  auto match = [](const Node& n) { return n.op_type == "Einsum" && n.domain.empty(); };
  auto lower = [](const Graph& g, passes::Rewriter& rw, NodeId id) -> std::string {
    std::string why = lower_one(g, rw, id);
    if (why.empty()) return why;
    return "'" + ops::einsum_equation(g.node(id)).value_or("") + "': " + why;
  };
  return passes::rewrite_nodes(in, stats, "lower_einsum", match, lower);
}

}  // namespace hone
