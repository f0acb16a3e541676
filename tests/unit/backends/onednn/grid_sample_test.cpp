// GridSample over two spatial dims on onednn (own_index.cpp's grid_sample_2d):
// each point's taps from its two axes, summed in the order and with the
// weights of the reference's general path, so every value equals the
// reference's to the bit, for every mode and padding, grid points far
// outside the input included.
#include <cstring>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::uniform;

TEST(OnednnGridSample, TwoSpatialDimsEqualTheReferenceBitForBit) {
  std::mt19937 rng(505);
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (const int64_t align : {0, 1}) {
        SCOPED_TRACE(std::string(mode) + " " + pad + " align_corners " + std::to_string(align));
        GraphBuilder b("grid");
        ValueId x = b.input("x", DType::kF32, Shape{2, 3, 5, 7});
        ValueId grid = b.input("grid", DType::kF32, Shape{2, 4, 6, 2});
        b.output(b.op("GridSample", {b.relu(x), grid},
                      {{"mode", std::string(mode)},
                       {"padding_mode", std::string(pad)},
                       {"align_corners", align}}),
                 "y");
        const Graph g = *std::move(b).build();
        const Tensor xin = uniform(rng, {2, 3, 5, 7});
        Tensor gin = uniform(rng, {2, 4, 6, 2});
        for (int64_t i = 0; i < gin.numel(); ++i) gin.data<float>()[i] *= 1.6f;  // some outside
        PlanBuilder builder(g);
        auto plan = builder.build({xin.shape(), gin.shape()});
        ASSERT_TRUE(plan) << plan.error().to_string();
        std::atomic<uint64_t> executions{0};
        auto got = (*plan)->run({xin, gin}, &executions);
        ASSERT_TRUE(got) << got.error().to_string();
        auto want = eval::Interpreter().run_tensors(g, {xin, gin});
        ASSERT_TRUE(want) << want.error().to_string();
        ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
        EXPECT_EQ(std::memcmp((*got)[0].raw(), (*want)[0].raw(),
                              static_cast<size_t>((*want)[0].numel()) * sizeof(float)),
                  0);
      }
}

}  // namespace
}  // namespace hone::onednn
