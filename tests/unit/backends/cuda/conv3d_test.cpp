// 3-D convs on the cuda backend (video nets: R(2+1)D's (1,3,3) and (3,1,1)
// convs, R3D's 3x3x3, strided and grouped ones): cuDNN's N-d descriptors,
// f32 NCDHW, with the bias, residual Add and Relu after; checked against the
// reference in fp32 and tf32, and under bf16 (f32 activations: no half
// plan for them). Skipped, with the reason, without a CUDA device or cuDNN.
#include "cuda_test_util.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;
using testing_util::weights;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// A small R(2+1)D-like block over [2, 3, 4, 10, 12]: a (1,3,3) spatial conv
/// and a (3,1,1) temporal one with a residual Add and Relu, a strided 3x3x3
/// conv, a grouped one without bias, and a dilated one.
Graph video_block() {
  std::mt19937 rng(21);
  GraphBuilder b("video");
  auto bias = [&](const char* name, int64_t m) {
    return b.constant(name, uniform(rng, {m}, -0.2f, 0.2f));
  };
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 10, 12});
  ValueId s =
      b.relu(b.conv(x, b.constant("ws", weights(rng, {8, 3, 1, 3, 3})), bias("bs", 8),
                    {.strides = {1, 1, 1}, .pads = {0, 1, 1, 0, 1, 1}, .dilations = {1, 1, 1}}));
  ValueId t = b.conv(s, b.constant("wt", weights(rng, {8, 8, 3, 1, 1})), bias("bt", 8),
                     {.strides = {1, 1, 1}, .pads = {1, 0, 0, 1, 0, 0}, .dilations = {1, 1, 1}});
  ValueId r = b.relu(b.add(t, s));  // [2, 8, 4, 10, 12]
  ValueId d = b.conv(r, b.constant("wd", weights(rng, {16, 8, 3, 3, 3})), bias("bd", 16),
                     {.strides = {2, 2, 2}, .pads = {1, 1, 1, 1, 1, 1}, .dilations = {1, 1, 1}});
  ValueId gr = b.conv(
      d, b.constant("wg", weights(rng, {16, 4, 1, 3, 3})), kNoValue,
      {.strides = {1, 1, 1}, .pads = {0, 1, 1, 0, 1, 1}, .dilations = {1, 1, 1}, .group = 4});
  ValueId dl = b.conv(gr, b.constant("wl", weights(rng, {4, 16, 1, 3, 3})), bias("bl", 4),
                      {.strides = {1, 1, 1}, .pads = {0, 2, 2, 0, 2, 2}, .dilations = {1, 2, 2}});
  b.output(dl, "y");  // [2, 4, 2, 5, 6]
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

TEST(CudaConv3d, VideoBlockRunsOnCudnnNdAndMatchesTheReference) {
  HONE_REQUIRE_CUDNN();
  const Graph g = video_block();
  std::mt19937 rng(22);
  const std::vector<Tensor> in = {uniform(rng, {2, 3, 4, 10, 12})};
  auto be = expect_matches_reference(g, in, 1e-4, 1e-5, {{"precision", "fp32"}});
  const std::string plan = plan_text(*be);
  EXPECT_EQ(count(plan, "conv3d.f32.cuda.cudnn[algo "), 5u) << plan;
  EXPECT_EQ(count(plan, "]+add+relu"), 1u) << plan;
  // TF32 and bf16 (f32 activations) let cuDNN use tensor cores: a bf16-sized bound.
  for (const char* p : {"tf32", "bf16"}) {
    SCOPED_TRACE(p);
    auto reduced = expect_matches_reference(g, in, 2e-2, 2e-2, {{"precision", p}});
    EXPECT_EQ(count(plan_text(*reduced), "conv3d.f32.cuda.cudnn[algo "), 5u) << plan_text(*reduced);
  }
}

TEST(CudaConv3d, WithCudnnSwitchedOffTheBlockRunsOnTheReference) {
  // cudnn=false: a 3-D conv has no other kernel here, so its block cannot
  // plan; the call still answers, on the reference, and is counted as such.
  HONE_REQUIRE_CUDNN();
  const Graph g = video_block();
  CudaBackend be;
  ASSERT_TRUE(be.configure("cudnn", "false"));
  ASSERT_TRUE(be.build(g));
  std::mt19937 rng(23);
  const std::vector<Tensor> in = {uniform(rng, {2, 3, 4, 10, 12})};
  auto got = be.infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want);
  EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0], 1e-5, 1e-6));
  EXPECT_GT(be.fallback_runs(), 0u);
}

}  // namespace
}  // namespace hone::cuda
