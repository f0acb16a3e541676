// TopK (opset 10 on, K a constant): per row along the axis, the positions of
// the K first values in ops/topk.h's order (topk_before_c: NaN above every
// number, equal values to the lower position), kept sorted by insertion as
// the row is read, then the values and their i64 indices written.
#include "ops/topk.h"
#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::aot {
namespace {

/// A row's positions live on the stack of the thread that sorts it.
constexpr int64_t kMaxK = 4096;

struct TopKShape {
  size_t axis = 0;
  int64_t k = 0;
};

Result<TopKShape> topk_shape(const Program& p, const Node& n, const DimExprs& x) {
  HONE_TRY(const std::vector<int64_t> k, const_ints(p, n, 1));
  if (k.size() != 1 || k[0] < 0)
    return fail(ErrorCode::kInvalidArgument, "TopK's K must be one integer, at least 0");
  if (k[0] > kMaxK)
    return fail(unsupported("TopK's K of " + std::to_string(k[0]) + " (aot sorts up to " +
                            std::to_string(kMaxK) + ")"));
  const auto a = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, "TopK's axis is out of range for " + to_string(x));
  const DimExpr& len = x[static_cast<size_t>(*a)];
  if (len.is_const() && len.value() < k[0])
    return fail(ErrorCode::kInvalidArgument, "TopK's K of " + std::to_string(k[0]) +
                                                 " is above the axis' " +
                                                 std::to_string(len.value()));
  return TopKShape{static_cast<size_t>(*a), k[0]};
}

}  // namespace

Result<void> infer_topk(Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (p.graph->opset() < 10) return fail(unsupported("TopK before opset 10 (K as an attribute)"));
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  if (x.empty()) return fail(ErrorCode::kInvalidArgument, "TopK of a scalar");
  HONE_TRY(const TopKShape s, topk_shape(p, n, x));
  DimExprs out = x;
  out[s.axis] = s.k;
  p.operands[id] = {xv};
  for (size_t i = 0; i < n.outputs.size() && i < 2; ++i) {
    if (n.outputs[i] < 0) continue;
    ValueInfo& o = p.values[static_cast<size_t>(n.outputs[i])];
    o.dims = out;
    o.dtype = i == 0 ? DType::kF32 : DType::kI64;
  }
  return {};
}

void Emitter::emit_topk(const Node& n, NodeId id) {
  const ValueId xv = p_.operands.at(id)[0];
  const DimExprs& x = dims(xv);
  const TopKShape s = *topk_shape(p_, n, x);
  if (s.k == 0) return;  // empty outputs
  const bool largest = ops::topk_attrs(n).largest;
  const ValueId vals = n.outputs.empty() ? kNoValue : n.outputs[0];
  const ValueId idx = n.outputs.size() > 1 ? n.outputs[1] : kNoValue;
  auto out = [&](ValueId v) {
    return v >= 0 && p_.values[static_cast<size_t>(v)].place != Place::kNone ? ptr(v)
                                                                             : std::string("NULL");
  };
  const std::string k = std::to_string(s.k);
  line("const float* X = " + ptr(xv) + ";");
  line("float* V = " + out(vals) + ";");
  line("int64_t* I = " + out(idx) + ";");
  line("const int64_t len = " + dim(x[s.axis]) +
       ", inner = " + dim(product(x, s.axis + 1, x.size())) +
       ", rows = " + dim(product(x, 0, s.axis)) + " * inner;");
  if (!x[s.axis].is_const()) {
    open("if (len < " + k + ")");
    line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"TopK: K of " + k +
         " is above the axis' %lld\", (long long)len);");
    line("return;");
    close();
  }
  begin_parallel("parallel for", worth_threads("rows * len"));
  open("for (int64_t r = 0; r < rows; ++r)");
  line("const float* xr = X + (r / inner) * len * inner + r % inner;");
  line("int64_t pos[" + k + "];");
  line("int64_t have = 0;");
  open("for (int64_t t = 0; t < len; ++t)");
  line("const float u = xr[t * inner];");
  const std::string before_last =
      ops::topk_before_c("u", "xr[pos[have - 1] * inner]", "t", "pos[have - 1]", largest);
  line("if (have == " + k + " && !" + before_last + ") continue;");
  line("int64_t q = have < " + k + " ? have : " + k + " - 1;");
  const std::string before_prev =
      ops::topk_before_c("u", "xr[pos[q - 1] * inner]", "t", "pos[q - 1]", largest);
  open("while (q > 0 && " + before_prev + ")");
  line("pos[q] = pos[q - 1];");
  line("--q;");
  close();
  line("pos[q] = t;");
  line("if (have < " + k + ") ++have;");
  close();
  line("const int64_t base = (r / inner) * " + k + " * inner + r % inner;");
  open("for (int64_t j = 0; j < " + k + "; ++j)");
  line("if (V) V[base + j * inner] = xr[pos[j] * inner];");
  line("if (I) I[base + j * inner] = pos[j];");
  close();
  close();
  end_parallel();
}

}  // namespace hone::aot
