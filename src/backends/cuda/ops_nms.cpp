// NonMaxSuppression on the device (kernels/nms.cu): boxes [batches, boxes,
// 4] and scores [batches, classes, boxes] of f32, selected as the reference
// selects them (ops/nms_select.h's box and IoU test, in double; the same
// order) into [count, 3] of i64. One block per (batch, class) sorts and walks
// its candidates in its part of the workspace, then one block writes the
// rows in (batch, class) order and their count last; the block's run reads
// the count back and hands out [count, 3] (OpPlan::counted), and the block
// ends here (ops::length_known_after_run), as NonZero's does.
// max_output_boxes_per_class and the thresholds are read when the plan is
// built: constants, or values computed from dims (as torchvision exports
// them), as onednn and aot take them.
//
// One difference is left: with no score threshold, NaN scores are ordered
// by box index among the others, where the reference's merge sort leaves
// them where its comparisons (all false) put them.
#include <algorithm>
#include <climits>

#include "backends/common/node_query.h"
#include "backends/cuda/nms_layout.h"
#include "backends/cuda/op.h"
#include "ops/nms.h"
#include "ops/run_length.h"

namespace hone::cuda {
namespace {

using node_query::val;

const char* const kParamNames[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                                   "score_threshold"};

static_assert(sizeof(hone_nms_box) == 40, "kernels/nms.cu lays boxes out 40 bytes apart");

/// The most workspace one NonMaxSuppression takes (4 GiB): past it the
/// signature runs on the reference.
constexpr long long kMaxWorkspace = 1LL << 32;

Result<OpPlan> plan_nms(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  const Tensor* param[5] = {};
  for (size_t i = 2; i < n.inputs.size() && i < 5; ++i) {
    if (n.inputs[i] < 0) continue;
    param[i] = env.value ? env.value(n.inputs[i]) : nullptr;
    if (param[i] == nullptr)
      return fail(ErrorCode::kUnsupported, n.describe() + ": input " + std::to_string(i) + " (" +
                                               kParamNames[i] +
                                               ") is not known when the plan is built");
  }
  HONE_TRY(const ops::NmsParams p, ops::nms_params(n, param[2], param[3], param[4]));
  HONE_TRY(const ops::NmsDims d, ops::nms_dims(in[0], in[1]));
  // Box indices (and the sort's padding, up to 3 boxes) are ints on the device.
  if (d.boxes > INT_MAX / 4)
    return fail(ErrorCode::kUnsupported, n.describe() + ": " + std::to_string(d.boxes) +
                                             " boxes (cuda indexes up to " +
                                             std::to_string(INT_MAX / 4) + ")");
  const long long pairs = d.batches * d.classes;
  if (pairs > INT_MAX)
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": " + std::to_string(pairs) +
                    " (batch, class) pairs (cuda runs one block each, up to 2^31 - 1)");
  const NmsLayout l = nms_layout(d.boxes, p.max_out);
  const bool selects = pairs > 0 && l.keep_max > 0;
  const long long workspace = selects ? pairs * l.pair_bytes + 8 * pairs : 0;
  if (workspace > kMaxWorkspace)
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": its workspace would be " + std::to_string(workspace) +
                    " bytes (cuda takes at most " + std::to_string(kMaxWorkspace) + ")");
  const long long capacity = d.rows_max(p.max_out) * 3;
  OpPlan plan;
  plan.outputs = {{capacity + 1}};
  plan.dtypes = {DType::kI64};
  plan.counted = ops::CountedOutput{0, {0, 3}, 0};
  plan.workspace_bytes = static_cast<size_t>(workspace);
  plan.kernel = std::string("nms.f32.cuda.bitonic_sort+greedy") + (p.center ? ".center" : "");
  const long long nb = d.boxes, classes = d.classes;
  plan.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    CUdeviceptr work = b.workspace, y = b.out[0];
    long long pb = l.pair_bytes, boxes = nb, cls = classes, p2 = l.p2, keep = l.keep_max;
    if (selects) {
      HONE_TRY(CUfunction f, c.fixed.function("hone_nms_select"));
      CUdeviceptr bx = b.in[0], sc = b.in[1];
      int center = p.center, has_thr = p.has_score_threshold ? 1 : 0;
      double iou = p.iou, thr = p.score_threshold;
      HONE_CHECK_OK(
          launch(c.d, f, c.stream, static_cast<unsigned>(pairs), 512,
                 {&bx, &sc, &work, &pb, &boxes, &cls, &p2, &keep, &center, &iou, &has_thr, &thr}));
    }
    // With nothing selected (no pairs, or max_output_boxes_per_class <= 0)
    // the rows kernel only writes the count, 0.
    HONE_TRY(CUfunction rows, c.fixed.function("hone_nms_rows"));
    long long n_pairs = selects ? pairs : 0, cap = capacity;
    return launch(c.d, rows, c.stream, 1, 256, {&work, &y, &n_pairs, &cls, &pb, &p2, &boxes, &cap});
  };
  return plan;
}

}  // namespace

std::string nms_why_not(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1) return "more than one output";
  for (size_t i = 0; i < 2; ++i) {
    const Value* v = val(g, n, i);
    if (v == nullptr) return "input " + std::to_string(i) + " (" + kParamNames[i] + ") is missing";
    if (v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return std::string(kParamNames[i]) + " are " + dtype_word(v->dtype) + " (cuda reads f32)";
  }
  for (size_t i = 2; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
      return "input " + std::to_string(i) + " (" + (i < 5 ? kParamNames[i] : "extra") +
             ") is neither a constant nor computed from shapes";
  const int64_t center = n.attr_int("center_point_box", 0);
  if (center != 0 && center != 1)
    return "center_point_box is " + std::to_string(center) + "; it must be 0 or 1";
  return {};
}

Result<Unit> create_nms(const BlockInfo& b, const Node& n) {
  if (const std::string why = ops::run_length_block_end_why_not(b.g, n, "NonMaxSuppression");
      !why.empty())
    return fail(ErrorCode::kUnsupported, n.describe() + ": " + why);
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0], n.inputs[1]};  // the parameters are read when planning
  u.outputs = {n.outputs[0]};
  const Node node = n;  // the planner keeps its own copy
  u.op = std::make_unique<FnOp>([node](const std::vector<dims_t>& in, const PlanEnv& env) {
    return plan_nms(node, in, env);
  });
  return u;
}

}  // namespace hone::cuda
