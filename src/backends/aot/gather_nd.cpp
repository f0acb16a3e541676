// GatherND (the dynamo exporter's kNN neighbour rows in DGCNN, DLRM's
// upper-triangle pairs, a text encoder's pooled token): index tuples aot
// reads when the code runs, or constant ones. The output is [batch, tuples]
// slices of `slice` elements (ops/gather.h's GatherNdLayout, here with dims
// as expressions): tuple t of batch row b is k indices, index j counting
// along data axis batch_dims + j. One pass checks every index first (ONNX:
// -dim <= v < dim, a negative v counting from the end), so one out of range
// fails the run with its value, its place in the indices and the axis; then
// one slice copy per tuple.
#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/shape_fn_tensor.h"

namespace hone::aot {

namespace {

int64_t batch_dims_of(const Node& n) {
  return n.attr_int("batch_dims", 0);
}

}  // namespace

Result<DimExprs> gather_nd_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId iv, index_input(p, n, 1));
  p.operands[id] = {xv, iv};
  return refused(ops::gather_nd_shape(batch_dims_of(n), dims_of(p, xv), dims_of(p, iv)));
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
  line("const int64_t v = (int64_t)I[e], len = lens[e % " + ks + "];");
  open("if (v < -len || v >= len)");
  line(
      "*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"GatherND: index %lld (element %lld of "
      "the indices) is outside [-%lld, %lld), the data's axis %lld\", (long long)v, (long long)e, "
      "(long long)len, (long long)len, (long long)(" +
      std::to_string(b) + " + e % " + ks + "));");
  line("return;");
  close();
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
