// Slice whose starts or ends are host values, computed from dims per
// signature (RAFT's torch.chunk of the two images' features: starts and ends
// of (2*batch + 1) / 2 * k). Its output dims are the ones shape inference
// gave (inferred_dims, as a Reshape of a computed shape takes them); the
// starts are constants or read from their host value when the code runs,
// normalised as ONNX says (negative from the end, clamped to the dim), and
// the code fails the run, with a message, where the output would not fit.
// Steps are 1 and axes constant.
// A Slice whose output length along an axis no rule fixes (x[:300] of a
// NonZero's count, ops/run_length.h) works that length out when it runs, from
// constant or read starts and ends and constant steps of either sign, clamped
// as ONNX says; it is a symbol the run sets, at most the axis' length at the
// block's bounds, and the executor ends the block after the Slice.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/axis.h"
#include "ops/run_length.h"

namespace hone::aot {
namespace {

/// A Slice's lists (axes normalised, steps, constant starts and ends or the
/// values they are read from when the code runs).
struct SliceOperands {
  std::vector<int64_t> axes, steps, starts, ends;
  ValueId run_starts = kNoValue, run_ends = kNoValue;
};

/// Slice `n`'s axes: its constant input 3, or the first `count` when it has none.
Result<std::vector<int64_t>> slice_axes(const Program& p, const Node& n, int64_t count) {
  if (has_input(n, 3)) return const_ints(p, n, 3);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < count; ++i) axes.push_back(i);
  return axes;
}

Result<SliceOperands> slice_operands(const Program& p, const Node& n, size_t rank) {
  SliceOperands s;
  int64_t count = -1;
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!has_input(n, i)) return fail(ErrorCode::kInvalidArgument, "Slice without starts or ends");
    const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[i])];
    int64_t len = -1;
    if (v.constant) {
      HONE_TRY((i == 1 ? s.starts : s.ends), const_ints(p, n, i));
      len = static_cast<int64_t>((i == 1 ? s.starts : s.ends).size());
    } else {
      // A value's length from the graph (its ValueInfo may not have dims yet).
      const auto& shape = p.graph->value(n.inputs[i]).shape;
      if (!shape || shape->rank() != 1 || !(*shape)[0].is_static())
        return fail(unsupported("Slice starts or ends of unknown length"));
      if (v.dtype != DType::kI64 && v.dtype != DType::kI32)
        return fail(unsupported("Slice starts or ends of " + std::string(dtype_name(v.dtype))));
      len = (*shape)[0].value();
      (i == 1 ? s.run_starts : s.run_ends) = n.inputs[i];
    }
    if (count >= 0 && len != count)
      return fail(ErrorCode::kInvalidArgument, "Slice starts and ends differ in length");
    count = len;
  }
  HONE_TRY(std::vector<int64_t> axes, slice_axes(p, n, count));
  if (has_input(n, 4)) {
    HONE_TRY(s.steps, const_ints(p, n, 4));
  } else {
    s.steps.assign(static_cast<size_t>(count), 1);
  }
  if (static_cast<int64_t>(axes.size()) != count || static_cast<int64_t>(s.steps.size()) != count)
    return fail(ErrorCode::kInvalidArgument, "Slice starts, ends, axes and steps differ in length");
  HONE_TRY(s.axes, ops::normalize_axes(axes, static_cast<int64_t>(rank), "Slice axes"));
  for (int64_t step : s.steps)
    if (step == 0 || step == std::numeric_limits<int64_t>::min())
      return fail(ErrorCode::kInvalidArgument, "Slice step of " + std::to_string(step));
  return s;
}

}  // namespace

Result<DimExprs> run_time_slice(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  const auto r = static_cast<int64_t>(x.size());
  const ValueInfo& sv = p.values[static_cast<size_t>(n.inputs[1])];
  // A host value's length from the graph (its ValueInfo may not have dims yet).
  const auto& shape = p.graph->value(n.inputs[1]).shape;
  if (!shape || shape->rank() != 1 || !(*shape)[0].is_static())
    return fail(unsupported("Slice starts of unknown length"));
  const int64_t count = (*shape)[0].value();
  if (sv.dtype != DType::kI64 && sv.dtype != DType::kI32)
    return fail(unsupported("Slice starts of " + std::string(dtype_name(sv.dtype))));
  HONE_TRY(std::vector<int64_t> axes, slice_axes(p, n, count));
  if (has_input(n, 4)) {
    HONE_TRY(const std::vector<int64_t> steps, const_ints(p, n, 4));
    for (int64_t s : steps)
      if (s != 1)
        return fail(unsupported("Slice with bounds computed from dims and a step of " +
                                std::to_string(s) + " (aot takes step 1)"));
  }
  if (static_cast<int64_t>(axes.size()) != count)
    return fail(ErrorCode::kInvalidArgument, "Slice starts and axes differ in length");
  Program::Copy c;
  c.base = 0;
  c.strides.assign(x.size(), DimExpr(1));
  for (size_t i = x.size(); i-- > 1;) c.strides[i - 1] = c.strides[i] * x[i];
  std::vector<bool> seen(x.size(), false);
  for (int64_t a : axes) {
    HONE_TRY(const int64_t axis, ops::normalize_axis(a, r, "Slice axis"));
    if (seen[static_cast<size_t>(axis)])
      return fail(ErrorCode::kInvalidArgument, "Slice names an axis twice");
    seen[static_cast<size_t>(axis)] = true;
    c.run_time_axes.push_back(static_cast<size_t>(axis));
  }
  p.operands[id] = {xv};
  if (sv.constant) {
    HONE_TRY(c.const_starts, const_ints(p, n, 1));
  } else {
    p.operands[id].push_back(n.inputs[1]);
  }
  HONE_TRY(DimExprs out, inferred_dims(p, n));
  if (out.size() != x.size())
    return fail(ErrorCode::kInvalidArgument,
                "Slice output " + to_string(out) + " is not of its input's rank " + to_string(x));
  p.copies[id] = std::move(c);
  return out;
}

void Emitter::emit_slice_run_time(const Node& n, NodeId id, const std::string& y) {
  const Program::Copy& c = p_.copies.at(id);
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& o = dims(n.outputs[0]);
  line("int64_t from = 0;");
  if (ops.size() > 1) line("const " + ctype(ops[1]) + "* S = " + ptr(ops[1]) + ";");
  for (size_t k = 0; k < c.run_time_axes.size(); ++k) {
    const size_t a = c.run_time_axes[k];
    open("");
    line("const int64_t len = " + dim(x[a]) + ", want = " + dim(o[a]) + ";");
    line("int64_t s = " +
         (c.const_starts.empty() ? "(int64_t)S[" + std::to_string(k) + "]"
                                 : c_int(c.const_starts[k])) +
         ";");
    line("if (s < 0) s += len;");
    line("s = s < 0 ? 0 : (s > len ? len : s);");
    open("if (s + want > len)");
    line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"Slice: axis " + std::to_string(a) +
         " from %lld holds %lld, not the %lld shape inference gave\", (long long)s, (long "
         "long)(len - s), (long long)want);");
    line("return;");
    close();
    line("from += s * " + dim(c.strides[a]) + ";");
    close();
  }
  emit_strided(id, "from", c.strides, o, y);
}

/// A Slice whose output length along an axis is its own run-time symbol
/// (ops::slice_length_at_run_time): that length, and every sliced axis'
/// start and step, worked out when the code runs as ONNX says (negative from
/// the end, clamped, any step sign); a symbol the run sets, at most the
/// axis' length at the block's bounds. The other sliced axes must come out
/// as the static dims shape inference gave, which the code checks.
Result<DimExprs> run_length_slice(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  const Graph& g = *p.graph;
  const auto& shape = g.value(n.outputs[0]).shape;
  if (!shape || shape->rank() != x.size()) return fail(unsupported("Slice output of unknown rank"));
  if (const std::string why =
          ops::run_length_block_end_why_not(g, n, "a Slice of a run-time length");
      !why.empty())
    return fail(unsupported(why));
  HONE_TRY(const SliceOperands s, slice_operands(p, n, x.size()));
  p.operands[id] = {xv};
  for (ValueId v : {s.run_starts, s.run_ends})
    if (v != kNoValue) p.operands[id].push_back(v);
  DimExprs out = x;
  for (int64_t a : s.axes) {
    const auto ax = static_cast<size_t>(a);
    const Dim& d = (*shape)[ax];
    if (d == ops::slice_length(g.value(n.outputs[0]).name, a)) {
      const std::string sym = d.symbol_name();
      if (std::find(p.symbols.begin(), p.symbols.end(), sym) != p.symbols.end())
        return fail(ErrorCode::kInternal, "Slice's length '" + sym + "' is already a symbol");
      const int64_t most = p.at_bounds(x[ax]);  // before the symbol is one of p's
      p.symbols.push_back(sym);
      p.symbol_max.push_back(most);
      p.symbol_unnamed.push_back(false);
      p.symbol_set_by_run.push_back(true);
      out[ax] = DimExpr::symbol(sym);
    } else if (d.is_static()) {
      out[ax] = d.value();
    } else {
      return fail(unsupported("Slice of a run-time length whose axis " + std::to_string(a) +
                              " is " + d.to_string() + " (aot takes a number there)"));
    }
  }
  return out;
}

void Emitter::emit_slice_run_length(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const ValueId xv = ops[0];
  const DimExprs& x = dims(xv);
  const DimExprs& o = dims(n.outputs[0]);
  const SliceOperands s = *slice_operands(p_, n, x.size());
  const size_t r = x.size();
  const std::string t = ctype(xv);
  // Per axis: start, step and length in the output, and the input's stride.
  std::string st, sp, ln, xs;
  for (size_t a = 0; a < r; ++a) {
    const std::string sep = a > 0 ? ", " : "";
    st += sep + "0";
    sp += sep + "1";
    ln += sep + dim(x[a]);
    xs += sep + dim(product(x, a + 1, r));
  }
  line("const " + t + "* X = " + ptr(xv) + ";");
  line(t + "* Y = " + y + ";");
  const std::string R = std::to_string(r);
  line("int64_t st[" + R + "] = {" + st + "}, sp[" + R + "] = {" + sp + "}, ln[" + R + "] = {" +
       ln + "};");
  line("const int64_t xs[" + R + "] = {" + xs + "};");
  for (size_t k = 0; k < s.axes.size(); ++k) {
    const auto a = static_cast<size_t>(s.axes[k]);
    const int64_t step = s.steps[k];
    auto bound = [&](const std::vector<int64_t>& c, ValueId v) {
      return c.empty() ? "(int64_t)" + ptr(v) + "[" + std::to_string(k) + "]" : c_int(c[k]);
    };
    open("");
    line("const int64_t len = " + dim(x[a]) + ";");
    line("int64_t s = " + bound(s.starts, s.run_starts) + ", e = " + bound(s.ends, s.run_ends) +
         ", n = 0;");
    line("if (s < 0) s += len;");
    line("if (e < 0) e += len;");
    if (step > 0) {
      line("s = s < 0 ? 0 : (s > len ? len : s);");
      line("e = e < 0 ? 0 : (e > len ? len : e);");
      line("if (len > 0 && e > s) n = (e - s - 1) / " + c_int(step) + " + 1;");
    } else {
      line("s = s < 0 ? 0 : (s > len - 1 ? len - 1 : s);");
      line("e = e < -1 ? -1 : (e > len - 1 ? len - 1 : e);");
      line("if (len > 0 && s > e) n = (s - e - 1) / " + c_int(-step) + " + 1;");
    }
    line("st[" + std::to_string(a) + "] = s;");
    line("sp[" + std::to_string(a) + "] = " + c_int(step) + ";");
    line("ln[" + std::to_string(a) + "] = n;");
    const std::string sym =
        ops::slice_length(p_.graph->value(n.outputs[0]).name, static_cast<int64_t>(a))
            .symbol_name();
    const auto at = std::find(p_.symbols.begin(), p_.symbols.end(), sym) - p_.symbols.begin();
    if (!o[a].is_const() && o[a].to_string() == sym) {
      line("c->d_set[" + std::to_string(at) + "] = n;");
    } else {
      open("if (n != " + dim(o[a]) + ")");
      line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"Slice: axis " + std::to_string(a) +
           " holds %lld, not the %lld shape inference gave\", (long long)n, " + "(long long)" +
           dim(o[a]) + ");");
      line("return;");
      close();
    }
    close();
  }
  line("int64_t total = 1;");
  line("for (int a = 0; a < " + R + "; ++a) total *= ln[a];");
  open("for (int64_t i = 0; i < total; ++i)");
  line("int64_t rest = i, from = 0;");
  open("for (int a = " + std::to_string(r - 1) + "; a >= 0; --a)");
  line("from += (st[a] + rest % ln[a] * sp[a]) * xs[a];");
  line("rest /= ln[a];");
  close();
  line("Y[i] = X[from];");
  close();
}

}  // namespace hone::aot
