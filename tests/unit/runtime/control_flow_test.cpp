// The Executor's control flow: an If or Loop whose bodies all compile runs as
// a control stage (no fallback, the same outputs as the reference); a body
// node the compiler lacks is a fallback of the graph, named by its path, and
// require_full_compilation refuses it.
#include <gtest/gtest.h>

#include <atomic>

#include "eval/interpreter.h"
#include "graph/body_test_util.h"
#include "runtime/counting_block.h"
#include "runtime/executor.h"

namespace hone::runtime {
namespace {

using testing_runtime::OpsCompiler;

using body_test::add_if;
using body_test::captured;
using body_test::share;

void typed(Graph& g, ValueId v, DType t, Shape s) {
  g.value(v).dtype = t;
  g.value(v).shape = std::move(s);
}

// y = If(cond, then: Relu(x), else: Tanh(Add(x, 1))) + x, x f32[2]; the If
// node is named "choose", the else branch's Tanh "squash".
Graph if_graph() {
  Graph then_g("then");
  ValueId x1 = captured(then_g, "x");
  ValueId r = then_g.add_node("Relu", {x1}, 1, {}, "rect")[0];
  typed(then_g, r, DType::kF32, Shape{2});
  then_g.add_output(r);
  Graph else_g("else");
  ValueId x2 = captured(else_g, "x");
  ValueId one = else_g.add_initializer("one", Tensor::from<float>({2}, {1.0f, 1.0f}));
  ValueId a = else_g.add_node("Add", {x2, one}, 1, {}, "shift")[0];
  typed(else_g, a, DType::kF32, Shape{2});
  ValueId t = else_g.add_node("Tanh", {a}, 1, {}, "squash")[0];
  typed(else_g, t, DType::kF32, Shape{2});
  else_g.add_output(t);

  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, Shape(std::vector<Dim>{}));
  ValueId x = g.add_input("x", DType::kF32, Shape{2});
  ValueId y = add_if(g, cond, std::move(then_g), std::move(else_g), "choose");
  typed(g, y, DType::kF32, Shape{2});
  ValueId z = g.add_node("Add", {y, x}, 1, {}, "sum")[0];
  typed(g, z, DType::kF32, Shape{2});
  g.add_output(z);
  return g;
}

ExecutorOptions options(bool full = false) {
  ExecutorOptions o;
  o.partition.min_block_size = 1;
  o.partition.require_full_compilation = full;
  o.optimize = false;
  return o;
}

// Both branches' outputs on `ex` equal the reference's.
void expect_reference_outputs(const Executor& ex, const Graph& g) {
  const Tensor x = Tensor::from<float>({2}, {-1.5f, 0.25f});
  for (bool c : {true, false}) {
    const std::vector<Tensor> ins = {Tensor::scalar<bool>(c), x};
    auto got = ex.run(ins);
    ASSERT_TRUE(got) << got.error().to_string();
    auto want = eval::Interpreter().run_tensors(g, ins);
    ASSERT_TRUE(want) << want.error().to_string();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0])) << "cond " << c;
  }
}

TEST(ExecutorControlFlow, ABodyNodeTheCompilerLacksIsAFallbackNamedByItsPath) {
  const Graph g = if_graph();
  OpsCompiler c("ops", {"Relu", "Add"});
  Executor ex({&c});
  ex.set_options(options());
  auto planned = ex.plan(g);
  ASSERT_TRUE(planned) << planned.error().to_string();
  ASSERT_TRUE(ex.build(g));
  const std::vector<const Partition*> both = {&*planned, &ex.partition()};
  for (const Partition* p : both) {
    // The If and the Tanh of its else branch; nothing runs as control flow.
    EXPECT_EQ(p->fallback_count(), 2u) << p->describe(g);
    ASSERT_EQ(p->fallbacks.size(), 1u);
    EXPECT_EQ(g.node(p->fallbacks[0].first).name, "choose");
    EXPECT_NE(p->fallbacks[0].second.find("else_branch has 1 node on the fallback"),
              std::string::npos)
        << p->fallbacks[0].second;
    ASSERT_EQ(p->body_fallbacks.size(), 1u);
    EXPECT_EQ(p->body_fallbacks[0].path, "choose/else_branch/squash");
    EXPECT_EQ(p->body_fallbacks[0].op, "Tanh");
    EXPECT_EQ(p->body_fallbacks[0].reason, "ops has no Tanh");
    EXPECT_TRUE(p->controls.empty());
    EXPECT_NE(p->describe(g).find("fallback 'choose/else_branch/squash' (Tanh): ops has no Tanh"),
              std::string::npos)
        << p->describe(g);
    EXPECT_NE(p->fallback_summary(g).find("Tanh"), std::string::npos);
  }
  expect_reference_outputs(ex, g);

  Executor strict({&c});
  strict.set_options(options(true));
  auto refused = strict.build(g);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("'choose/else_branch/squash' (Tanh)"), std::string::npos)
      << refused.error().to_string();
  auto refused_plan = strict.plan(g);
  ASSERT_FALSE(refused_plan);
  EXPECT_NE(refused_plan.error().message().find("choose/else_branch/squash"), std::string::npos);
}

TEST(ExecutorControlFlow, AnIfWhoseBranchesAllCompileIsAControlStageNotAFallback) {
  const Graph g = if_graph();
  OpsCompiler c("ops", {"Relu", "Add", "Tanh"});
  Executor ex({&c});
  ex.set_options(options(true));  // require_full_compilation accepts it
  ASSERT_TRUE(ex.build(g));
  const Partition& p = ex.partition();
  EXPECT_EQ(p.fallback_count(), 0u) << p.describe(g);
  ASSERT_EQ(p.controls.size(), 1u);
  EXPECT_EQ(g.node(p.controls[0].first).name, "choose");
  EXPECT_EQ(p.controls[0].second, "branches compiled on ops");
  for (const Block& b : p.blocks) {
    EXPECT_TRUE(b.on_backend || b.control) << p.describe(g);  // no fallback stage at all
    if (b.control) EXPECT_EQ(b.nodes, std::vector<NodeId>{p.controls[0].first});
  }
  EXPECT_NE(p.describe(g).find("control 'choose' (If): branches compiled on ops"),
            std::string::npos)
      << p.describe(g);
  const int before = c.runs.load();
  expect_reference_outputs(ex, g);
  // Per run: the top block after the If, and the chosen branch's block.
  EXPECT_EQ(c.runs.load() - before, 4);
  auto planned = ex.plan(g);
  ASSERT_TRUE(planned) << planned.error().to_string();
  EXPECT_EQ(planned->fallback_count(), 0u);
  EXPECT_EQ(planned->controls.size(), 1u);
}

// A Loop of M trips carrying v f32[2]: v = Relu(v + x), x captured; the
// body's scan output stacks each v.
TEST(ExecutorControlFlow, ALoopWhoseBodyCompilesIsAControlStage) {
  Graph body("body");
  ValueId iter = body.add_input("iter", DType::kI64, Shape(std::vector<Dim>{}));
  ValueId cond = body.add_input("cond_in", DType::kBool, Shape(std::vector<Dim>{}));
  ValueId v = body.add_input("v", DType::kF32, Shape{2});
  (void)iter;
  ValueId x = captured(body, "x");
  ValueId cond_out = body.add_node("Identity", {cond}, 1, {}, "keep")[0];
  typed(body, cond_out, DType::kBool, Shape(std::vector<Dim>{}));
  ValueId sum = body.add_node("Add", {v, x}, 1, {}, "acc")[0];
  typed(body, sum, DType::kF32, Shape{2});
  ValueId next = body.add_node("Relu", {sum}, 1, {}, "clamp")[0];
  typed(body, next, DType::kF32, Shape{2});
  ValueId scan = body.add_node("Identity", {next}, 1, {}, "record")[0];
  typed(body, scan, DType::kF32, Shape{2});
  body.set_outputs({cond_out, next, scan});

  Graph g("loop");
  ValueId m = g.add_input("M", DType::kI64, Shape(std::vector<Dim>{}));
  ValueId c0 = g.add_input("cond", DType::kBool, Shape(std::vector<Dim>{}));
  ValueId v0 = g.add_input("v0", DType::kF32, Shape{2});
  g.add_input("x", DType::kF32, Shape{2});
  auto outs = g.add_node("Loop", {m, c0, v0}, 2, {{"body", share(std::move(body))}}, "repeat");
  typed(g, outs[0], DType::kF32, Shape{2});
  typed(g, outs[1], DType::kF32, Shape{Dim::symbol("trips"), 2});
  g.set_outputs(outs);

  OpsCompiler c("ops", {"Add", "Relu", "Identity"});
  Executor ex({&c});
  ex.set_options(options(true));
  ASSERT_TRUE(ex.build(g));
  const Partition& p = ex.partition();
  EXPECT_EQ(p.fallback_count(), 0u) << p.describe(g);
  ASSERT_EQ(p.controls.size(), 1u);
  EXPECT_EQ(p.controls[0].second, "body compiled on ops");
  const std::vector<Tensor> ins = {Tensor::scalar<int64_t>(3), Tensor::scalar<bool>(true),
                                   Tensor::from<float>({2}, {-4.0f, 1.0f}),
                                   Tensor::from<float>({2}, {1.5f, -0.5f})};
  const int before = c.runs.load();
  auto got = ex.run(ins);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ(c.runs.load() - before, 3);  // the body, compiled, once a trip
  auto want = eval::Interpreter().run_tensors(g, ins);
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE((*got)[i].bitwise_equal((*want)[i])) << i;
  EXPECT_EQ((*got)[1].shape(), (std::vector<int64_t>{3, 2}));
}

}  // namespace
}  // namespace hone::runtime
