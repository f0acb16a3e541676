// Element-wise chains: one loop over the step's output computes every chain
// member in registers, reading each outside operand through its own broadcast.
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "backends/aot/eltwise.h"
#include "backends/aot/emitter.h"
#include "backends/aot/gemm_fold.h"
#include "backends/aot/nhwc.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/typed_values.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

/// How an operand of dims `op` reads along output dim j: 0 neutral (the
/// output dim is 1), 1 the same extent, 2 broadcast.
int mode_at(const DimExprs& out, const DimExprs& op, size_t j) {
  if (is_one(out[j])) return 0;
  const size_t r = out.size(), q = op.size();
  if (j + q < r) return 2;
  return is_one(op[j + q - r]) ? 2 : 1;
}

std::string v(ValueId id) {
  return "v" + std::to_string(id);
}

/// A C literal of integer `v` (INT64_MIN has none of its own).
std::string int_literal(int64_t v) {
  return v == std::numeric_limits<int64_t>::min() ? std::string("INT64_MIN")
                                                  : "INT64_C(" + std::to_string(v) + ")";
}

/// Clip of integers as the reference: below the lower bound it takes it,
/// then above the upper bound the upper one (each bound optional).
std::string clip_int_expr(const Program& p, const Node& n, const std::string& x) {
  std::string y = x;
  for (size_t i = 1; i < 3; ++i) {
    if (i >= n.inputs.size() || n.inputs[i] < 0) continue;
    const Tensor& t = *p.values[static_cast<size_t>(n.inputs[i])].constant;
    const std::string b = int_literal(tensor_element_as_int64(t, 0));
    y = i == 1 ? "(" + y + " < " + b + " ? " + b + " : " + y + ")"
               : "(" + y + " > " + b + " ? " + b + " : " + y + ")";
  }
  return y;
}

/// The C expression of element-wise node `n` over operand expressions `a`:
/// the table's (eltwise.h), or one of the ops with constant operands of their own.
std::string expr(const Program& p, const Node& n, const std::vector<std::string>& a) {
  const std::string& op = n.op_type;
  const std::string& x = a[0];
  if (const EltwiseOp* e = find_eltwise(op)) return e->expr(n, a);
  if (op == "Cast")
    return cast_c_expr(p.values[static_cast<size_t>(n.inputs[0])].dtype,
                       p.values[static_cast<size_t>(n.outputs[0])].dtype, x);
  if (op == "PRelu") return "(" + x + " < 0.0f ? " + a[1] + " * " + x + " : " + x + ")";
  if (op == "BatchNormalization") return "(" + x + " * " + a[1] + " + " + a[2] + ")";
  // Clip: bounds from constant inputs (opset 11+) or attributes.
  if (!p.values[static_cast<size_t>(n.inputs[0])].is_f32()) return clip_int_expr(p, n, x);
  std::string lo = "(-INFINITY)", hi = "INFINITY";
  if (p.graph->opset() < 11) {
    const ops::ClipAttrs c = ops::clip_attrs(n);
    lo = float_literal(c.min);
    hi = float_literal(c.max);
  } else {
    for (size_t i = 1; i < 3; ++i)
      if (i < n.inputs.size() && n.inputs[i] >= 0) {
        const Tensor& t = *p.values[static_cast<size_t>(n.inputs[i])].constant;
        (i == 1 ? lo : hi) = float_literal(static_cast<float>(tensor_element_as_double(t, 0)));
      }
  }
  return "(" + x + " < " + lo + " ? " + lo + " : (" + x + " > " + hi + " ? " + hi + " : " + x +
         "))";
}

}  // namespace

std::string float_literal(float f) {
  if (std::isnan(f)) return "NAN";
  if (std::isinf(f)) return f > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f < 0 ? "(" + s + "f)" : s + "f";
}

std::string broadcast_offset(const Emitter& e, const DimExprs& out, size_t k, const DimExprs& op,
                             const std::string& idx) {
  const size_t r = out.size(), q = op.size();
  std::string sum;
  size_t j = 0;
  while (j < k) {
    if (mode_at(out, op, j) != 1) {
      ++j;
      continue;
    }
    size_t j1 = j;
    while (j1 < k && mode_at(out, op, j1) == 1) ++j1;
    // A run [j, j1) of dims the operand shares: one div and one mod.
    const DimExpr below = product(out, j1, k), extent = product(out, j, j1);
    const DimExpr stride = product(op, j1 - 1 + q - r + 1, q);
    std::string t = idx;
    if (!(below.is_const() && below.value() == 1)) t = "(" + t + " / " + e.dim(below) + ")";
    if (j > 0) t = "(" + t + " % " + e.dim(extent) + ")";
    if (!(stride.is_const() && stride.value() == 1)) t += " * " + e.dim(stride);
    sum += (sum.empty() ? "" : " + ") + t;
    j = j1;
  }
  return sum.empty() ? "0" : sum;
}

void Emitter::emit_chain(const Step& s) {
  const Program& p = p_;
  const ValueId result = s.result;
  // A channels-last step walks N, H, W, C (per-channel operands broadcast innermost),
  // or N, C/16, H, W, 16 when blocked.
  auto dims = [&](ValueId v) {
    if (!s.nhwc) return Emitter::dims(v);
    return p.blocked ? blocked_dims(Emitter::dims(v)) : nhwc_dims(Emitter::dims(v));
  };
  const DimExprs out = dims(result);
  const size_t r = out.size();
  std::set<ValueId> made;
  if (s.anchor >= 0) made.insert(p.node(s.anchor).outputs[0]);
  for (NodeId m : s.chain) made.insert(p.node(m).outputs[0]);
  // Outside operands, each once, in first-use order; literals are inlined.
  std::vector<ValueId> ext;
  for (NodeId m : s.chain)
    for (ValueId o : p.operands.at(m))
      if (!made.count(o) && !p.values[static_cast<size_t>(o)].literal &&
          std::find(ext.begin(), ext.end(), o) == ext.end())
        ext.push_back(o);
  // Split the output dims at k: over [k, r) every operand is either the
  // same extent (read at i) or broadcast (read once), so the inner loop is plain.
  size_t k = r;
  std::vector<int> suffix(ext.size(), 0);
  while (k > 0) {
    bool ok = true;
    std::vector<int> next = suffix;
    for (size_t o = 0; o < ext.size() && ok; ++o) {
      const int m = mode_at(out, dims(ext[o]), k - 1);
      if (m == 0) continue;
      if (next[o] != 0 && next[o] != m) ok = false;
      next[o] = m;
    }
    if (!ok) break;
    suffix = next;
    --k;
  }
  const DimExpr outer = product(out, 0, k), inner = product(out, k, r);
  const bool flat = outer.is_const() && outer.value() == 1;
  std::vector<ValueId> stores;
  for (NodeId m : s.chain) {
    const ValueId o = p.node(m).outputs[0];
    const Place pl = p.values[static_cast<size_t>(o)].place;
    if (pl == Place::kArena || pl == Place::kOutput) stores.push_back(o);
  }
  line(ctype(result) + "* Y = " + ptr(result) + ";");
  for (size_t o = 0; o < ext.size(); ++o)
    line("const " + ctype(ext[o]) + "* P" + std::to_string(o) + " = " + ptr(ext[o]) + ";  /* " +
         comment(p.values[static_cast<size_t>(ext[o])].name + " " + to_string(dims(ext[o]))) +
         " */");
  for (ValueId st : stores)
    if (st != result) line(ctype(st) + "* S" + std::to_string(st) + " = " + ptr(st) + ";");
  const std::string n_inner = dim(inner), n_outer = dim(outer);
  auto body = [&](const std::string& i, const std::string& base) {
    std::vector<std::string> names(p.values.size());
    if (s.anchor >= 0) {
      const ValueId a = p.node(s.anchor).outputs[0];
      line(ctype(a) + " " + v(a) + " = Y[" + base + i + "];");
      names[static_cast<size_t>(a)] = v(a);
    }
    for (size_t o = 0; o < ext.size(); ++o)
      names[static_cast<size_t>(ext[o])] =
          suffix[o] == 2 ? "b" + std::to_string(o) : "q" + std::to_string(o) + "[" + i + "]";
    const size_t absorbed = gemm_scale(p, s).absorbed;
    for (size_t ci = 0; ci < s.chain.size(); ++ci) {
      const NodeId m = s.chain[ci];
      const Node& n = p.node(m);
      if (ci < absorbed) {  // done by the GEMM: the anchor's value already
        const ValueId a = p.node(s.anchor).outputs[0];
        line("const float " + v(n.outputs[0]) + " = " + v(a) + ";  /* " +
             comment(n.op_type + " '" + n.name + "' folded into the GEMM") + " */");
        names[static_cast<size_t>(n.outputs[0])] = v(n.outputs[0]);
        continue;
      }
      std::vector<std::string> args;
      for (ValueId o : p.operands.at(m)) {
        const ValueInfo& info = p.values[static_cast<size_t>(o)];
        args.push_back(info.literal && !made.count(o) ? float_literal(*info.literal)
                                                      : names[static_cast<size_t>(o)]);
      }
      const ValueId o = n.outputs[0];
      line("const " + ctype(o) + " " + v(o) + " = " + expr(p, n, args) + ";  /* " +
           comment(n.op_type + " '" + n.name + "'") + " */");
      names[static_cast<size_t>(o)] = v(o);
    }
    for (ValueId st : stores)
      line((st == result ? std::string("Y") : "S" + std::to_string(st)) + "[" + base + i +
           "] = " + v(st) + ";");
  };
  if (flat) {
    for (size_t o = 0; o < ext.size(); ++o)
      line(std::string(suffix[o] == 2 ? "const " + ctype(ext[o]) + " b" + std::to_string(o) +
                                            " = P" + std::to_string(o) + "[0];"
                                      : "const " + ctype(ext[o]) + "* q" + std::to_string(o) +
                                            " = P" + std::to_string(o) + ";"));
    begin_parallel("parallel for simd", worth_threads(n_inner));
    open("for (int64_t i = 0; i < " + n_inner + "; ++i)");
    body("i", "");
    close();
    end_parallel();
    return;
  }
  begin_parallel("parallel for", worth_threads("(" + n_outer + ") * (" + n_inner + ")"));
  open("for (int64_t o = 0; o < " + n_outer + "; ++o)");
  for (size_t o = 0; o < ext.size(); ++o) {
    const std::string off = broadcast_offset(*this, out, k, dims(ext[o]), "o");
    if (suffix[o] == 2)
      line("const " + ctype(ext[o]) + " b" + std::to_string(o) + " = P" + std::to_string(o) + "[" +
           off + "];");
    else
      line("const " + ctype(ext[o]) + "* q" + std::to_string(o) + " = P" + std::to_string(o) +
           " + " + off + ";");
  }
  line("const int64_t base = o * " + n_inner + ";");
  open("for (int64_t i = 0; i < " + n_inner + "; ++i)");
  body("i", "base + ");
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
