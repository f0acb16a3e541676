// NonMaxSuppression, written once for the reference and the backends that run
// it: the attribute and the optional inputs read and checked here, the
// selection itself in ops/nms_select.h (C, which aot's generated code embeds).
// Its output is [count, 3] of i64 (batch, class, box), count known only once
// it has run: like NonZero's (ops/nonzero.h), a named length whose bound is
// the scores' element count, and a backend that runs it ends its block there.
//
//   HONE_TRY(ops::NmsParams p, ops::nms_params(n, max_out, iou, score));  (tensors or null)
//   HONE_TRY(ops::NmsDims d, ops::nms_dims(boxes.shape(), scores.shape()));
//   const int64_t rows = ops::nms_select(p, d, boxes, scores, f64, work, out);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/shape.h"
#include "hone/tensor.h"
#include "ops/nms_select.h"

namespace hone::ops {

/// The run's parameters: center_point_box and the optional inputs' values
/// (an absent or empty input takes ONNX's default: no box, IoU 0, no score
/// threshold).
struct NmsParams {
  int center = 0;
  int64_t max_out = 0;
  double iou = 0.0;
  bool has_score_threshold = false;
  double score_threshold = 0.0;
};

/// `n`'s parameters from the values of its inputs 2 to 4 (null when absent).
/// Fails (invalid argument) on a center_point_box other than 0 or 1, or an
/// IoU threshold outside [0, 1].
[[nodiscard]] inline Result<NmsParams> nms_params(const Node& n, const Tensor* max_out,
                                                  const Tensor* iou, const Tensor* score) {
  NmsParams p;
  const int64_t center = n.attr_int("center_point_box", 0);
  if (center != 0 && center != 1)
    return fail(ErrorCode::kInvalidArgument, "NonMaxSuppression center_point_box is " +
                                                 std::to_string(center) + "; it must be 0 or 1");
  p.center = static_cast<int>(center);
  if (max_out != nullptr && max_out->numel() > 0) p.max_out = tensor_element_as_int64(*max_out, 0);
  if (iou != nullptr && iou->numel() > 0) p.iou = tensor_element_as_double(*iou, 0);
  if (!(p.iou >= 0.0 && p.iou <= 1.0))
    return fail(ErrorCode::kInvalidArgument,
                "NonMaxSuppression iou_threshold " + std::to_string(p.iou) + " must be in [0, 1]");
  p.has_score_threshold = score != nullptr && score->numel() > 0;
  if (p.has_score_threshold) p.score_threshold = tensor_element_as_double(*score, 0);
  return p;
}

/// Batches, classes and boxes of boxes [batches, boxes, 4] and scores
/// [batches, classes, boxes].
struct NmsDims {
  int64_t batches = 0, classes = 0, boxes = 0;

  /// The most rows the output can have: batches * classes * min(boxes, max_out).
  int64_t rows_max(int64_t max_out) const {
    return max_out <= 0 ? 0 : batches * classes * (boxes < max_out ? boxes : max_out);
  }
  /// The scratch hone_nms_run needs, in 8-byte words.
  int64_t scratch_words() const { return hone_nms_scratch_words(boxes); }
};

/// Fails (invalid argument) unless the dims are [batches, boxes, 4] and
/// [batches, classes, boxes].
[[nodiscard]] inline Result<NmsDims> nms_dims(const std::vector<int64_t>& boxes,
                                              const std::vector<int64_t>& scores) {
  if (boxes.size() != 3 || boxes[2] != 4)
    return fail(
        ErrorCode::kInvalidArgument,
        "NonMaxSuppression boxes must be [batches, boxes, 4], got " + shape_to_string(boxes));
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1])
    return fail(ErrorCode::kInvalidArgument, "NonMaxSuppression scores " + shape_to_string(scores) +
                                                 " must be [batches, classes, boxes] for boxes " +
                                                 shape_to_string(boxes));
  return NmsDims{boxes[0], scores[1], boxes[1]};
}

/// Runs the selection (ops/nms_select.h) on `boxes` and `scores` (f64 when
/// `f64`, else f32); `work` holds d.scratch_words() words and `out` room for
/// d.rows_max(p.max_out) rows of 3. Returns the rows written.
inline int64_t nms_select(const NmsParams& p, const NmsDims& d, const void* boxes,
                          const void* scores, bool f64, int64_t* work, int64_t* out) {
  return hone_nms_run(boxes, scores, f64 ? 1 : 0, d.batches, d.classes, d.boxes, p.center,
                      p.max_out, p.iou, p.has_score_threshold ? 1 : 0, p.score_threshold, work,
                      out);
}

}  // namespace hone::ops
