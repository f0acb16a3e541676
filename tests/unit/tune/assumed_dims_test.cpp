// Symbolic input dims that no sample or --dim bounds: tuning without samples
// assumes bounds the graph itself allows, instead of fixing them at 1.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "hone/graph_builder.h"
#include "hone/random_samples.h"
#include "passes/dim_bounds.h"

namespace hone {
namespace {

Tensor table(int64_t rows, int64_t width) {
  Tensor t = Tensor::zeros(DType::kF32, {rows, width});
  float v = 0;
  for (float& x : t.span<float>()) x = (v += 0.01f);
  return t;
}

/// ids: i64[batch, seq] -> token embedding + a position embedding of `rows`
/// rows, taken as BERT's TorchScript export does (Slice of the table up to
/// Shape(ids)[1]) or as GPT-2's dynamo export does (Gather of Range(0, seq)).
Graph text_encoder(int64_t rows, bool by_range) {
  GraphBuilder b("text");
  const ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("batch"), Dim::symbol("seq")});
  const ValueId tok = b.op("Gather", {b.constant("tok", table(100, 8)), ids});
  const ValueId shape = b.op("Shape", {ids});
  const ValueId seq = b.op("Gather", {shape, b.constant("one", Tensor::scalar<int64_t>(1))});
  ValueId pos;
  if (by_range) {
    const ValueId positions = b.op("Range", {b.constant("zero", Tensor::scalar<int64_t>(0)), seq,
                                             b.constant("step", Tensor::scalar<int64_t>(1))});
    pos = b.op("Gather", {b.constant("pos", table(rows, 8)), positions});
  } else {
    const ValueId end =
        b.op("Unsqueeze", {seq, b.constant("axes", Tensor::from<int64_t>({1}, {0}))});
    pos = b.op("Slice", {b.constant("pos", table(rows, 8)),
                         b.constant("starts", Tensor::from<int64_t>({1}, {0})), end,
                         b.constant("slice_axes", Tensor::from<int64_t>({1}, {0}))});
  }
  b.output(b.add(tok, pos), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

TEST(AssumedDims, APositionTableBoundsTheSequence) {
  for (bool by_range : {false, true}) {
    SCOPED_TRACE(by_range ? "Gather of Range" : "Slice");
    const Graph g = text_encoder(/*rows=*/300, by_range);
    EXPECT_TRUE(passes::dims_fit(g, {{"batch", 1}, {"seq", 300}}));
    EXPECT_FALSE(passes::dims_fit(g, {{"batch", 1}, {"seq", 301}}));
    EXPECT_EQ(passes::largest_fitting_dim(g, {{"batch", 1}}, "seq", 8192), 300);
    std::vector<DimDeclaration> dims;
    const auto assumed = assume_unbounded_dims(g, dims);
    ASSERT_EQ(assumed.size(), 1u);  // batch is the batch dim, not assumed
    EXPECT_EQ(assumed[0].declaration.name, "seq");
    EXPECT_EQ(assumed[0].graph_limit, 300);
    EXPECT_EQ(assumed[0].declaration.bounds, (DimBounds{1, 128, 300}));
    ASSERT_EQ(dims.size(), 1u);
    EXPECT_EQ(dims[0].bounds.max, 300);
    const std::string text = assumed[0].describe();
    EXPECT_NE(text.find("assuming 1:128:300"), std::string::npos) << text;
    EXPECT_NE(text.find("at most 300"), std::string::npos) << text;
    EXPECT_NE(text.find("--dim seq=MIN:OPT:MAX"), std::string::npos) << text;
  }
}

TEST(AssumedDims, ASmallTableCapsOptAndALargeOneTheDefault) {
  std::vector<DimDeclaration> dims;
  auto small = assume_unbounded_dims(text_encoder(64, true), dims);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].declaration.bounds, (DimBounds{1, 64, 64}));
  dims.clear();
  auto large = assume_unbounded_dims(text_encoder(2048, false), dims);
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].graph_limit, 2048);
  EXPECT_EQ(large[0].declaration.bounds, (DimBounds{1, kAssumedDimOpt, kAssumedDimMax}));
}

TEST(AssumedDims, NothingBoundsTheDimOrItIsDeclared) {
  GraphBuilder b("free");
  b.output(b.relu(b.input("x", DType::kF32, Shape{Dim::symbol("n"), Dim::symbol("len")})), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  std::vector<DimDeclaration> dims;
  auto assumed = assume_unbounded_dims(*g, dims);
  ASSERT_EQ(assumed.size(), 1u);
  EXPECT_EQ(assumed[0].declaration.name, "len");
  EXPECT_FALSE(assumed[0].graph_limit);
  EXPECT_EQ(assumed[0].declaration.bounds, (DimBounds{1, kAssumedDimOpt, kAssumedDimMax}));
  EXPECT_NE(assumed[0].describe().find("nothing in the model bounds it"), std::string::npos);
  // A declared dim is the user's: nothing is assumed for it.
  std::vector<DimDeclaration> declared{*parse_dim_declaration("len=4:8:16")};
  EXPECT_TRUE(assume_unbounded_dims(*g, declared).empty());
  EXPECT_EQ(declared.size(), 1u);
}

// An image side a weight fixes (a MatMul over the flattened image needs
// exactly 6 columns): not even 1 fits, and the note says the model may fix it.
TEST(AssumedDims, ADimTheModelFixesIsSaidSo) {
  GraphBuilder b("fixed");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("w")});
  b.output(b.matmul(x, b.constant("m", table(6, 2))), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  EXPECT_EQ(passes::largest_fitting_dim(*g, {{"batch", 1}}, "w", 8192), 0);
  std::vector<DimDeclaration> dims;
  auto assumed = assume_unbounded_dims(*g, dims);
  ASSERT_EQ(assumed.size(), 1u);
  EXPECT_FALSE(assumed[0].fits_at_one);
  EXPECT_FALSE(assumed[0].graph_limit);
  EXPECT_NE(assumed[0].describe().find("may fix this dim"), std::string::npos)
      << assumed[0].describe();
}

TEST(AssumedDims, RandomSamplesTakeTheAssumedOpt) {
  const Graph g = text_encoder(300, false);
  std::vector<DimDeclaration> dims;
  (void)assume_unbounded_dims(g, dims);
  std::vector<int64_t> batches;
  auto samples = random_samples(g, dims, batches, 1);
  ASSERT_TRUE(samples) << samples.error().to_string();
  ASSERT_FALSE(samples->empty());
  const SampleValue* ids = (*samples)[0].find("ids");
  ASSERT_NE(ids, nullptr);
  ASSERT_TRUE(ids->is_tensor());
  EXPECT_EQ(ids->tensor().shape()[1], 128);  // the assumed opt, not 1
}

}  // namespace
}  // namespace hone
