// Gather by indices aot reads when the code runs (token ids into an embedding
// table, TopK's neighbours into a point cloud's features) or by a constant
// list of them: one row copy per index, after one pass that checks every
// index, so an id outside the table fails the run with the index it is
// (ONNX: -dim <= k < dim, a negative k counting from the end).
#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/typed_values.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/shape_fn_tensor.h"

namespace hone::aot {

bool gathers_one_constant(const Program& p, const Node& n) {
  if (!has_input(n, 0) || !has_input(n, 1)) return false;
  const ValueInfo& i = p.values[static_cast<size_t>(n.inputs[1])];
  const DimExprs& x = dims_of(p, n.inputs[0]);
  const auto a = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()));
  return i.constant != nullptr && i.constant->rank() == 0 && a &&
         x[static_cast<size_t>(*a)].is_const();
}

Result<DimExprs> gather_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId iv, index_input(p, n, 1));
  const DimExprs& x = dims_of(p, xv);
  if (x.empty()) return fail(ErrorCode::kInvalidArgument, "Gather data must have rank >= 1");
  p.operands[id] = {xv, iv};
  return refused(ops::gather_shape(ops::axis_attr(n), x, dims_of(p, iv)));
}

void Emitter::emit_gather(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const auto r = static_cast<int64_t>(x.size());
  const auto a = static_cast<size_t>(ops::try_normalize_axis(ops::axis_attr(n), r).value_or(0));
  const std::string t = c_type(p_.values[static_cast<size_t>(ops[0])].dtype);
  const std::string it = c_type(p_.values[static_cast<size_t>(ops[1])].dtype);
  line("const " + t + "* X = " + ptr(ops[0]) + ";");
  line("const " + it + "* I = " + ptr(ops[1]) + ";");
  line(t + "* Y = " + y + ";");
  line("const int64_t outer = " + dim(product(x, 0, a)) + ", dim = " + dim(x[a]) +
       ", inner = " + dim(product(x, a + 1, x.size())) + ", count = " + numel(ops[1]) + ";");
  open("for (int64_t j = 0; j < count; ++j)");
  open("if ((int64_t)I[j] < -dim || (int64_t)I[j] >= dim)");
  line(
      "*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"Gather: index %lld (element %lld of "
      "the indices) is outside [-%lld, %lld), the data's axis " +
      std::to_string(a) + "\", (long long)I[j], (long long)j, (long long)dim, (long long)dim);");
  line("return;");
  close();
  close();
  begin_parallel("parallel for", worth_threads("outer * count * inner"));
  open("for (int64_t o = 0; o < outer * count; ++o)");
  line("const int64_t row = o / count, j = o % count;");
  line("const int64_t k = (int64_t)I[j] < 0 ? (int64_t)I[j] + dim : (int64_t)I[j];");
  line("memcpy(Y + o * inner, X + (row * dim + k) * inner, sizeof(" + t + ") * inner);");
  close();
  end_parallel();
}

}  // namespace hone::aot
