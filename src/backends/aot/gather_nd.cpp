// GatherND (the dynamo exporter's kNN neighbour rows in DGCNN, DLRM's
// upper-triangle pairs, a text encoder's pooled token): index tuples aot
// reads when the code runs, or constant ones. The output is [batch, tuples]
// slices of `slice` elements (ops/gather.h's GatherNdLayout, here with dims
// as expressions): tuple t of batch row b is k indices, index j counting
// along data axis batch_dims + j. One pass checks every index first (ONNX:
// -dim <= v < dim, a negative v counting from the end), so one out of range
// fails the run with its value, its place in the indices and the axis; then
// one slice copy per tuple. ScatterND is its inverse at batch_dims 0: the
// updates have that GatherND's output dims; the output is a copy of the data
// with each tuple's slice replaced or reduced (none, add, mul, max, min) in
// the indices' row-major order, as the reference does (eval/): integers
// wrap, bools or (add, max) and and (mul, min); every index checked first.
#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/shape_fn_tensor.h"

namespace hone::aot {

namespace {

int64_t batch_dims_of(const Node& n) {
  return n.attr_int("batch_dims", 0);
}

/// The C statements that check index e of a tuple against its axis length
/// (lens[e % k]) and fail the run naming it.
void tuple_index_check(Emitter& e, const std::string& op, size_t batch, const std::string& ks) {
  e.line("const int64_t v = (int64_t)I[e], len = lens[e % " + ks + "];");
  e.open("if (v < -len || v >= len)");
  e.line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"" + op +
         ": index %lld (element %lld of the indices) is outside [-%lld, %lld), the data's axis "
         "%lld\", (long long)v, (long long)e, (long long)len, (long long)len, (long long)(" +
         std::to_string(batch) + " + e % " + ks + "));");
  e.line("return;");
  e.close();
}

/// ScatterND's update of Y[o] by U[u] for reduction `red` on values of `dt`.
std::string scatter_apply(const std::string& red, DType dt, const std::string& t) {
  if (red == "none") return "Y[o] = U[u];";
  if (dt == DType::kBool)
    return red == "add" || red == "max" ? "Y[o] = (uint8_t)(Y[o] || U[u]);"
                                        : "Y[o] = (uint8_t)(Y[o] && U[u]);";
  if (red == "max") return "if (Y[o] < U[u]) Y[o] = U[u];";
  if (red == "min") return "if (U[u] < Y[o]) Y[o] = U[u];";
  const char* sign = red == "add" ? " + " : " * ";
  if (dt == DType::kF32) return std::string("Y[o] = Y[o]") + sign + "U[u];";
  const std::string w = dt == DType::kI32 ? "uint32_t" : "uint64_t";  // wrapping
  return "Y[o] = (" + t + ")((" + (red == "mul" ? std::string("uint64_t)(") : "") + w + ")Y[o]" +
         sign + "(" + w + ")U[u]);";
}

}  // namespace

Result<DimExprs> gather_nd_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId iv, index_input(p, n, 1));
  p.operands[id] = {xv, iv};
  return refused(ops::gather_nd_shape(batch_dims_of(n), dims_of(p, xv), dims_of(p, iv)));
}

Result<DimExprs> scatter_nd_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId iv, index_input(p, n, 1));
  HONE_TRY(ValueId uv, data_input(p, n, 2));
  HONE_TRY(const DimExprs want, refused(ops::gather_nd_shape(0, dims_of(p, xv), dims_of(p, iv))));
  if (!(dims_of(p, uv) == want))
    return fail(unsupported("ScatterND updates " + to_string(dims_of(p, uv)) +
                            " are not known to have the dims " + to_string(want) +
                            " its data and indices need"));
  if (p.values[static_cast<size_t>(uv)].dtype != p.values[static_cast<size_t>(xv)].dtype)
    return fail(ErrorCode::kInvalidArgument, "ScatterND updates must have the data's type");
  HONE_CHECK_OK(ops::scatter_reduction(n));
  p.operands[id] = {xv, iv, uv};
  return dims_of(p, xv);
}

void Emitter::emit_scatter_nd(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& idx = dims(ops[1]);
  const auto k = static_cast<size_t>(idx.back().value());  // a number (gather_nd_shape)
  const DType dt = p_.values[static_cast<size_t>(ops[0])].dtype;
  const std::string t = c_type(dt);
  const std::string it = c_type(p_.values[static_cast<size_t>(ops[1])].dtype);
  std::string lens, strides;
  for (size_t j = 0; j < k; ++j) {
    lens += (j ? ", " : "") + dim(x[j]);
    strides += (j ? ", " : "") + dim(product(x, j + 1, x.size()));
  }
  const std::string ks = std::to_string(k);
  line("const " + t + "* X = " + ptr(ops[0]) + ";");
  line("const " + it + "* I = " + ptr(ops[1]) + ";");
  line("const " + t + "* U = " + ptr(ops[2]) + ";");
  line(t + "* Y = " + y + ";");
  line("const int64_t rows = " + dim(product(idx, 0, idx.size() - 1)) +
       ", slice = " + dim(product(x, k, x.size())) + ";");
  line("const int64_t lens[" + ks + "] = {" + lens + "}, strides[" + ks + "] = {" + strides + "};");
  open("for (int64_t e = 0; e < rows * " + ks + "; ++e)");
  tuple_index_check(*this, "ScatterND", 0, ks);
  close();
  line("if (Y != X) memcpy(Y, X, sizeof(" + t + ") * " + numel(ops[0]) + ");");
  // In the indices' order, one tuple at a time: duplicate targets meet in that order.
  open("for (int64_t r = 0; r < rows; ++r)");
  line("int64_t off = 0;");
  open("for (int64_t j = 0; j < " + ks + "; ++j)");
  line("const int64_t v = (int64_t)I[r * " + ks + " + j];");
  line("off += (v < 0 ? v + lens[j] : v) * strides[j];");
  close();
  open("for (int64_t s = 0; s < slice; ++s)");
  line("const int64_t o = off + s, u = r * slice + s;");
  line(scatter_apply(n.attr_string("reduction", "none"), dt, t));
  close();
  close();
}

void Emitter::emit_gather_nd(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const DimExprs& idx = dims(ops[1]);
  const auto b = static_cast<size_t>(batch_dims_of(n));
  const auto k = static_cast<size_t>(idx.back().value());  // a number (gather_nd_shape)
  const std::string t = c_type(p_.values[static_cast<size_t>(ops[0])].dtype);
  const std::string it = c_type(p_.values[static_cast<size_t>(ops[1])].dtype);
  std::string lens, strides;
  for (size_t j = 0; j < k; ++j) {
    lens += (j ? ", " : "") + dim(x[b + j]);
    strides += (j ? ", " : "") + dim(product(x, b + j + 1, x.size()));
  }
  const std::string ks = std::to_string(k);
  line("const " + t + "* X = " + ptr(ops[0]) + ";");
  line("const " + it + "* I = " + ptr(ops[1]) + ";");
  line(t + "* Y = " + y + ";");
  // Rows: batch * tuples, each a tuple of k indices and a slice of the output.
  line("const int64_t tuples = " + dim(product(idx, b, idx.size() - 1)) + ", rows = " +
       dim(product(idx, 0, idx.size() - 1)) + ", slice = " + dim(product(x, b + k, x.size())) +
       ", block = " + dim(product(x, b, x.size())) + ";");
  line("const int64_t lens[" + ks + "] = {" + lens + "}, strides[" + ks + "] = {" + strides + "};");
  open("for (int64_t e = 0; e < rows * " + ks + "; ++e)");
  tuple_index_check(*this, "GatherND", b, ks);
  close();
  begin_parallel("parallel for", worth_threads("rows * slice"));
  open("for (int64_t r = 0; r < rows; ++r)");
  line("int64_t off = (r / tuples) * block;");
  open("for (int64_t j = 0; j < " + ks + "; ++j)");
  line("const int64_t v = (int64_t)I[r * " + ks + " + j];");
  line("off += (v < 0 ? v + lens[j] : v) * strides[j];");
  close();
  line("memcpy(Y + r * slice, X + off, sizeof(" + t + ") * slice);");
  close();
  end_parallel();
}

}  // namespace hone::aot
