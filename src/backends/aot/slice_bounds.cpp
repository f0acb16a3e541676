// Slice whose starts or ends are host values, computed from dims per
// signature (RAFT's torch.chunk of the two images' features: starts and ends
// of (2*batch + 1) / 2 * k). Its output dims are the ones shape inference
// gave (inferred_dims, as a Reshape of a computed shape takes them); the
// starts are constants or read from their host value when the code runs,
// normalised as ONNX says (negative from the end, clamped to the dim), and
// the code fails the run, with a message, where the output would not fit.
// Steps are 1 and axes constant.
#include <string>
#include <vector>

#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/axis.h"

namespace hone::aot {

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
  std::vector<int64_t> axes;
  if (has_input(n, 3)) {
    HONE_TRY(axes, const_ints(p, n, 3));
  } else {
    for (int64_t i = 0; i < count; ++i) axes.push_back(i);
  }
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

}  // namespace hone::aot
