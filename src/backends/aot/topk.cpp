// TopK (opset 10 on): per row along the axis, the positions of the K first
// values in ops/topk.h's order (topk_before_c: NaN above every number, equal
// values to the lower position), kept in a heap of K as the row is read and
// sorted at its end, then the values and their i64 indices written. K is a
// constant, or a value read when the code runs (ops/run_length.h: min(k,
// count) in torchvision's detectors): the output length along the axis is then a symbol the run
// sets (Program::symbol_set_by_run, as NonZero's count), at most the axis' length at the block's
// bounds; the executor ends the block after it, and K outside [0, the axis' length] fails the run
// as the reference does.
#include "ops/topk.h"

#include <algorithm>

#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/run_length.h"

namespace hone::aot {
namespace {

/// A row's positions live on the stack of the thread that sorts it.
constexpr int64_t kMaxK = 4096;

struct TopKShape {
  size_t axis = 0;
  int64_t k = 0;             // a constant K
  ValueId run_k = kNoValue;  // else the value K is read from when the code runs,
  std::string length;        // the symbol of the length it sets,
  int64_t most = 0;          // at most the axis' length at the block's bounds
};

Result<size_t> topk_axis(const Node& n, const DimExprs& x) {
  const auto a = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, "TopK's axis is out of range for " + to_string(x));
  return static_cast<size_t>(*a);
}

Result<TopKShape> const_topk_shape(const Program& p, const Node& n, const DimExprs& x) {
  HONE_TRY(const size_t axis, topk_axis(n, x));
  HONE_TRY(const std::vector<int64_t> k, const_ints(p, n, 1));
  if (k.size() != 1 || k[0] < 0)
    return fail(ErrorCode::kInvalidArgument, "TopK's K must be one integer, at least 0");
  if (k[0] > kMaxK)
    return fail(unsupported("TopK's K of " + std::to_string(k[0]) + " (aot sorts up to " +
                            std::to_string(kMaxK) + ")"));
  const DimExpr& len = x[axis];
  if (len.is_const() && len.value() < k[0])
    return fail(ErrorCode::kInvalidArgument, "TopK's K of " + std::to_string(k[0]) +
                                                 " is above the axis' " +
                                                 std::to_string(len.value()));
  TopKShape s;
  s.axis = axis;
  s.k = k[0];
  return s;
}

/// A TopK of a run-time K (ops::topk_k_at_run_time): the value K is read
/// from and its length's symbol; kUnsupported where the sort would not fit
/// its stack or an output is read in its block.
Result<TopKShape> topk_shape(const Program& p, const Node& n, const DimExprs& x) {
  if (!ops::topk_k_at_run_time(*p.graph, n)) return const_topk_shape(p, n, x);
  HONE_TRY(const size_t axis, topk_axis(n, x));
  const Graph& g = *p.graph;
  TopKShape s;
  s.axis = axis;
  s.run_k = n.inputs[1];
  const ValueInfo& k = p.values[static_cast<size_t>(s.run_k)];
  if (k.dtype != DType::kI64 && k.dtype != DType::kI32)
    return fail(unsupported("TopK's K of " + std::string(dtype_name(k.dtype))));
  if (const DimExpr one = product(k.dims); !one.is_const() || one.value() != 1)
    return fail(ErrorCode::kInvalidArgument,
                "TopK's K must hold one integer, not " + to_string(k.dims));
  if (const std::string why = ops::run_length_block_end_why_not(g, n, "a TopK of a run-time K");
      !why.empty())
    return fail(unsupported(why));
  ValueId named = kNoValue;
  for (ValueId y : n.outputs)
    if (y >= 0 && named == kNoValue) named = y;
  if (named == kNoValue) return fail(ErrorCode::kInvalidArgument, "TopK has no output");
  s.length = ops::topk_length(g.value(named).name).symbol_name();
  s.most = p.at_bounds(x[axis]);
  if (s.most > kMaxK)
    return fail(unsupported("TopK of a run-time K over an axis of up to " + std::to_string(s.most) +
                            " (aot sorts up to " + std::to_string(kMaxK) + ")"));
  return s;
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
  p.operands[id] = {xv};
  if (s.run_k != kNoValue) {
    if (std::find(p.symbols.begin(), p.symbols.end(), s.length) != p.symbols.end())
      return fail(ErrorCode::kInternal, "TopK's length '" + s.length + "' is already a symbol");
    p.symbols.push_back(s.length);
    p.symbol_max.push_back(s.most);
    p.symbol_unnamed.push_back(false);
    p.symbol_set_by_run.push_back(true);
    p.operands[id].push_back(s.run_k);
    out[s.axis] = DimExpr::symbol(s.length);
  } else {
    out[s.axis] = s.k;
  }
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
  const bool run_k = s.run_k != kNoValue;
  if (!run_k && s.k == 0) return;  // empty outputs
  const bool largest = ops::topk_attrs(n).largest;
  const ValueId vals = n.outputs.empty() ? kNoValue : n.outputs[0];
  const ValueId idx = n.outputs.size() > 1 ? n.outputs[1] : kNoValue;
  auto out = [&](ValueId v) {
    return v >= 0 && p_.values[static_cast<size_t>(v)].place != Place::kNone ? ptr(v)
                                                                             : std::string("NULL");
  };
  // K in the code: the constant, or `k` read from its value; a row's positions
  // on the stack, K of them or the most a run-time K may be.
  const std::string k = run_k ? "k" : std::to_string(s.k);
  const std::string room = std::to_string(run_k ? std::max<int64_t>(s.most, 1) : s.k);
  line("const float* X = " + ptr(xv) + ";");
  line("float* V = " + out(vals) + ";");
  line("int64_t* I = " + out(idx) + ";");
  line("const int64_t len = " + dim(x[s.axis]) +
       ", inner = " + dim(product(x, s.axis + 1, x.size())) +
       ", rows = " + dim(product(x, 0, s.axis)) + " * inner;");
  if (run_k) {
    const auto at = std::find(p_.symbols.begin(), p_.symbols.end(), s.length) - p_.symbols.begin();
    line("const int64_t k = (int64_t)" + ptr(s.run_k) + "[0];");
    open("if (k < 0 || k > len)");
    line(
        "*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"TopK: K of %lld is out of range "
        "[0, %lld]\", (long long)k, (long long)len);");
    line("return;");
    close();
    line("c->d_set[" + std::to_string(at) + "] = k;");
    line("if (k == 0) return;");
  } else if (!x[s.axis].is_const()) {
    open("if (len < " + k + ")");
    line("*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"TopK: K of " + k +
         " is above the axis' %lld\", (long long)len);");
    line("return;");
    close();
  }
  begin_parallel("parallel for", worth_threads("rows * len"));
  open("for (int64_t r = 0; r < rows; ++r)");
  line("const float* xr = X + (r / inner) * len * inner + r % inner;");
  line("int64_t pos[" + room + "];");
  line("int64_t have = 0;");
  // pos[0, have) is a heap whose root comes last in TopK's order: a value
  // that does not come before the root is skipped in one comparison, one
  // that does replaces it and sinks (log K); then the heap is sorted in
  // place. Insertion into a sorted row shifted up to K positions a value
  // (ssdlite's TopKs of 300 of 3234: about 0.2 ms each, onednn's 0.07).
  auto before = [&](const std::string& i, const std::string& j) {
    return ops::topk_before_c("xr[" + i + " * inner]", "xr[" + j + " * inner]", i, j, largest);
  };
  // Sinks position `v` from q in the heap of `size`: the later child moves up
  // while `v` comes before it.
  auto sink = [&](const std::string& v, const std::string& size) {
    open("for (;;)");
    line("int64_t ch = 2 * q + 1;");
    line("if (ch >= " + size + ") break;");
    line("if (ch + 1 < " + size + " && " + before("pos[ch]", "pos[ch + 1]") + ") ++ch;");
    line("if (!" + before(v, "pos[ch]") + ") break;");
    line("pos[q] = pos[ch];");
    line("q = ch;");
    close();
    line("pos[q] = " + v + ";");
  };
  open("for (int64_t t = 0; t < len; ++t)");
  open("if (have < " + k + ")");
  line("int64_t q = have++;");
  open("while (q > 0 && " + before("pos[(q - 1) / 2]", "t") + ")");
  line("pos[q] = pos[(q - 1) / 2];");
  line("q = (q - 1) / 2;");
  close();
  line("pos[q] = t;");
  line("continue;");
  close();
  line("if (!" + before("t", "pos[0]") + ") continue;");
  line("int64_t q = 0;");
  sink("t", k);
  close();
  open("for (int64_t m = have - 1; m > 0; --m)");
  line("const int64_t last = pos[m];");
  line("pos[m] = pos[0];");
  line("int64_t q = 0;");
  sink("last", "m");
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
