#include "hone/graph_spec.h"

#include <gtest/gtest.h>

#include <cmath>

#include "spec_test_models.h"

namespace hone {
namespace {

using namespace spec_test;

GraphSpec learned_seq() {
  auto spec = GraphSpec::learn(seq_model(), seq_samples());
  EXPECT_TRUE(spec) << spec.error().to_string();
  return *spec;
}

GraphSpec learned_nested() {
  auto spec = GraphSpec::learn(nested_model(), {nested_sample(1), nested_sample(4)});
  EXPECT_TRUE(spec) << spec.error().to_string();
  return *spec;
}

TEST(GraphSpec, FlattenPutsLeavesInGraphOrderAndScalarsAsZeroDTensors) {
  const GraphSpec spec = learned_nested();
  const Sample s = nested_sample(2, 0.25f);
  auto flat = spec.flatten(s);
  ASSERT_TRUE(flat) << flat.error().to_string();
  ASSERT_EQ(flat->size(), 4u);
  EXPECT_TRUE((*flat)[0].bitwise_equal(s.find("image")->tensor()));
  EXPECT_TRUE((*flat)[2].bitwise_equal(s.find("meta.masks[1]")->tensor()));
  EXPECT_EQ((*flat)[3].dtype(), DType::kF32);
  EXPECT_EQ((*flat)[3].rank(), 0u);
  EXPECT_EQ((*flat)[3].data<float>()[0], 0.25f);
  auto dims = spec.bind_dims(*flat);
  ASSERT_TRUE(dims);
  EXPECT_EQ(*dims, (std::map<std::string, int64_t>{{"batch", 2}}));
}

TEST(GraphSpec, FlattenErrorsNamePathAxisSizeAndBounds) {
  const GraphSpec spec = learned_seq();  // batch 1..4, seq 3..7
  auto big = spec.flatten(seq_sample(8, 3));
  ASSERT_FALSE(big);
  EXPECT_TRUE(contains(big.error().message(),
                       "'tokens' (input 'tokens') axis 0 (batch) is 8, outside the bounds 1..4"))
      << big.error().message();
  auto seq = spec.flatten(seq_sample(2, 9));
  ASSERT_FALSE(seq);
  EXPECT_TRUE(contains(seq.error().message(), "axis 1 (seq) is 9, outside the bounds 3..7"));

  auto mismatch = spec.flatten(SampleMap{{"tokens", iota({2, 3, 4})}, {"mask", iota({2, 5})}});
  ASSERT_FALSE(mismatch);
  EXPECT_TRUE(contains(mismatch.error().message(), "dim 'seq' is 3 at 'tokens'"))
      << mismatch.error().message();
  EXPECT_TRUE(contains(mismatch.error().message(), "but 5 at 'mask'"));

  auto fixed = spec.flatten(SampleMap{{"tokens", iota({2, 3, 5})}, {"mask", iota({2, 3})}});
  ASSERT_FALSE(fixed);
  EXPECT_TRUE(contains(fixed.error().message(), "axis 2 is 5 but the model fixes it at 4"));

  auto missing = spec.flatten(SampleMap{{"tokens", iota({2, 3, 4})}});
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.error().message(), "nothing at 'mask' (input 'mask')"))
      << missing.error().message();

  auto extra = spec.flatten(
      SampleMap{{"tokens", iota({2, 3, 4})}, {"mask", iota({2, 3})}, {"extra", SampleList{1.0}}});
  ASSERT_FALSE(extra);
  EXPECT_TRUE(contains(extra.error().message(), "'extra[0]' is not an input of the model"))
      << extra.error().message();

  auto container =
      spec.flatten(SampleMap{{"tokens", iota({2, 3, 4})}, {"mask", SampleMap{{"a", 1.0}}}});
  ASSERT_FALSE(container);

  auto dtype = spec.flatten(
      SampleMap{{"tokens", iota({2, 3, 4})}, {"mask", Tensor::zeros(DType::kF64, {2, 3})}});
  ASSERT_FALSE(dtype);
  EXPECT_TRUE(contains(dtype.error().message(), "is f64[2,3] but the model takes f32[batch,seq]"))
      << dtype.error().message();
}

TEST(GraphSpec, ScalarLeavesConvertOnlyToValuesOfTheDtype) {
  GraphBuilder b("k");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2});
  ValueId k = b.input("k", DType::kI32, Shape{});
  b.output(b.mul(x, b.op("Cast", {k}, {{"to", int64_t{1}}})), "y");
  const Graph g = *std::move(b).build();
  auto spec = GraphSpec::learn(g, {SampleMap{{"x", iota({1, 2})}, {"k", 3.0}}});
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->inputs[1].dtype, DType::kI32);
  auto ok = spec->flatten(SampleMap{{"x", iota({1, 2})}, {"k", -7.0}});
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ((*ok)[1].data<int32_t>()[0], -7);
  for (double bad : {0.5, 2147483648.0, std::nan("")}) {
    auto r = spec->flatten(SampleMap{{"x", iota({1, 2})}, {"k", bad}});
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(contains(r.error().message(), "not a value of i32")) << r.error().message();
  }
  EXPECT_FALSE(GraphSpec::learn(g, {SampleMap{{"x", iota({1, 2})}, {"k", 0.5}}}));
}

TEST(GraphSpec, UnflattenBuildsTheNestedOutputTree) {
  const GraphSpec spec = learned_nested();
  std::vector<Tensor> outs{iota({2, 4}), iota({2, 4}, 10), iota({2, 4}, 20)};
  auto tree = spec.unflatten_outputs(outs);
  ASSERT_TRUE(tree) << tree.error().to_string();
  EXPECT_EQ(tree->describe(), "{boxes: {wh: f32[2,4], xy: f32[2,4]}, logits: f32[2,4]}");
  EXPECT_TRUE(tree->find("boxes.wh")->tensor().bitwise_equal(outs[1]));

  auto count = spec.unflatten_outputs({iota({2, 4})});
  ASSERT_FALSE(count);
  EXPECT_TRUE(contains(count.error().message(), "got 1 output tensor(s), the model has 3"));
  auto dtype =
      spec.unflatten_outputs({iota({2, 4}), Tensor::zeros(DType::kI64, {2, 4}), iota({2, 4})});
  ASSERT_FALSE(dtype);
  EXPECT_TRUE(contains(dtype.error().message(), "'boxes.wh' (output 'boxes.wh') is i64[2,4]"))
      << dtype.error().message();
}

TEST(GraphSpec, OutputPathsCanBeOverridden) {
  GraphSpec spec = learned_seq();
  // Two plain names: a map from name to tensor.
  EXPECT_EQ(spec.outputs[0].path, "y");
  EXPECT_EQ(spec.outputs[1].path, "m");
  ASSERT_TRUE(spec.set_output_paths({"out[0]", "out[1]"}));
  auto tree = spec.unflatten_outputs({iota({1, 3, 4}), iota({1, 3})});
  ASSERT_TRUE(tree) << tree.error().to_string();
  EXPECT_EQ(tree->describe(), "{out: [f32[1,3,4], f32[1,3]]}");
  auto conflict = spec.set_output_paths({"a", "a.b"});
  ASSERT_FALSE(conflict);
  EXPECT_TRUE(contains(conflict.error().message(), "'a' and 'a.b' conflict"))
      << conflict.error().message();
  EXPECT_EQ(spec.outputs[0].path, "out[0]");  // unchanged after a failed call
  EXPECT_FALSE(spec.set_output_paths({"only_one"}));
  EXPECT_FALSE(spec.set_output_paths({"", "b"}));
}

TEST(GraphSpec, RebatchSlicesAndRepeatsCyclically) {
  const GraphSpec spec = learned_nested();
  const Sample s = nested_sample(3, 0.5f);  // image rows [0..3] [4..7] [8..11]
  auto small = spec.rebatch(s, 2);
  ASSERT_TRUE(small) << small.error().to_string();
  const Tensor& img = small->find("image")->tensor();
  EXPECT_EQ(img.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(img.data<float>()[7], 7.0f);
  EXPECT_EQ(small->find("meta.scale")->scalar(), 0.5);  // unbatched leaves kept
  EXPECT_EQ(*spec.batch_size(*small), 2);

  auto big = spec.rebatch(s, 7);
  ASSERT_TRUE(big) << big.error().to_string();
  const Tensor& m1 = big->find("meta.masks[1]")->tensor();
  ASSERT_EQ(m1.shape(), (std::vector<int64_t>{7, 4}));
  for (int64_t row = 0; row < 7; ++row)
    EXPECT_EQ(m1.data<float>()[row * 4], 200.0f + static_cast<float>((row % 3) * 4)) << row;
  EXPECT_EQ(*spec.batch_size(*big), 7);
  // The original is untouched (tensors are not written through).
  EXPECT_EQ(s.find("image")->tensor().shape()[0], 3);

  EXPECT_FALSE(spec.rebatch(s, 0));
  auto no_batch = GraphSpec::learn(seq_model(false), {seq_sample(2, 3)});
  ASSERT_TRUE(no_batch);
  auto r = no_batch->rebatch(seq_sample(2, 3), 4);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kFailedPrecondition);
}

TEST(GraphSpec, RebatchAlongAnInnerBatchAxis) {
  DimDeclaration d{"dim0", DimSpec::Kind::kBatch, {1, 4, 8}, 0};
  auto spec = GraphSpec::learn(seq_model(false), {seq_sample(2, 3), seq_sample(2, 5)}, {d});
  ASSERT_TRUE(spec) << spec.error().to_string();
  auto r = spec->rebatch(seq_sample(2, 3), 4);  // axis 1: 3 -> 4, rows 0,1,2,0
  ASSERT_TRUE(r) << r.error().to_string();
  const Tensor& mask = r->find("mask")->tensor();
  ASSERT_EQ(mask.shape(), (std::vector<int64_t>{2, 4}));
  const std::vector<float> expect{1, 2, 3, 1, 4, 5, 6, 4};
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(mask.data<float>()[i], expect[i]) << i;
}

TEST(GraphSpec, RandomSamplesStayWithinBoundsAndAreSeeded) {
  const GraphSpec spec = learned_seq();
  auto opt = spec.random_sample({}, 1);
  ASSERT_TRUE(opt) << opt.error().to_string();
  EXPECT_EQ(opt->find("tokens")->tensor().shape(), (std::vector<int64_t>{2, 3, 4}));  // opts
  auto chosen = spec.random_sample({{"batch", 4}, {"seq", 7}}, 1);
  ASSERT_TRUE(chosen);
  auto flat = spec.flatten(*chosen);
  ASSERT_TRUE(flat) << flat.error().to_string();
  EXPECT_EQ((*spec.bind_dims(*flat)), (std::map<std::string, int64_t>{{"batch", 4}, {"seq", 7}}));
  for (float v : (*flat)[0].span<float>()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  auto again = spec.random_sample({{"batch", 4}, {"seq", 7}}, 1);
  auto other = spec.random_sample({{"batch", 4}, {"seq", 7}}, 2);
  EXPECT_TRUE(again->find("mask")->tensor().bitwise_equal(chosen->find("mask")->tensor()));
  EXPECT_FALSE(other->find("mask")->tensor().bitwise_equal(chosen->find("mask")->tensor()));

  auto out = spec.random_sample({{"batch", 5}}, 1);
  ASSERT_FALSE(out);
  EXPECT_TRUE(contains(out.error().message(), "batch=5 is outside the bounds 1..4"));
  auto unknown = spec.random_sample({{"width", 5}}, 1);
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(contains(unknown.error().message(), "no dim 'width' (its dims: batch, seq)"));

  // Nested: the tree comes back with a number at meta.scale.
  auto nested = learned_nested().random_sample({{"batch", 3}}, 9);
  ASSERT_TRUE(nested) << nested.error().to_string();
  EXPECT_EQ(
      nested->describe().rfind("{image: f32[3,4], meta: {masks: [f32[3,4], f32[3,4]], scale: ", 0),
      0u)
      << nested->describe();
  EXPECT_TRUE(nested->find("meta.scale")->is_scalar());
}

TEST(GraphSpec, LearnOutputsNamesUnknownOutputAxes) {
  // The unknown-dim model: shape inference did not name the outputs.
  GraphBuilder b("u");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  b.output(b.relu(x), "y");
  Graph g = *std::move(b).build();
  g.value(g.outputs()[0]).shape.reset();
  g.value(g.outputs()[0]).dtype = DType::kUndefined;
  const std::vector<Sample> samples{iota({1, 4}), iota({3, 4})};
  auto spec = GraphSpec::learn(g, samples);
  ASSERT_TRUE(spec);
  EXPECT_FALSE(spec->outputs[0].rank_known);
  EXPECT_EQ(spec->outputs[0].batch_axis, -1);
  ASSERT_TRUE(spec->learn_outputs(samples, {{iota({1, 4})}, {iota({3, 4})}}));
  EXPECT_TRUE(spec->outputs[0].rank_known);
  EXPECT_EQ(spec->outputs[0].dtype, DType::kF32);
  EXPECT_EQ(spec->outputs[0].batch_axis, 0);
  EXPECT_EQ(spec->outputs[0].dims[0], (DimSpec{DimSpec::Kind::kBatch, 0, "batch"}));
  EXPECT_EQ(spec->outputs[0].dims[1].name, "");  // 4 never varied: stays unnamed
  auto wrong = spec->learn_outputs(samples, {{iota({1, 4})}, {iota({3, 5})}});
  EXPECT_TRUE(wrong);  // axis 1 is unnamed, so 5 is allowed; but the dtype is checked:
  auto dtype = spec->learn_outputs(samples, {{iota({1, 4})}, {Tensor::zeros(DType::kI32, {3, 4})}});
  ASSERT_FALSE(dtype);
  EXPECT_TRUE(contains(dtype.error().message(), "is i32[3,4] for sample 1"))
      << dtype.error().message();
  auto batch = spec->learn_outputs(samples, {{iota({1, 4})}, {iota({2, 4})}});
  ASSERT_FALSE(batch);  // axis 0 is the batch dim now: 2 is not the sample's 3
}

}  // namespace
}  // namespace hone
