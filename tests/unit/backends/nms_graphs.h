// The NonMaxSuppression graph that onednn's and aot's tests run (ops/nms.h):
// torchvision's batched NMS of a detector (one class, the boxes of each
// class offset apart beforehand) and what reads the boxes it keeps, with
// inputs that keep many (more than the linear scan takes), one and none.
//
//   const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
//   for (const auto& in : backend_test::nms_detector_inputs()) ...
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "backends/backend_test_util.h"
#include "hone/graph.h"
#include "hone/graph_builder.h"

namespace hone::backend_test {

/// boxes [n, 4] and scores [n] f32 -> Relu each -> Unsqueeze to [1, n, 4]
/// and [1, 1, n] -> NonMaxSuppression (every box, IoU 0.5; "selected",
/// [k, 3]) -> Gather of column 2 -> the kept boxes' rows ("kept", [k, 4]).
inline Graph nms_detector_graph(Dim n) {
  GraphBuilder b("nms_detector", 13);
  const ValueId boxes = b.relu(b.input("boxes", DType::kF32, Shape{n, 4}));
  const ValueId scores = b.relu(b.input("scores", DType::kF32, Shape{n}));
  const ValueId max_out =
      b.constant("", Tensor::from<int64_t>({1}, {std::numeric_limits<int64_t>::max()}));
  const ValueId iou = b.constant("", Tensor::from<float>({1}, {0.5f}));
  const ValueId sel = b.op("NonMaxSuppression",
                           {b.op("Unsqueeze", {boxes, ints(b, {0})}),
                            b.op("Unsqueeze", {scores, ints(b, {0, 1})}), max_out, iou},
                           {}, "nms");
  b.output(sel, "selected");
  const ValueId column =
      b.op("Gather", {sel, b.constant("", Tensor::from<int64_t>({}, {2}))}, {{"axis", int64_t{1}}});
  b.output(b.op("Gather", {boxes, column}, {{"axis", int64_t{0}}}), "kept");
  return *std::move(b).build();
}

/// Inputs of nms_detector_graph: 300 small boxes scattered over a 100 x 100
/// image (many kept, some suppressed, ties of score among them), 5 copies of
/// one box (one kept) and no boxes ([0, 4], so the later block reads an
/// empty [0, 4]).
inline std::vector<std::vector<Tensor>> nms_detector_inputs() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> at(0.0f, 100.0f), side(2.0f, 12.0f);
  std::vector<float> boxes, scores;
  for (int i = 0; i < 300; ++i) {
    const float y = at(rng), x = at(rng);
    boxes.insert(boxes.end(), {y, x, y + side(rng), x + side(rng)});
    scores.push_back(static_cast<float>(rng() % 50) / 50.0f);  // ties
  }
  return {{Tensor::from<float>({300, 4}, boxes), Tensor::from<float>({300}, scores)},
          {Tensor::from<float>({5, 4}, std::vector<float>{1, 2, 5, 6, 1, 2, 5, 6, 1, 2,
                                                          5, 6, 1, 2, 5, 6, 1, 2, 5, 6}),
           Tensor::from<float>({5}, {0.1f, 0.9f, 0.3f, 0.9f, 0.2f})},
          {Tensor::from<float>({0, 4}, {}), Tensor::from<float>({0}, {})}};
}

}  // namespace hone::backend_test
