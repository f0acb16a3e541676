#include <gtest/gtest.h>

#include "hone/graph_spec.h"
#include "spec_test_models.h"

namespace hone {
namespace {

using namespace spec_test;

const DimSpec kBatch{DimSpec::Kind::kBatch, 0, "batch"};
DimSpec fixed(int64_t n) {
  return {DimSpec::Kind::kStatic, n, ""};
}
DimSpec dynamic(std::string name) {
  return {DimSpec::Kind::kDynamic, 0, std::move(name)};
}

TEST(GraphSpecLearn, NestedTreeBindsLeavesByName) {
  const Graph g = nested_model();
  auto spec = GraphSpec::learn(g, {nested_sample(1), nested_sample(3)});
  ASSERT_TRUE(spec) << spec.error().to_string();
  ASSERT_EQ(spec->inputs.size(), 4u);
  EXPECT_EQ(spec->inputs[1].path, "meta.masks[0]");
  EXPECT_EQ(spec->inputs[3].path, "meta.scale");
  EXPECT_TRUE(spec->inputs[3].scalar_leaf);
  EXPECT_TRUE(spec->inputs[3].dims.empty());
  EXPECT_EQ(spec->inputs[0].dims, (std::vector<DimSpec>{kBatch, fixed(4)}));
  EXPECT_EQ(spec->inputs[0].batch_axis, 0);
  EXPECT_EQ(spec->inputs[3].batch_axis, -1);
  EXPECT_EQ(spec->batch_dim, "batch");
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{1, 3, 3}));  // tie 1 vs 3 goes to the larger
  // Outputs named as paths form a tree.
  ASSERT_EQ(spec->outputs.size(), 3u);
  EXPECT_EQ(spec->outputs[0].path, "boxes.xy");
  EXPECT_EQ(spec->outputs[2].path, "logits");
  // The outputs' symbol "batch" is the inputs' batch dim.
  EXPECT_EQ(spec->outputs[1].dims, (std::vector<DimSpec>{kBatch, fixed(4)}));
  EXPECT_EQ(spec->outputs[1].batch_axis, 0);
}

TEST(GraphSpecLearn, NestedTreeBindsPositionallyWhenNoNameMatches) {
  const Graph g = nested_model({"x0", "x1", "x2", "x3"});
  auto spec = GraphSpec::learn(g, {nested_sample(2)});
  ASSERT_TRUE(spec) << spec.error().to_string();
  // Depth-first leaf order: image, meta.masks[0], meta.masks[1], meta.scale.
  EXPECT_EQ(spec->inputs[0].name, "x0");
  EXPECT_EQ(spec->inputs[0].path, "image");
  EXPECT_EQ(spec->inputs[2].path, "meta.masks[1]");
  EXPECT_EQ(spec->inputs[3].name, "x3");
  EXPECT_EQ(spec->inputs[3].path, "meta.scale");
  // One batch size, but the graph names its dim "batch".
  EXPECT_EQ(spec->batch_dim, "batch");
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{2, 2, 2}));
}

TEST(GraphSpecLearn, BindingErrorsNameLeavesAndInputs) {
  // Some leaves name inputs, one does not.
  const Graph partly = nested_model({"image", "masks0", "masks1", "scale"});
  auto r = GraphSpec::learn(partly, {nested_sample(2)});
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message(), "sample leaf 'meta.masks[0]' names no input"))
      << r.error().message();
  // Positional, wrong count.
  auto few = GraphSpec::learn(nested_model({"a", "b", "c", "d"}),
                              {SampleMap{{"p", iota({1, 4})}, {"q", iota({1, 4})}}});
  ASSERT_FALSE(few);
  EXPECT_TRUE(contains(few.error().message(), "2 leaves (p, q)")) << few.error().message();
  EXPECT_TRUE(contains(few.error().message(), "4 inputs (a, b, c, d)"));
  // Bare tensor for a 4-input model.
  auto bare = GraphSpec::learn(partly, {iota({2, 4})});
  ASSERT_FALSE(bare);
  EXPECT_TRUE(contains(bare.error().message(), "bare tensor")) << bare.error().message();
  // A number where the model takes a tensor.
  auto number = GraphSpec::learn(seq_model(), {SampleMap{{"tokens", 1.0}, {"mask", 2.0}}});
  ASSERT_FALSE(number);
  EXPECT_TRUE(contains(number.error().message(), "'tokens' (input 'tokens') is a number"))
      << number.error().message();
}

TEST(GraphSpecLearn, BareTensorBindsToASingleInput) {
  GraphBuilder b("one");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("N"), 2});
  b.output(b.relu(x), "y");
  const Graph g = *std::move(b).build();
  auto spec = GraphSpec::learn(g, {iota({1, 2}), iota({5, 2})});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->inputs[0].path, "");
  EXPECT_EQ(spec->batch_dim, "N");  // N is a batch-like name
  EXPECT_EQ(spec->outputs[0].path, "");
  EXPECT_EQ(spec->outputs[0].name, "y");
}

TEST(GraphSpecLearn, BatchAndSeqFromGraphSymbols) {
  auto spec = GraphSpec::learn(seq_model(), seq_samples());
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->batch_dim, "batch");
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{1, 2, 4}));
  EXPECT_EQ(spec->bounds.at("seq"), (DimBounds{3, 3, 7}));
  // Inputs in graph order, not leaf order (leaves: mask, tokens).
  EXPECT_EQ(spec->inputs[0].name, "tokens");
  EXPECT_EQ(spec->inputs[0].dims, (std::vector<DimSpec>{kBatch, dynamic("seq"), fixed(4)}));
  EXPECT_EQ(spec->inputs[1].dims, (std::vector<DimSpec>{kBatch, dynamic("seq")}));
}

TEST(GraphSpecLearn, BatchAndSeqFromDataAlone) {
  // No symbols: axis 0 varies as 1,2,4,2 in both tensors, axis 1 as 3,7,3,3.
  auto spec = GraphSpec::learn(seq_model(/*symbolic=*/false), seq_samples());
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->batch_dim, "batch");
  EXPECT_EQ(spec->inputs[0].dims, (std::vector<DimSpec>{kBatch, dynamic("dim0"), fixed(4)}));
  EXPECT_EQ(spec->inputs[1].dims, (std::vector<DimSpec>{kBatch, dynamic("dim0")}));
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{1, 2, 4}));
  EXPECT_EQ(spec->bounds.at("dim0"), (DimBounds{3, 3, 7}));
  EXPECT_EQ(spec->inputs[1].batch_axis, 0);
}

TEST(GraphSpecLearn, OneBatchSizeWithoutSymbolsGivesStaticDims) {
  auto spec = GraphSpec::learn(seq_model(false), {seq_sample(2, 3), seq_sample(2, 3)});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->batch_dim, "");
  EXPECT_TRUE(spec->bounds.empty());
  EXPECT_EQ(spec->inputs[0].dims, (std::vector<DimSpec>{fixed(2), fixed(3), fixed(4)}));
}

TEST(GraphSpecLearn, OnlyAnAxisOtherThanZeroVaryingIsNotTheBatch) {
  // Axis 1 varies but never sits at axis 0: a dynamic dim, no batch.
  auto spec = GraphSpec::learn(seq_model(false), {seq_sample(2, 3), seq_sample(2, 5)});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->batch_dim, "");
  EXPECT_EQ(spec->inputs[1].dims, (std::vector<DimSpec>{fixed(2), dynamic("dim0")}));
}

TEST(GraphSpecLearn, DeclarationsThatAgreeOverrideBounds) {
  auto seq = parse_dim_declaration("seq=1:16:64");
  auto batch = parse_dim_declaration("batch=1:8:32");
  ASSERT_TRUE(seq && batch);
  auto spec = GraphSpec::learn(seq_model(), seq_samples(), {*seq, *batch});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->bounds.at("seq"), (DimBounds{1, 16, 64}));
  EXPECT_EQ(spec->bounds.at("batch"), (DimBounds{1, 8, 32}));
  // On the symbol-less model the declared batch takes the learned batch axis,
  // and declaring the generated name dim0 gives it bounds.
  auto data = GraphSpec::learn(seq_model(false), seq_samples(),
                               {*batch, *parse_dim_declaration("dim0=2:4:8")});
  ASSERT_TRUE(data) << data.error().to_string();
  EXPECT_EQ(data->bounds.at("batch"), (DimBounds{1, 8, 32}));
  EXPECT_EQ(data->bounds.at("dim0"), (DimBounds{2, 4, 8}));
}

TEST(GraphSpecLearn, DeclaredBatchNamesADimThatDoesNotVary) {
  // Only axis 1 varies; declaring dim0 (axis 1) as batch is honoured.
  DimDeclaration d{"dim0", DimSpec::Kind::kBatch, {1, 4, 8}, 0};
  auto spec = GraphSpec::learn(seq_model(false), {seq_sample(2, 3), seq_sample(2, 5)}, {d});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->batch_dim, "dim0");
  EXPECT_EQ(spec->inputs[0].batch_axis, 1);
  // A declared batch name that matches nothing, with nothing varying at axis 0.
  DimDeclaration lost{"B", DimSpec::Kind::kBatch, {1, 4, 8}, 0};
  auto none = GraphSpec::learn(seq_model(false), {seq_sample(2, 3), seq_sample(2, 5)}, {lost});
  ASSERT_FALSE(none);
  EXPECT_TRUE(contains(none.error().message(),
                       "declared batch dim 'B' matches no axis: the model's dims are dim0"))
      << none.error().message();
}

TEST(GraphSpecLearn, DeclarationsThatConflictNameSampleAxisAndSize) {
  auto r = GraphSpec::learn(seq_model(), seq_samples(), {*parse_dim_declaration("seq=4:16:32")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.error().message(), "declared seq=4:16:32 conflicts with sample 0"))
      << r.error().message();
  EXPECT_TRUE(contains(r.error().message(), "'tokens' (input 'tokens') axis 1 is 3"));

  auto fixed_seq = GraphSpec::learn(seq_model(), seq_samples(), {*parse_dim_declaration("seq=3")});
  ASSERT_FALSE(fixed_seq);
  EXPECT_TRUE(contains(fixed_seq.error().message(), "declared seq=3 conflicts with sample 1"))
      << fixed_seq.error().message();

  auto unknown =
      GraphSpec::learn(seq_model(), seq_samples(), {*parse_dim_declaration("foo=1:2:3")});
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(contains(unknown.error().message(), "'foo' is not a dim"));
  EXPECT_TRUE(contains(unknown.error().message(), "batch, seq")) << unknown.error().message();

  auto twice =
      GraphSpec::learn(seq_model(), seq_samples(),
                       {*parse_dim_declaration("seq=1:4:8"), *parse_dim_declaration("seq=8")});
  ASSERT_FALSE(twice);
  EXPECT_TRUE(contains(twice.error().message(), "declared twice"));
}

TEST(GraphSpecLearn, StaticDeclarationThatAgreesFixesTheDim) {
  auto spec = GraphSpec::learn(seq_model(), {seq_sample(1, 3), seq_sample(2, 3)},
                               {*parse_dim_declaration("seq=3")});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->inputs[0].dims, (std::vector<DimSpec>{kBatch, fixed(3), fixed(4)}));
  EXPECT_FALSE(spec->bounds.count("seq"));
  // Outputs that carry the symbol become static too.
  EXPECT_EQ(spec->outputs[0].dims[1], fixed(3));
}

TEST(GraphSpecLearn, SamplesThatContradictTheGraphAreErrors) {
  // A static dim of the graph.
  auto wrong_static = GraphSpec::learn(
      seq_model(),
      {seq_sample(1, 3), SampleMap{{"tokens", iota({1, 3, 5})}, {"mask", iota({1, 3})}}});
  ASSERT_FALSE(wrong_static);
  EXPECT_TRUE(
      contains(wrong_static.error().message(),
               "'tokens' (input 'tokens') axis 2 is 5 in sample 1, but the model fixes it at 4"))
      << wrong_static.error().message();
  // One symbol with two values in one sample.
  auto split = GraphSpec::learn(seq_model(),
                                {SampleMap{{"tokens", iota({2, 3, 4})}, {"mask", iota({3, 3})}}});
  ASSERT_FALSE(split);
  EXPECT_TRUE(contains(split.error().message(), "dim 'batch' is 2 at 'tokens'"))
      << split.error().message();
  // Rank.
  auto rank =
      GraphSpec::learn(seq_model(), {SampleMap{{"tokens", iota({2, 3})}, {"mask", iota({2, 3})}}});
  ASSERT_FALSE(rank);
  EXPECT_TRUE(contains(rank.error().message(), "rank 3")) << rank.error().message();
  // Dtype.
  auto dtype = GraphSpec::learn(
      seq_model(),
      {SampleMap{{"tokens", Tensor::zeros(DType::kI64, {2, 3, 4})}, {"mask", iota({2, 3})}}});
  ASSERT_FALSE(dtype);
  EXPECT_TRUE(contains(dtype.error().message(),
                       "is i64[2,3,4] in sample 0 but the model takes f32[batch,seq,4]"))
      << dtype.error().message();
}

TEST(GraphSpecLearn, SamplesMustShareOneStructure) {
  auto r =
      GraphSpec::learn(seq_model(), {seq_sample(1, 3), SampleMap{{"tokens", iota({1, 3, 4})}}});
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message(), "'mask' is in sample 0 but not in sample 1"))
      << r.error().message();
  auto kinds = GraphSpec::learn(nested_model(), {nested_sample(1), [] {
                                                   Sample s = nested_sample(1);
                                                   *s.find("meta.scale") = Tensor::scalar(0.5f);
                                                   return s;
                                                 }()});
  ASSERT_FALSE(kinds);
  EXPECT_TRUE(contains(kinds.error().message(), "'meta.scale' is a number in sample 0"))
      << kinds.error().message();
  EXPECT_FALSE(GraphSpec::learn(seq_model(), {}));
}

TEST(GraphSpecLearn, ParseDimDeclaration) {
  auto dynamic_decl = parse_dim_declaration("seq=1:16:64");
  ASSERT_TRUE(dynamic_decl);
  EXPECT_EQ(dynamic_decl->name, "seq");
  EXPECT_EQ(dynamic_decl->kind, DimSpec::Kind::kDynamic);
  EXPECT_EQ(dynamic_decl->bounds, (DimBounds{1, 16, 64}));
  auto batch = parse_dim_declaration("batch=1:8:32");
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->kind, DimSpec::Kind::kBatch);
  auto fixed_decl = parse_dim_declaration("height=224");
  ASSERT_TRUE(fixed_decl);
  EXPECT_EQ(fixed_decl->kind, DimSpec::Kind::kStatic);
  EXPECT_EQ(fixed_decl->size, 224);
  for (const char* bad : {"seq", "=3", "seq=", "seq=a", "seq=1:2", "seq=1:2:3:4", "seq=-1",
                          "seq=4:2:8", "seq=1:9:8", "batch=0:1:2", "seq=1::3"}) {
    auto r = parse_dim_declaration(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(contains(parse_dim_declaration("seq=4:2:8").error().message(), "min <= opt <= max"));
  EXPECT_TRUE(parse_dim_declaration("seq=0:0:4"));  // an empty sequence is a size
}

}  // namespace
}  // namespace hone
