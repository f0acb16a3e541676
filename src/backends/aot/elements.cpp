// The index and running-sum ops of text and graph models, as loops over
// values of any of aot's types: CumSum (positions from an attention mask),
// GatherElements (DeBERTa's relative scores), ScatterElements (a GCN's
// scatter_add_, a mixture of experts' index_add_) and OneHot (its routing
// mask). Each computes as the reference does (eval/): CumSum sums floats in
// double and integers wrapping; a scatter applies its updates in the
// indices' row-major order (the last of duplicate targets wins, or each is
// reduced in turn), every index checked before any is used; OneHot leaves a
// row at off_value where its index is outside [-depth, depth).
#include <limits>

#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/typed_values.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::aot {
namespace {

/// `axis` of a node on rank `r`, which support() and the dims rules checked.
size_t element_axis(int64_t axis, size_t r) {
  return static_cast<size_t>(ops::try_normalize_axis(axis, static_cast<int64_t>(r)).value_or(0));
}

Result<size_t> checked_element_axis(const Node& n, int64_t axis, size_t r) {
  const auto a = ops::try_normalize_axis(axis, static_cast<int64_t>(r));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, n.op_type + "'s axis " + std::to_string(axis) +
                                                 " is out of range for rank " + std::to_string(r));
  return static_cast<size_t>(*a);
}

/// CumSum's axis: its constant input 1, one integer.
Result<int64_t> cumsum_axis(const Program& p, const Node& n) {
  HONE_TRY(const std::vector<int64_t> a, const_ints(p, n, 1));
  if (a.size() != 1) return fail(ErrorCode::kInvalidArgument, "CumSum's axis must be one integer");
  return a[0];
}

/// The C statements that fail the run, naming the op, where index `v`
/// (element `j`) is outside [-dim, dim).
void element_index_check(Emitter& e, const std::string& op, const std::string& v) {
  e.open("if (" + v + " < -dim || " + v + " >= dim)");
  e.line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"" + op +
         ": index %lld (element %lld of the indices) is outside [-%lld, %lld)\", (long long)" + v +
         ", (long long)j, (long long)dim, (long long)dim);");
  e.line("return;");
  e.close();
}

}  // namespace

Result<DimExprs> cumsum_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs& x = dims_of(p, xv);
  if (x.empty()) return fail(ErrorCode::kInvalidArgument, "CumSum of a scalar");
  HONE_TRY(const int64_t axis, cumsum_axis(p, n));
  HONE_CHECK_OK(checked_element_axis(n, axis, x.size()));
  p.operands[id] = {xv};
  return x;
}

Result<DimExprs> elements_dims(Program& p, NodeId id, const Node& n) {
  const bool scatter = n.op_type == "ScatterElements";
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId iv, index_input(p, n, 1));
  const DimExprs& x = dims_of(p, xv);
  const DimExprs& idx = dims_of(p, iv);
  if (x.empty() || idx.size() != x.size())
    return fail(ErrorCode::kInvalidArgument, n.op_type + " needs data of rank >= 1 and indices " +
                                                 "of its rank, got " + to_string(x) + " and " +
                                                 to_string(idx));
  HONE_TRY(const size_t a, checked_element_axis(n, ops::axis_attr(n), x.size()));
  for (size_t k = 0; k < x.size(); ++k)
    if (k != a && idx[k].is_const() && x[k].is_const() && idx[k].value() > x[k].value())
      return fail(ErrorCode::kInvalidArgument, n.op_type + " indices " + to_string(idx) +
                                                   " are larger than data " + to_string(x) +
                                                   " on axis " + std::to_string(k));
  p.operands[id] = {xv, iv};
  if (!scatter) return idx;
  HONE_TRY(ValueId uv, data_input(p, n, 2));
  if (!(dims_of(p, uv) == idx) ||
      p.values[static_cast<size_t>(uv)].dtype != p.values[static_cast<size_t>(xv)].dtype)
    return fail(ErrorCode::kInvalidArgument,
                "ScatterElements updates must have the indices' dims and the data's type");
  HONE_CHECK_OK(ops::scatter_reduction(n));
  p.operands[id].push_back(uv);
  return x;
}

Result<DimExprs> one_hot_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId iv, index_input(p, n, 0));
  const ValueInfo& depth = p.values[static_cast<size_t>(n.inputs[1])];
  const ValueInfo& values = p.values[static_cast<size_t>(n.inputs[2])];
  if (!depth.constant || !values.constant)
    return fail(unsupported("OneHot's depth and values must be constants"));
  if (depth.constant->numel() != 1 || values.constant->numel() != 2)
    return fail(ErrorCode::kInvalidArgument, "OneHot needs one depth and [off_value, on_value]");
  if (!is_integer(depth.constant->dtype()))
    return fail(unsupported("OneHot of a " + std::string(dtype_name(depth.constant->dtype())) +
                            " depth (aot takes an integer one)"));
  const int64_t d = tensor_element_as_int64(*depth.constant, 0);
  if (d < 1) return fail(ErrorCode::kInvalidArgument, "OneHot's depth is below 1");
  // (A bool constant reaches the code as floats: bind_constants.)
  const DType out_t = p.graph->value(n.outputs[0]).dtype;
  if (out_t != DType::kUndefined && out_t != values.dtype)
    return fail(unsupported("OneHot values of " + std::string(dtype_name(out_t))));
  DimExprs out = dims_of(p, iv);
  HONE_TRY(const size_t a, checked_element_axis(n, ops::axis_attr(n), out.size() + 1));
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(a), DimExpr(d));
  p.operands[id] = {iv, n.inputs[2]};
  return out;
}

void Emitter::emit_cumsum(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const size_t a = element_axis(cumsum_axis(p_, n).value_or(0), x.size());
  const bool exclusive = n.attr_int("exclusive", 0) != 0, reverse = n.attr_int("reverse", 0) != 0;
  const std::string t = ctype(xv);
  // Floats in double, integers wrapping as unsigned 64-bit (the reference's).
  const std::string acc = p_.values[static_cast<size_t>(xv)].is_f32() ? "double" : "uint64_t";
  line("const " + t + "* X = " + ptr(xv) + ";");
  line(t + "* Y = " + y + ";");
  line("const int64_t len = " + dim(x[a]) + ", inner = " + dim(product(x, a + 1, x.size())) +
       ", rows = " + dim(product(x, 0, a)) + " * inner;");
  begin_parallel("parallel for", worth_threads("rows * len"));
  open("for (int64_t r = 0; r < rows; ++r)");
  line("const int64_t base = (r / inner) * len * inner + r % inner;");
  line(acc + " s = 0;");
  open("for (int64_t j = 0; j < len; ++j)");
  line("const int64_t at = base + " + std::string(reverse ? "(len - 1 - j)" : "j") + " * inner;");
  line("const " + acc + " v = (" + acc + ")" + (acc == "double" ? "X[at]" : "(int64_t)X[at]") +
       ";");
  if (!exclusive) line("s += v;");
  line("Y[at] = (" + t + ")s;");
  if (exclusive) line("s += v;");
  close();
  close();
  end_parallel();
}

void Emitter::emit_elements(const Node& n, NodeId id, const std::string& y) {
  const bool scatter = n.op_type == "ScatterElements";
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& idx = dims(ops[1]);
  const size_t r = x.size(), a = element_axis(ops::axis_attr(n), r);
  const std::string t = ctype(ops[0]), it = ctype(ops[1]);
  line("const " + t + "* X = " + ptr(ops[0]) + ";");
  line("const " + it + "* I = " + ptr(ops[1]) + ";");
  if (scatter) line("const " + t + "* U = " + ptr(ops[2]) + ";");
  line(t + "* Y = " + y + ";");
  std::string ids, xds, xss;
  DimExprs stride(r, DimExpr(1));
  for (size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * x[k];
  for (size_t k = 0; k < r; ++k) {
    ids += (k ? ", " : "") + dim(idx[k]);
    xds += (k ? ", " : "") + dim(x[k]);
    xss += (k ? ", " : "") + dim(stride[k]);
  }
  line("const int64_t id[" + std::to_string(r) + "] = {" + ids + "};");
  line("const int64_t xd[" + std::to_string(r) + "] = {" + xds + "};");
  line("const int64_t xs[" + std::to_string(r) + "] = {" + xss + "};");
  line("const int64_t dim = xd[" + std::to_string(a) + "], count = " + numel(ops[1]) + ";");
  // Indices larger than the data off the axis (dims known only now).
  open("for (int k = 0; k < " + std::to_string(r) + "; ++k)");
  open("if (k != " + std::to_string(a) + " && id[k] > xd[k])");
  line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"" + n.op_type +
       ": the indices' dim %lld on axis %d is larger than the data's %lld\", (long long)id[k], "
       "k, (long long)xd[k]);");
  line("return;");
  close();
  close();
  open("for (int64_t j = 0; j < count; ++j)");
  line("const int64_t v = (int64_t)I[j];");
  element_index_check(*this, n.op_type, "v");
  close();
  // The data offset of element j of the indices: its position off the axis, its index on it.
  const std::string offset =
      "int64_t rem = j, off = 0;\n"
      "for (int k = " +
      std::to_string(r) +
      "; k-- > 0;) {\n"
      "  const int64_t q = rem % id[k];\n"
      "  rem /= id[k];\n"
      "  off += (k == " +
      std::to_string(a) +
      " ? ((int64_t)I[j] < 0 ? (int64_t)I[j] + dim : (int64_t)I[j]) : q) * xs[k];\n"
      "}";
  auto offset_lines = [&] {
    size_t at = 0;
    while (at < offset.size()) {
      const size_t nl = offset.find('\n', at);
      line(offset.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  };
  if (!scatter) {
    begin_parallel("parallel for", worth_threads("count"));
    open("for (int64_t j = 0; j < count; ++j)");
    offset_lines();
    line("Y[j] = X[off];");
    close();
    end_parallel();
    return;
  }
  line("if (Y != X) memcpy(Y, X, sizeof(" + t + ") * " + numel(ops[0]) + ");");
  const std::string red = n.attr_string("reduction", "none");
  const DType dt = p_.values[static_cast<size_t>(ops[0])].dtype;
  std::string apply = "Y[off] = U[j];";
  if (dt == DType::kBool) {  // add and max are or, mul and min and (the reference's)
    if (red == "add" || red == "max") apply = "Y[off] = (uint8_t)(Y[off] || U[j]);";
    if (red == "mul" || red == "min") apply = "Y[off] = (uint8_t)(Y[off] && U[j]);";
  } else {
    const bool is_int = dt != DType::kF32;
    const std::string u = dt == DType::kI32 ? "uint32_t" : "uint64_t";
    if (red == "add")
      apply = is_int ? "Y[off] = (" + t + ")((" + u + ")Y[off] + (" + u + ")U[j]);"
                     : "Y[off] = Y[off] + U[j];";
    if (red == "mul")
      apply = is_int ? "Y[off] = (" + t + ")((uint64_t)(" + u + ")Y[off] * (" + u + ")U[j]);"
                     : "Y[off] = Y[off] * U[j];";
    if (red == "max") apply = "if (Y[off] < U[j]) Y[off] = U[j];";
    if (red == "min") apply = "if (U[j] < Y[off]) Y[off] = U[j];";
  }
  // In the indices' order, one at a time: duplicate targets meet in that order.
  open("for (int64_t j = 0; j < count; ++j)");
  offset_lines();
  line(apply);
  close();
}

void Emitter::emit_one_hot(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& idx = dims(ops[0]);
  const DimExprs& o = dims(n.outputs[0]);
  const size_t a = element_axis(ops::axis_attr(n), o.size());
  const std::string t = ctype(n.outputs[0]);
  line("const " + ctype(ops[0]) + "* I = " + ptr(ops[0]) + ";");
  line("const " + t + "* V = " + ptr(ops[1]) + ";  /* off_value, on_value */");
  line(t + "* Y = " + y + ";");
  line("const int64_t depth = " + dim(o[a]) + ", inner = " + dim(product(idx, a, idx.size())) +
       ", count = " + numel(ops[0]) + ";");
  line("for (int64_t i = 0; i < count * depth; ++i) Y[i] = V[0];");
  open("for (int64_t i = 0; i < count; ++i)");
  line("int64_t v = (int64_t)I[i];");
  line("if (v < 0) v += depth;");
  line("if (v < 0 || v >= depth) continue;  /* out of range: the row stays off_value */");
  line("Y[((i / inner) * depth + v) * inner + i % inner] = V[1];");
  close();
}

}  // namespace hone::aot
