// ArgMax and ArgMin along one axis (CLIP's pooled token: the position of the
// largest id), of f32, i64 or i32 values, into i64 positions, by the rule
// of ops/arg_extreme.h (its C form, arg_extreme_wins_c).
#include "ops/arg_extreme.h"
#include "backends/aot/dim_traits.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/shape_fn_tensor.h"

namespace hone::aot {

Result<DimExprs> arg_extreme_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs& x = dims_of(p, xv);
  if (x.empty()) return fail(ErrorCode::kInvalidArgument, n.op_type + " of a scalar");
  const auto a = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()));
  if (!a) return fail(ErrorCode::kInvalidArgument, n.op_type + "'s axis is out of range");
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  p.operands[id] = {xv};
  const std::vector<int64_t> axes{*a};
  return refused(ops::reduce_shape(n.op_type, ra, x, &axes));
}

void Emitter::emit_arg_extreme(const Node& n, NodeId id, const std::string& y) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const auto a = static_cast<size_t>(
      ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size())).value_or(0));
  const ops::ReduceAttrs ra = ops::reduce_attrs(n).value_or(ops::ReduceAttrs{});
  const std::string t = ctype(xv);
  line("const " + t + "* X = " + ptr(xv) + ";");
  line("int64_t* Y = " + y + ";");
  line("const int64_t len = " + dim(x[a]) + ", inner = " + dim(product(x, a + 1, x.size())) +
       ", rows = " + dim(product(x, 0, a)) + " * inner;");
  begin_parallel("parallel for", worth_threads("rows * len"));
  open("for (int64_t r = 0; r < rows; ++r)");
  line("const " + t + "* xr = X + (r / inner) * len * inner + r % inner;");
  line("int64_t best = 0;");
  line(t + " bv = xr[0];");
  open("for (int64_t k = 1; k < len; ++k)");
  line("const " + t + " v = xr[k * inner];");
  line("if (" + ops::arg_extreme_wins_c("v", "bv", n.op_type == "ArgMax", ra.select_last_index) +
       ") best = k, bv = v;");
  close();
  line("Y[r] = best;");
  close();
  end_parallel();
}

}  // namespace hone::aot
