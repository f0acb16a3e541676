// Private to the cuda backend: where NonMaxSuppression's kernels
// (kernels/nms.cu) keep each (batch, class) pair's state in the workspace,
// the layout hone_nms_select and hone_nms_rows compute their offsets by.
//
//   const NmsLayout l = nms_layout(boxes, max_out);
//   workspace = pairs * l.pair_bytes + 8 * pairs;  // then every pair's count
#pragma once

#include <algorithm>
#include <cstdint>

namespace hone::cuda {

/// One pair's part: the sort's scores (float) and box indices (int), p2 of
/// each; the sorted candidates' decoded boxes (5 doubles each); their
/// suppressed flags (int, rounded to even); the kept box indices (i64).
struct NmsLayout {
  long long p2 = 1;        // the sort's length: boxes rounded up to a power of 2
  long long keep_max = 0;  // min(boxes, max_output_boxes_per_class), 0 when that is <= 0
  long long keep_at = 0;   // where the kept box indices start
  long long pair_bytes = 0;
};

inline NmsLayout nms_layout(int64_t boxes, int64_t max_out) {
  NmsLayout l;
  while (l.p2 < boxes) l.p2 *= 2;
  l.keep_max = max_out <= 0 ? 0 : std::min<int64_t>(boxes, max_out);
  l.keep_at = 8 * l.p2 + 40 * boxes + 4 * ((boxes + 1) / 2 * 2);
  l.pair_bytes = (l.keep_at + 8 * l.keep_max + 15) / 16 * 16;
  return l;
}

}  // namespace hone::cuda
