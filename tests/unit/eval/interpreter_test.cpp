// The interpreter's own behaviour, with kernels defined here so it is tested
// apart from the real reference kernels: input checks, error context,
// freeing, captured names in subgraphs, exceptions turned into errors.
#include "eval/interpreter.h"

#include <gtest/gtest.h>

#include "hone/graph_builder.h"

namespace hone::eval {
namespace {

Result<void> add_one(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  Tensor y = x->clone();
  for (float& v : y.span<float>()) v += 1.0f;
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> add_inputs(KernelContext& ctx) {
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  Tensor y = a->clone();
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] += b->data<float>()[i];
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> throws(KernelContext&) {
  throw std::runtime_error("kaboom");
}

Result<void> refuses(KernelContext&) {
  return fail(ErrorCode::kInvalidArgument, "bad axis 7");
}

// Runs its "body" attribute on its input (a stand-in for If/Loop bodies).
Result<void> call_body(KernelContext& ctx) {
  const Graph* body = ctx.node().attr_graph("body");
  if (!body) return fail(ErrorCode::kInvalidArgument, "no body");
  HONE_TRY(auto outs, ctx.run_subgraph(*body, {*ctx.value(0)}));
  ctx.set_output_value(0, std::move(outs[0]));
  return {};
}

OpRegistry test_ops() {
  OpRegistry r;
  r.add("AddOne", add_one);
  r.add("AddInputs", add_inputs);
  r.add("Throws", throws);
  r.add("Refuses", refuses);
  r.add("CallBody", call_body);
  return r;
}

Graph chain(const std::string& op) {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 2});
  b.output(b.op(op, {b.op("AddOne", {x}, {}, "first")}, {}, "second"), "y");
  return *std::move(b).build();
}

TEST(Interpreter, RunsAChain) {
  OpRegistry ops = test_ops();
  Interpreter interp(ops);
  auto out = interp.run_tensors(chain("AddOne"), {Tensor::from<float>({1, 2}, {1, 2})});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].data<float>()[0], 3.0f);
  EXPECT_EQ((*out)[0].data<float>()[1], 4.0f);
}

TEST(Interpreter, ChecksInputsAgainstTheDeclaration) {
  OpRegistry ops = test_ops();
  Interpreter interp(ops);
  Graph g = chain("AddOne");
  auto count = interp.run_tensors(g, {});
  ASSERT_FALSE(count);
  EXPECT_NE(count.error().message().find("takes 1 inputs, got 0"), std::string::npos);
  auto rank = interp.run_tensors(g, {Tensor::zeros(DType::kF32, {2})});
  ASSERT_FALSE(rank);
  EXPECT_NE(rank.error().message().find("rank 2"), std::string::npos);
  auto dim = interp.run_tensors(g, {Tensor::zeros(DType::kF32, {2, 3})});
  ASSERT_FALSE(dim);
  EXPECT_NE(dim.error().message().find("input 0 'x' axis 1 must be 2"), std::string::npos)
      << dim.error().message();
  auto dtype = interp.run_tensors(g, {Tensor::zeros(DType::kI32, {2, 2})});
  ASSERT_FALSE(dtype);
  EXPECT_NE(dtype.error().message().find("must be f32, got i32"), std::string::npos);
}

TEST(Interpreter, SymbolMustTakeOneValueAcrossInputs) {
  GraphBuilder b("two");
  ValueId a = b.input("a", DType::kF32, Shape{Dim::symbol("n")});
  ValueId c = b.input("c", DType::kF32, Shape{Dim::symbol("n")});
  b.output(b.op("AddOne", {a}), "ya");
  b.output(b.op("AddOne", {c}), "yc");
  Graph g = *std::move(b).build();
  OpRegistry ops = test_ops();
  auto r = Interpreter(ops).run_tensors(
      g, {Tensor::zeros(DType::kF32, {2}), Tensor::zeros(DType::kF32, {3})});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("dim 'n' = 3"), std::string::npos) << r.error().message();
}

TEST(Interpreter, KernelErrorsAndExceptionsNameTheNode) {
  OpRegistry ops = test_ops();
  Interpreter interp(ops);
  auto refused = interp.run_tensors(chain("Refuses"), {Tensor::zeros(DType::kF32, {1, 2})});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().to_string().find("while running node 'second' (Refuses)"),
            std::string::npos);
  auto thrown = interp.run_tensors(chain("Throws"), {Tensor::zeros(DType::kF32, {1, 2})});
  ASSERT_FALSE(thrown);
  EXPECT_EQ(thrown.error().code(), ErrorCode::kInternal);
  EXPECT_NE(thrown.error().to_string().find("kaboom"), std::string::npos);
  auto unknown = interp.check_supported(chain("Nope"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(unknown.error().message().find("'Nope'"), std::string::npos);
}

TEST(Interpreter, SubgraphsSeeOuterNames) {
  // body(x) = x + outer "bias" value (captured by name).
  Graph body("body");
  ValueId bx = body.add_input("bx", DType::kF32, Shape{2});
  Value bias;
  bias.name = "bias";
  ValueId captured = body.add_value(bias);
  body.add_output(body.add_node("AddInputs", {bx, captured}, 1, {}, "inner")[0]);
  ASSERT_TRUE(body.validate({"bias"}));

  GraphBuilder b("outer");
  ValueId x = b.input("x", DType::kF32, Shape{2});
  b.constant("bias", Tensor::from<float>({2}, {10, 20}));
  b.output(b.op("CallBody", {x}, {{"body", std::make_shared<const Graph>(body)}}), "y");
  Graph g = *std::move(b).build();
  OpRegistry ops = test_ops();
  auto out = Interpreter(ops).run_tensors(g, {Tensor::from<float>({2}, {1, 2})});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].data<float>()[0], 11.0f);
  EXPECT_EQ((*out)[0].data<float>()[1], 22.0f);
  // check_supported walks into subgraphs.
  OpRegistry partial;
  partial.add("CallBody", call_body);
  auto r = Interpreter(partial).check_supported(g);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("in subgraph 'body'"), std::string::npos);
}

}  // namespace
}  // namespace hone::eval
