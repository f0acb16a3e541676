// Broadcasting steps that oneDNN 2.6 would run by its reference kernels, a
// hundred times slower than its jit ones: a binary op whose two operands both
// broadcast (DeBERTa's [1,1,1,S] x [1,1,S,1] mask), a reduction over a middle
// axis (a sentence embedder's masked mean over the sequence); and Where's
// row loop over broadcast operands. Each must match the reference, and the
// plans must hold no step of oneDNN's reference kernels.
#include <oneapi/dnnl/dnnl.h>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

/// Builds `g`'s plan for `in`, runs it and compares its outputs with the
/// reference; the plan is returned for its steps to be checked.
std::shared_ptr<const Plan> expect_plan_matches(const Graph& g, const std::vector<Tensor>& in) {
  std::vector<dims_t> dims;
  for (const Tensor& t : in) dims.push_back(t.shape());
  PlanBuilder builder(g);
  auto plan = builder.build(dims);
  EXPECT_TRUE(plan) << plan.error().to_string();
  if (!plan) return nullptr;
  auto want = eval::Interpreter().run_tensors(g, in);
  EXPECT_TRUE(want) << want.error().to_string();
  std::atomic<uint64_t> executions{0};
  auto got = (*plan)->run(in, &executions);
  EXPECT_TRUE(got) << got.error().to_string();
  if (!want || !got) return nullptr;
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size() && i < got->size(); ++i)
    EXPECT_TRUE(close((*got)[i], (*want)[i], 1e-5, 1e-6)) << "output " << i;
  return *plan;
}

/// The implementation oneDNN chose for each primitive step ("jit:...",
/// "ref:any", ...); own steps are left out.
std::vector<std::string> impls(const Plan& p) {
  std::vector<std::string> out;
  for (const Step& s : p.steps) {
    if (s.own) continue;
    const char* info = nullptr;
    EXPECT_EQ(dnnl_primitive_desc_query(s.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                                        static_cast<void*>(&info)),
              dnnl_success);
    out.push_back(info != nullptr ? std::string(s.kind) + " " + info : s.kind + " ?");
  }
  return out;
}

void expect_no_reference_kernel(const Plan& p) {
  for (const std::string& i : impls(p))
    EXPECT_EQ(i.find(" ref"), std::string::npos) << i << " in " << p.describe();
}

TEST(OnednnBroadcastSteps, BothOperandsBroadcastOnDifferentAxes) {
  std::mt19937 rng(131);
  for (const char* op : {"Mul", "Sub", "Div"}) {  // Sub and Div: the order matters
    SCOPED_TRACE(op);
    GraphBuilder b("both");
    ValueId row = b.input("row", DType::kF32, Shape{1, 1, 1, 24});
    ValueId col = b.input("col", DType::kF32, Shape{1, 1, 24, 1});
    b.output(b.op(op, {b.relu(row), col}), "y");  // [1,1,24,24]
    const Graph g = *std::move(b).build();
    auto plan = expect_plan_matches(
        g, {uniform(rng, {1, 1, 1, 24}), uniform(rng, {1, 1, 24, 1}, 0.5f, 2.0f)});
    ASSERT_TRUE(plan);
    expect_no_reference_kernel(*plan);
  }
}

TEST(OnednnBroadcastSteps, ReductionOverAMiddleAxisByRows) {
  std::mt19937 rng(132);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    for (const bool keepdims : {false, true}) {
      SCOPED_TRACE(std::string(op) + (keepdims ? " keepdims" : ""));
      GraphBuilder b("rows", 18);
      ValueId x = b.input("x", DType::kF32, Shape{2, 1, 9, 3, 20});
      ValueId axes = b.constant("axes", Tensor::from<int64_t>({2}, {2, 3}));  // 9 x 3 rows
      b.output(b.op(op, {b.relu(x), axes}, {{"keepdims", int64_t{keepdims}}}), "y");
      const Graph g = *std::move(b).build();
      auto plan = expect_plan_matches(g, {uniform(rng, {2, 1, 9, 3, 20})});
      ASSERT_TRUE(plan);
      expect_no_reference_kernel(*plan);
    }
  }
}

TEST(OnednnBroadcastSteps, WhereOverBroadcastOperands) {
  std::mt19937 rng(133);
  // The condition broadcast over heads, a scalar, and each operand broadcast
  // along the last axis in turn (a row step of 0).
  const std::vector<std::vector<Shape>> cases{
      {Shape{1, 1, 6, 6}, Shape{}, Shape{1, 4, 6, 6}},
      {Shape{1, 4, 6, 1}, Shape{1, 4, 6, 6}, Shape{1, 1, 1, 6}},
      {Shape{6}, Shape{4, 1}, Shape{4, 6}},
  };
  for (const auto& shapes : cases) {
    GraphBuilder b("where");
    ValueId m = b.input("m", DType::kF32, shapes[0]);
    ValueId x = b.input("x", DType::kF32, shapes[1]);
    ValueId y = b.input("y", DType::kF32, shapes[2]);
    ValueId c = b.op("Greater", {m, b.constant("zero", Tensor::from<float>({}, {0.0f}))});
    b.output(b.op("Where", {c, b.relu(x), y}), "out");
    const Graph g = *std::move(b).build();
    std::vector<Tensor> in;
    for (const Shape& s : shapes) {
      std::vector<int64_t> d;
      for (const Dim& e : s.dims()) d.push_back(e.value());
      in.push_back(uniform(rng, d));
    }
    EXPECT_TRUE(expect_plan_matches(g, in));
  }
}

// PatchTST's BatchNorm1d over tokens: [B,W,C] transposed to [B,C,W] is a
// channels-last view, on which oneDNN 2.6 normalizes only by its reference
// kernel ("bnorm_ref:any", 0.15 ms for 19k values); it must run as a per-channel
// multiply-add instead, with the Relu that alone reads it and without.
TEST(OnednnBroadcastSteps, BatchNormOfChannelsLastTokens) {
  std::mt19937 rng(134);
  for (const bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "plain");
    GraphBuilder b("bn_tokens");
    ValueId x = b.input("x", DType::kF32, Shape{3, 10, 16});
    std::vector<ValueId> params;
    for (int i = 0; i < 3; ++i) params.push_back(b.constant("", uniform(rng, {16})));
    params.push_back(b.constant("", uniform(rng, {16}, 0.5f, 2.0f)));  // variances
    ValueId t = b.transpose(b.relu(x), {0, 2, 1});
    ValueId bn = b.op("BatchNormalization", {t, params[0], params[1], params[2], params[3]});
    b.output(b.transpose(relu ? b.relu(bn) : bn, {0, 2, 1}), "y");
    const Graph g = *std::move(b).build();
    auto plan = expect_plan_matches(g, {uniform(rng, {3, 10, 16})});
    ASSERT_TRUE(plan);
    for (const std::string& i : impls(*plan))
      EXPECT_EQ(i.find("ref:"), std::string::npos) << i << " in " << plan->describe();
  }
}

}  // namespace
}  // namespace hone::onednn
