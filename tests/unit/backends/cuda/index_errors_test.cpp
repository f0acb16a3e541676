// Indices out of range on the device: GatherND (hone_gather_nd) and a Gather
// of indices known only at run time (hone_gather_indices) cannot fail inside
// their kernels, so they set the stream's run error word (run_errors.h) and
// the call fails as the reference's does, naming the node; the next call with
// good indices runs, also when the steps replay as a CUDA graph. The message
// is checked without a device; the runs skip without one, naming why.
#include "backends/cuda/program.h"
#include "backends/cuda/run_errors.h"
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(CudaRunErrors, NameTheStepAndItsData) {
  Program p;
  p.slots.resize(2);
  p.slots[0].dims = {2, 3, 4};
  p.slots[1].dims = {5, 2};
  p.steps.resize(2);
  p.steps[0].label = "'r' (Relu)";
  p.steps[0].in = {0};
  p.steps[0].op.kernel = "relu.f32.cuda";
  p.steps[1].label = "'gnd' (GatherND)";
  p.steps[1].in = {0, 1};
  const Error e = run_error(p, run_error_code(kRunErrorIndex, 1));
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.message(), "cuda: 'gnd' (GatherND): an index is out of range for data [2,3,4]");
  // A word naming no step of the program, or a kind this build does not
  // know: internal errors, which say what the word held.
  const Error none = run_error(p, run_error_code(kRunErrorIndex, 2));
  EXPECT_EQ(none.code(), ErrorCode::kInternal);
  EXPECT_NE(none.message().find("names no step of this program (2 steps)"), std::string::npos)
      << none.message();
  EXPECT_EQ(run_error(p, uint64_t{1} << 32).code(), ErrorCode::kInternal);  // step part 0
  const Error kind = run_error(p, run_error_code(7, 0));
  EXPECT_EQ(kind.code(), ErrorCode::kInternal);
  EXPECT_EQ(kind.message(), "cuda: 'r' (Relu): its kernel reported error kind 7 [relu.f32.cuda]");
}

/// x [2, 3, 4] through a Relu, then GatherND 'gnd' by three index pairs
/// given at run time (each picks a row of 4).
Graph gather_nd_graph() {
  GraphBuilder b("gather_nd_errors", 18);
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
  ValueId idx = b.input("idx", DType::kI64, Shape{3, 2});
  b.output(b.op("GatherND", {b.relu(x), idx}, {}, "gnd"), "y");
  return *std::move(b).build();
}

/// x [5, 3] through a Relu, then Gather 'g' of four rows by indices given at run time.
Graph gather_graph() {
  GraphBuilder b("gather_errors", 18);
  ValueId x = b.input("x", DType::kF32, Shape{5, 3});
  ValueId idx = b.input("idx", DType::kI64, Shape{4});
  b.output(b.op("Gather", {b.relu(x), idx}, {{"axis", int64_t{0}}}, "g"), "y");
  return *std::move(b).build();
}

/// Runs `g` with good indices three times (the second run captures a CUDA
/// graph, the third replays it), then with `bad` ones, which must fail with
/// `want` as the reference fails, then with the good ones again.
void expect_refused_then_recovers(const Graph& g, const Tensor& x, const Tensor& good,
                                  const Tensor& bad, const std::string& want) {
  auto be = expect_matches_reference(g, {x, good});
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the good indices did not run as the reference";
  auto ref = eval::Interpreter().run_tensors(g, {x, good});
  ASSERT_TRUE(ref) << ref.error().to_string();
  for (int run = 2; run <= 3; ++run) {
    auto got = be->infer({x, good});
    ASSERT_TRUE(got) << "run " << run << ": " << got.error().to_string();
    EXPECT_TRUE(close((*got)[0], (*ref)[0], 0.0, 0.0)) << "run " << run;
  }
  EXPECT_FALSE(eval::Interpreter().run_tensors(g, {x, bad})) << "the reference accepts them";
  auto refused = be->infer({x, bad});
  ASSERT_FALSE(refused) << "an index out of range ran";
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(), want) << refused.error().to_string();
  for (int run = 0; run < 2; ++run) {
    auto again = be->infer({x, good});
    ASSERT_TRUE(again) << "after the refusal: " << again.error().to_string();
    EXPECT_TRUE(close((*again)[0], (*ref)[0], 0.0, 0.0));
  }
}

TEST(CudaRunErrors, GatherNdIndexOutOfRangeFails) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(17);
  const Tensor x = uniform(rng, {2, 3, 4}, -1.0f, 1.0f);
  const Tensor good = Tensor::from<int64_t>({3, 2}, {0, 2, 1, -1, 1, 0});
  const std::string want = "cuda: 'gnd' (GatherND): an index is out of range for data [2,3,4]";
  // Past the end of dim 1, and before its start (-4 of 3).
  expect_refused_then_recovers(gather_nd_graph(), x, good,
                               Tensor::from<int64_t>({3, 2}, {0, 2, 1, 3, 1, 0}), want);
  expect_refused_then_recovers(gather_nd_graph(), x, good,
                               Tensor::from<int64_t>({3, 2}, {0, 2, 1, 1, 1, -4}), want);
}

TEST(CudaRunErrors, GatherIndexOutOfRangeFails) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(18);
  const Tensor x = uniform(rng, {5, 3}, -1.0f, 1.0f);
  const Tensor good = Tensor::from<int64_t>({4}, {4, 0, -1, 2});
  const std::string want = "cuda: 'g' (Gather): an index is out of range for data [5,3]";
  expect_refused_then_recovers(gather_graph(), x, good, Tensor::from<int64_t>({4}, {4, 0, 5, 2}),
                               want);
  expect_refused_then_recovers(gather_graph(), x, good, Tensor::from<int64_t>({4}, {-6, 0, 1, 2}),
                               want);
}

}  // namespace
}  // namespace hone::cuda
