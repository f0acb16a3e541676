// NonMaxSuppression as hone's own step in a oneDNN block: boxes [batches,
// boxes, 4] and scores [batches, classes, boxes] of f32, selected by
// ops/nms_select.h (the reference's own C, in double) into [count, 3] of i64.
// The count is known only once the step has run: the output buffer holds
// room for every box of every batch and class, then the count as its last
// i64, and the plan's run hands out [count, 3] (PlanBuilder::set_counted);
// the partition ends the block here (ops::length_known_after_run), so the
// blocks reading it are planned with that count. max_output_boxes_per_class
// and the thresholds must be known when the plan is built (constants, as
// torchvision exports them); the selection's scratch is a temporary of the
// plan, so the step allocates nothing.
#include "backends/onednn/own_nms.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backends/common/node_query.h"
#include "ops/nms.h"
#include "ops/run_length.h"

namespace hone::onednn {
namespace {

using node_query::val;

/// Inputs 2 to 4, each a constant of the graph or absent.
bool params_known(const Graph& g, const Node& n) {
  for (size_t i = 2; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], kHostPolicy)) return false;
  return true;
}

}  // namespace

std::optional<std::string> own_nms_why_not(const Graph& g, const Node& n) {
  if (n.op_type != "NonMaxSuppression") return std::nullopt;
  const Value* boxes = val(g, n, 0);
  const Value* scores = val(g, n, 1);
  if (boxes == nullptr || scores == nullptr) return "needs boxes and scores";
  for (const Value* v : {boxes, scores})
    if (v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return "input is " + std::string(dtype_name(v->dtype)) + "; f32 only";
  if (!params_known(g, n))
    return "max_output_boxes_per_class and the thresholds must be constants or computed from dims";
  return "";
}

bool lowers_own_nms(const Node& n) {
  return n.op_type == "NonMaxSuppression";
}

bool own_nms_reads_integers(const Node& n, size_t input) {
  return n.op_type == "NonMaxSuppression" && input == 2;
}

Result<void> lower_own_nms(PlanBuilder& b, const Node& n) {
  const ValueId y = n.outputs.empty() ? kNoValue : n.outputs[0];
  if (y < 0) return {};
  if (const std::string why = ops::run_length_block_end_why_not(b.graph(), n, "NonMaxSuppression");
      !why.empty())
    return fail(ErrorCode::kUnsupported, n.describe() + ": " + why);
  if (b.dtype(n.inputs[0]) != DType::kF32 || b.dtype(n.inputs[1]) != DType::kF32)
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": boxes of " + std::string(dtype_name(b.dtype(n.inputs[0]))) +
                    " and scores of " + std::string(dtype_name(b.dtype(n.inputs[1]))));
  auto param = [&](size_t i) {
    return i < n.inputs.size() && n.inputs[i] >= 0 ? b.constant(n.inputs[i]) : nullptr;
  };
  for (size_t i = 2; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && param(i) == nullptr)
      return fail(ErrorCode::kUnsupported, n.describe() + ": input " + std::to_string(i) +
                                               " is not known when the plan is built");
  HONE_TRY(const ops::NmsParams p, ops::nms_params(n, param(2), param(3), param(4)));
  HONE_TRY(const ops::NmsDims d,
           ops::nms_dims(value_dims(b, n.inputs[0]), value_dims(b, n.inputs[1])));
  const int64_t capacity = d.rows_max(p.max_out) * 3;
  const dims_t flat{capacity + 1};
  const BufferRef dst = new_plain_value(b, flat, DType::kI64);
  const BufferRef work = new_plain_value(b, {std::max<int64_t>(1, d.scratch_words())}, DType::kI64);
  b.add_own_step("non_max_suppression",
                 [p, d, capacity](void* const* ptr) -> Result<void> {
                   auto* y = static_cast<int64_t*>(ptr[2]);
                   y[capacity] = ops::nms_select(p, d, ptr[0], ptr[1], false,
                                                 static_cast<int64_t*>(ptr[3]), y);
                   return {};
                 },
                 {{DNNL_ARG_SRC_0, b.data(n.inputs[0])},
                  {DNNL_ARG_SRC_1, b.data(n.inputs[1])},
                  {DNNL_ARG_DST, dst},
                  {DNNL_ARG_DST_1, work}});
  b.set(y, PValue{flat, dst, DType::kI64});
  b.set_counted(y, {0, 3}, 0);
  return {};
}

}  // namespace hone::onednn
