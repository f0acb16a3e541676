// NonMaxSuppression in aot's code: the selection is ops/nms_select.h's, the C
// the reference runs (emit_c() embeds it where a step needs it), over the f32
// boxes and scores, in double. Its output [count, 3] of i64 has a length
// known only once the code has run: as NonZero's (nonzero.cpp) a symbol of
// the block set by the run, at most the scores' element count at the block's
// bounds (which sizes the output buffer), the output packed at the buffer's
// start; the partition ends the block after it (ops::length_known_after_run)
// and the caller reads the real dims after the run (take_ran_dims). The
// selection's scratch is the step's part of the arena, so the code allocates
// nothing; max_output_boxes_per_class and the thresholds are constants (as
// torchvision exports them), written into the code.
#include "backends/aot/nms.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "backends/aot/emitter.h"
#include "backends/aot/shape_rules.h"
#include "ops/nms.h"
#include "ops/nonzero.h"
#include "ops/run_length.h"

namespace hone::aot {
namespace {

/// Inputs 2 to 4 as their constants (null when absent).
Result<ops::NmsParams> params(const Program& p, const Node& n) {
  const Tensor* in[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 2; i < 5; ++i) {
    if (!has_input(n, i)) continue;
    in[i - 2] = p.values[static_cast<size_t>(n.inputs[i])].constant;
    if (in[i - 2] == nullptr)
      return fail(unsupported("NonMaxSuppression input " + std::to_string(i) +
                              " must be a constant (aot writes it into the code)"));
  }
  return ops::nms_params(n, in[0], in[1], in[2]);
}

/// `v` as a C double literal that reads back exactly.
std::string double_literal(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string("(") + buf + ")";
}

}  // namespace

bool uses_nms(const Program& p) {
  for (const Step& st : p.steps)
    if (st.anchor >= 0 && p.node(st.anchor).op_type == "NonMaxSuppression") return true;
  return false;
}

Result<DimExprs> nms_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId bv, data_input(p, n, 0));
  HONE_TRY(ValueId sv, data_input(p, n, 1));
  HONE_CHECK_OK(params(p, n));
  const Graph& g = *p.graph;
  const ValueId y = n.outputs[0];
  if (const std::string why = ops::run_length_block_end_why_not(g, n, "NonMaxSuppression");
      !why.empty())
    return fail(unsupported(why));
  const DimExprs &boxes = dims_of(p, bv), &scores = dims_of(p, sv);
  // Symbols of one run-time count may differ: compared where numbers, and
  // checked again by the code.
  auto differ = [](const DimExpr& a, const DimExpr& b) {
    return a.is_const() && b.is_const() && a.value() != b.value();
  };
  if (boxes.size() != 3 || !boxes[2].is_const() || boxes[2].value() != 4 || scores.size() != 3 ||
      differ(scores[0], boxes[0]) || differ(scores[2], boxes[1]))
    return fail(ErrorCode::kInvalidArgument,
                "NonMaxSuppression boxes " + to_string(boxes) + " and scores " + to_string(scores) +
                    " must be [batches, boxes, 4] and [batches, classes, boxes]");
  const std::string s = ops::nonzero_length(g.value(y).name).symbol_name();
  if (std::find(p.symbols.begin(), p.symbols.end(), s) != p.symbols.end())
    return fail(ErrorCode::kInternal, "NonMaxSuppression's length '" + s + "' is already a symbol");
  const int64_t most = p.at_bounds(product(scores));  // before the symbol is listed
  p.symbols.push_back(s);
  p.symbol_max.push_back(most);
  p.symbol_unnamed.push_back(false);
  p.symbol_set_by_run.push_back(true);
  p.operands[id] = {bv, sv};
  return DimExprs{DimExpr::symbol(s), DimExpr(3)};
}

DimExpr nms_scratch_floats(const Program& p, NodeId id) {
  // hone_nms_scratch_words(nb) <= 46 nb + HONE_NMS_MAX_CELLS words, 2 floats each.
  const DimExpr nb = dims_of(p, p.node(id).inputs[0])[1];
  return DimExpr(92) * nb + DimExpr(2 * HONE_NMS_MAX_CELLS);
}

void Emitter::emit_nms(const Node& n, NodeId id, const std::string& y, const Step& st) {
  const auto& ops = p_.operands.at(id);
  const DimExprs &boxes = dims(ops[0]), &scores = dims(ops[1]);
  const ops::NmsParams a = params(p_, n).value_or(ops::NmsParams{});
  // Set by this step: the length's symbol in d, written through ctx_t's d_set.
  const std::string s = ops::nonzero_length(p_.graph->value(n.outputs[0]).name).symbol_name();
  const auto at = std::find(p_.symbols.begin(), p_.symbols.end(), s) - p_.symbols.begin();
  line("const int64_t B = " + dim(boxes[0]) + ", N = " + dim(boxes[1]) + ", C = " + dim(scores[1]) +
       ";");
  open("if (" + dim(scores[0]) + " != B || " + dim(scores[2]) + " != N)");
  line(
      "*c->status = set_error(HONE_AOT_INVALID_ARGUMENT, \"NonMaxSuppression scores [%lld, "
      "%lld, %lld] must be [batches, classes, boxes] for boxes [%lld, %lld, 4]\", (long long)(" +
      dim(scores[0]) + "), (long long)C, (long long)(" + dim(scores[2]) +
      "), (long long)B, (long long)N);");
  line("return;");
  close();
  line("int64_t* W = (int64_t*)(c->A + " + c_int(st.scratch_offset) + ");");
  line("c->d_set[" + std::to_string(at) + "] = hone_nms_run(" + ptr(ops[0]) + ", " + ptr(ops[1]) +
       ", 0, B, C, N, " + std::to_string(a.center) + ", " + c_int(std::max<int64_t>(0, a.max_out)) +
       "LL, " + double_literal(a.iou) + ", " + (a.has_score_threshold ? "1" : "0") + ", " +
       double_literal(a.score_threshold) + ", W, " + y + ");");
}

}  // namespace hone::aot
